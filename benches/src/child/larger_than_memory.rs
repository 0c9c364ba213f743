//! The children of `--larger-than-memory`: one loads the store and
//! closes it; the other waits until the runner has moved it into a memory
//! group, then opens the store and runs the timed reads.

use std::io::BufRead;
use std::path::Path;

use super::{Job, MIB, check_background, record_timed};
use crate::engines::{Engine, Sizing};
use crate::error::{BenchError, Result};
use crate::keys::{DataSet, uniform_order};
use crate::ltm::GO;
use crate::measure::{anon_rss_bytes, disk_read_bytes, peak_rss_bytes, reset_peak_rss};
use crate::results::ChildOutput;
use crate::workloads::{self as w, Workload};

/// Loads `data` into a store in `dir`, waits for its background
/// compactions and closes it; records no figure.
pub(super) fn load<E: Engine>(data: &DataSet, dir: &Path, sizing: &Sizing) -> Result<ChildOutput> {
    let mut engine = E::open(dir, sizing)?;
    w::load(&mut engine, data).map_err(|e| e.context("load"))?;
    engine.settle().map_err(|e| e.context("settle"))?;
    check_background(&engine, "the load")?;
    engine.close()?;
    Ok(ChildOutput::default())
}

/// Waits for the runner's go, opens the store in `dir` and runs the
/// `ltm-*` workloads the engine supports.
pub(super) fn read<E: Engine>(
    job: &Job,
    data: &DataSet,
    dir: &Path,
    sizing: &Sizing,
) -> Result<ChildOutput> {
    wait_for_go()?;
    reset_peak_rss()?;
    let anon_before = anon_rss_bytes()?;
    let mut engine = E::open(dir, sizing).map_err(|e| e.context("open"))?;
    let mut out = ChildOutput::default();
    let opened = anon_rss_bytes()?.saturating_sub(anon_before);
    let per_key = opened as f64 / data.present.len().max(1) as f64;
    out.figures.insert(Workload::LtmOpenAnon, per_key);
    gets(&mut engine, job, data, &mut out)?;
    let n = data.present.len();
    let seeks = (job.ops.min(n).max(1) / 4).max(1);
    record_timed(
        &mut out,
        job,
        Workload::LtmSeek10,
        E::supports(Workload::Seek10),
        || w::seek10(&mut engine, data, &uniform_order(n, seeks, 22)).map(w::Timed::plain),
    )?;
    record_timed(
        &mut out,
        job,
        Workload::LtmScan,
        E::supports(Workload::Scan),
        || w::scan(&mut engine, n).map(w::Timed::plain),
    )?;
    check_background(&engine, "the reads")?;
    engine.close()?;
    let peak = peak_rss_bytes()? as f64 / MIB;
    out.figures.insert(Workload::LtmPeakRss, peak);
    Ok(out)
}

/// `ltm-get-cold` with the disk bytes it read (`ltm-read-bytes`), then
/// `ltm-get` over the same keys.
fn gets<E: Engine>(engine: &mut E, job: &Job, data: &DataSet, out: &mut ChildOutput) -> Result<()> {
    let n = data.present.len();
    let order = uniform_order(n, job.ops.min(n).max(1), 21);
    let supported = E::supports(Workload::Get);
    let mut read = None;
    record_timed(out, job, Workload::LtmGetCold, supported, || {
        let before = disk_read_bytes()?;
        let timed = w::get_present(engine, data, &order, false)?;
        read = Some(disk_read_bytes()?.saturating_sub(before));
        Ok(timed)
    })?;
    if let Some(bytes) = read {
        let per_get = bytes as f64 / order.len() as f64;
        out.figures.insert(Workload::LtmReadBytes, per_get);
    }
    record_timed(out, job, Workload::LtmGet, supported, || {
        w::get_present(engine, data, &order, false)
    })
}

/// Blocks until the runner writes [`GO`] on standard input.
fn wait_for_go() -> Result<()> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    match line.trim() {
        GO => Ok(()),
        other => Err(BenchError(format!(
            "expected `{GO}` from the runner once in the memory group, got {other:?}"
        ))),
    }
}
