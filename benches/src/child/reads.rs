//! The read workloads, run first, on the loaded data.

use super::{Job, dir_beside, record_timed};
use std::path::Path;

use crate::engines::{Engine, Sizing};
use crate::error::Result;
use crate::keys::{DataSet, uniform_order, zipf_order};
use crate::results::ChildOutput;
use crate::workloads::{self as w, Workload};

/// Runs the read workloads the job asks for and the engine supports.
pub(super) fn run<E: Engine>(
    engine: &mut E,
    job: &Job,
    data: &DataSet,
    out: &mut ChildOutput,
) -> Result<()> {
    let n = data.present.len();
    let ops = job.ops.min(n).max(1);
    let seeks = (ops / 4).max(1);
    let mut run = |workload: Workload, f: &mut dyn FnMut(&mut E) -> Result<w::Timed>| {
        record_timed(out, job, workload, E::supports(workload), || f(engine))
    };
    run(Workload::Get, &mut |e| {
        w::get_present(e, data, &uniform_order(n, ops, 1), false)
    })?;
    run(Workload::GetPinned, &mut |e| {
        w::get_present(e, data, &uniform_order(n, ops, 2), true)
    })?;
    run(Workload::GetAbsent, &mut |e| {
        w::get_absent(e, data, &uniform_order(n, ops, 3))
    })?;
    run(Workload::GetZipf, &mut |e| {
        w::get_present(e, data, &zipf_order(n, ops), false)
    })?;
    run(Workload::MultiGet, &mut |e| {
        w::multi_get(e, data, &uniform_order(n, ops, 7))
    })?;
    let readers = [uniform_order(n, ops, 11), uniform_order(n, ops, 12)];
    let shared = engine.shared().is_some();
    record_timed(
        out,
        job,
        Workload::Get2r,
        shared && E::supports(Workload::Get2r),
        || {
            let handle = engine.shared().ok_or("no shared handle")?;
            w::get_two_readers(handle, data, &readers)
        },
    )?;
    let mut run = |workload: Workload, f: &mut dyn FnMut(&mut E) -> Result<f64>| {
        record_timed(out, job, workload, E::supports(workload), || {
            f(engine).map(w::Timed::plain)
        })
    };
    run(Workload::Seek10, &mut |e| {
        w::seek10(e, data, &uniform_order(n, seeks, 4))
    })?;
    run(Workload::Scan, &mut |e| w::scan(e, n))
}

/// `cmp-seek10`, if asked: loads the keys into a second store ordered by a
/// reverse comparator, in a directory beside `dir`, and seeks in it.
pub(super) fn cmp_seek10<E: Engine>(
    job: &Job,
    data: &DataSet,
    dir: &Path,
    sizing: &Sizing,
    out: &mut ChildOutput,
) -> Result<()> {
    let n = data.present.len();
    let seeks = (job.ops.min(n).max(1) / 4).max(1);
    let supported = E::supports(Workload::CmpSeek10);
    record_timed(out, job, Workload::CmpSeek10, supported, || {
        let ordered_dir = dir_beside(dir, "cmp")?;
        let mut store = E::open_reverse_ordered(ordered_dir.path(), sizing)?;
        w::load_ordered(store.as_mut(), data)?;
        let ns = w::cmp_seek10(store.as_mut(), data, &uniform_order(n, seeks, 4))?;
        Ok(w::Timed::plain(ns))
    })
}
