//! `delete-heavy`, run last: delete half, compact, close, reopen; the disk
//! and index that remain for the live data, and the reopen time.

use std::time::Instant;

use super::{Steps, ms, record, record_index_bytes};
use crate::engines::Engine;
use crate::error::Result;
use crate::measure::allocated_bytes;
use crate::workloads::{self as w, Workload};

impl Steps<'_> {
    /// Runs `delete-heavy` if asked and supported, and closes the engine.
    pub(super) fn lifecycle<E: Engine>(&mut self, mut engine: E) -> Result<()> {
        if !self.runs::<E>(Workload::DeleteHeavy) {
            return engine.close();
        }
        let (job, data, dir) = (self.job, self.data, self.dir);
        let per_key = w::delete_heavy(&mut engine, data, &mut self.gone)
            .map_err(|e| e.context(Workload::DeleteHeavy.name()))?;
        self.out.figures.insert(Workload::DeleteHeavy, per_key);
        engine
            .compact()
            .map_err(|e| e.context("compaction after delete-heavy"))?;
        engine.close()?;
        let start = Instant::now();
        let engine = E::open(dir, &self.sizing).map_err(|e| e.context("delete-heavy reopen"))?;
        let out = &mut self.out;
        record(out, job, Workload::DeleteHeavyReopen, || Ok(ms(start)))?;
        let live = self.gone.iter().filter(|g| !**g).count() + self.added;
        let live_bytes =
            self.sizing.data_bytes() as f64 / self.sizing.keys.max(1) as f64 * live as f64;
        record(out, job, Workload::DeleteHeavyDisk, || {
            Ok(allocated_bytes(dir)? as f64 / live_bytes.max(1.0))
        })?;
        record_index_bytes(out, job, &engine, Workload::DeleteHeavyIndex, live)?;
        engine.close()
    }
}
