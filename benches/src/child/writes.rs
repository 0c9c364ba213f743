//! The workloads that write, run after the reads: each leaves the data for
//! the next (overwrites keep the key set; `hot-range` adds keys;
//! `delete-range` removes some).

use super::{Steps, record, record_timed};
use crate::engines::Engine;
use crate::error::Result;
use crate::keys::uniform_order;
use crate::measure::allocated_bytes;
use crate::workloads::{self as w, RangePlan, Workload};

/// Writer threads of `writers-4`.
const WRITERS: usize = 4;

impl Steps<'_> {
    /// Runs the writing workloads the job asks for and the engine supports;
    /// returns the engine, reopened if a workload needed another handle.
    pub(super) fn writes<E: Engine>(&mut self, mut engine: E) -> Result<E> {
        let (data, n) = (self.data, self.data.present.len());
        let ops = self.job.ops.min(n).max(1);
        let threads = engine.shared().is_some();
        let (reads, writes) = (uniform_order(n, ops, 13), uniform_order(n, ops, 14));
        self.timed::<E>(Workload::GetW, threads, || {
            let handle = engine.shared().ok_or("no shared handle")?;
            w::get_with_writer(handle, data, &reads, &writes)
        })?;
        self.timed::<E>(Workload::Mixed, true, || {
            w::mixed(&mut engine, data, &uniform_order(n, ops, 5))
        })?;
        let engine = self.optimistic_txn(engine, (ops / 4).max(1))?;
        self.writers(&engine, ops)?;
        let mut engine = engine;
        self.timed::<E>(Workload::ScanCompacted, true, || {
            engine.compact()?;
            w::scan(&mut engine, n).map(w::Timed::plain)
        })?;
        self.flood(&mut engine)?;
        self.hot_range(&mut engine, (n / 4).min(ops).max(1))?;
        self.delete_range(&mut engine)?;
        Ok(engine)
    }

    /// `flood` and the disk it leaves, if asked and supported. Every loaded
    /// key is live then (the workloads before it only overwrite).
    fn flood<E: Engine>(&mut self, engine: &mut E) -> Result<()> {
        if !self.runs::<E>(Workload::Flood) {
            return Ok(());
        }
        let per_key = w::flood(engine, self.data).map_err(|e| e.context(Workload::Flood.name()))?;
        self.out.figures.insert(Workload::Flood, per_key);
        let (dir, live_bytes) = (self.dir, self.sizing.data_bytes().max(1) as f64);
        record(&mut self.out, self.job, Workload::FloodDisk, || {
            Ok(allocated_bytes(dir)? as f64 / live_bytes)
        })
    }

    /// Runs `measure` as `workload` if asked and supported by `E` (and
    /// `possible`).
    fn timed<E: Engine>(
        &mut self,
        workload: Workload,
        possible: bool,
        measure: impl FnOnce() -> Result<w::Timed>,
    ) -> Result<()> {
        let supported = possible && E::supports(workload);
        record_timed(&mut self.out, self.job, workload, supported, measure)
    }

    /// `optimistic-txn`: closes `engine`, opens the store for transactions,
    /// runs `count` of them, closes it and reopens the engine.
    fn optimistic_txn<E: Engine>(&mut self, engine: E, count: usize) -> Result<E> {
        if !self.job.wants(Workload::OptimisticTxn) || !E::supports(Workload::OptimisticTxn) {
            return Ok(engine);
        }
        let n = self.data.present.len();
        engine.close()?;
        let (dir, sizing, data) = (self.dir, self.sizing, self.data);
        self.timed::<E>(Workload::OptimisticTxn, true, || {
            let mut store = E::open_transactional(dir, &sizing)?;
            let timed = w::read_modify_write(store.as_mut(), data, &uniform_order(n, count, 6));
            store.close()?;
            timed
        })?;
        E::open(dir, &sizing).map_err(|e| e.context("reopen after optimistic-txn"))
    }

    /// `writers-1` then `writers-4`: the same number of overwrites from one
    /// thread, then from four.
    fn writers<E: Engine>(&mut self, engine: &E, ops: usize) -> Result<()> {
        let (data, n) = (self.data, self.data.present.len());
        let threads = engine.shared().is_some();
        let one = [uniform_order(n, ops, 20)];
        let four: Vec<Vec<u32>> = (0..WRITERS as u64)
            .map(|t| uniform_order(n, ops / WRITERS, 21 + t))
            .collect();
        for (workload, orders) in [
            (Workload::Writers1, &one[..]),
            (Workload::Writers4, &four[..]),
        ] {
            self.timed::<E>(workload, threads, || {
                let handle = engine.shared().ok_or("no shared handle")?;
                w::writers(handle, data, orders)
            })?;
        }
        Ok(())
    }

    /// `hot-range`: `count` new keys just above the key at three quarters
    /// of the key order (clear of the ranges `delete-range` deletes).
    fn hot_range<E: Engine>(&mut self, engine: &mut E, count: usize) -> Result<()> {
        let data = self.data;
        let mut added = 0;
        self.timed::<E>(Workload::HotRange, true, || {
            let sorted = data.sorted_order();
            let anchor = sorted[sorted.len() * 3 / 4] as usize;
            let hot = data.hot_keys(anchor, count);
            added = hot.len();
            w::hot_range(engine, data, &hot)
        })?;
        self.added = added;
        Ok(())
    }

    /// `delete-range` and `delete-range-10`.
    fn delete_range<E: Engine>(&mut self, engine: &mut E) -> Result<()> {
        if !self.runs::<E>(Workload::DeleteRange) {
            return Ok(());
        }
        let data = self.data;
        let sorted = data.sorted_order();
        let plan = RangePlan::new(sorted.len());
        let (large, small) = w::delete_ranges(engine, data, &sorted, plan, &mut self.gone)
            .map_err(|e| e.context(Workload::DeleteRange.name()))?;
        for (workload, timed) in [
            (Workload::DeleteRange, large),
            (Workload::DeleteRange10, small),
        ] {
            self.out.figures.insert(workload, timed.per_op);
        }
        Ok(())
    }
}
