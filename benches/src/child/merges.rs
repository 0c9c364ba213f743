//! The merge workloads, if asked: each in a store of its own, beside the
//! run's directory, with the merge operator its shape needs.

use std::path::Path;

use super::{Job, MIB, dir_beside, record_timed};
use crate::engines::{Engine, MergeShape, MergeStore, Sizing};
use crate::error::Result;
use crate::keys::uniform_order;
use crate::measure::allocated_bytes;
use crate::results::ChildOutput;
use crate::workloads::{self as w, Workload};

/// Runs `merge-append` (and its disk figure) and `merge-counter`.
pub(super) fn run<E: Engine>(
    job: &Job,
    n: usize,
    dir: &Path,
    sizing: &Sizing,
    out: &mut ChildOutput,
) -> Result<()> {
    let wants_disk = job.wants(Workload::MergeAppendDisk);
    let mut disk = None;
    let supported = E::supports(Workload::MergeAppend);
    record_timed(out, job, Workload::MergeAppend, supported, || {
        let (store_dir, mut store) = open_store::<E>(dir, sizing, MergeShape::Append)?;
        let ns = w::merge_append(store.as_mut(), w::append_keys(n))?;
        if wants_disk {
            store.compact()?;
            disk = Some(allocated_bytes(store_dir.path())? as f64 / MIB);
        }
        Ok(w::Timed::plain(ns))
    })?;
    match disk {
        Some(mib) => drop(out.figures.insert(Workload::MergeAppendDisk, mib)),
        None if wants_disk && !supported => out.unsupported.push(Workload::MergeAppendDisk),
        None => {}
    }
    let supported = E::supports(Workload::MergeCounter);
    record_timed(out, job, Workload::MergeCounter, supported, || {
        let (_store_dir, mut store) = open_store::<E>(dir, sizing, MergeShape::Counter)?;
        let order = uniform_order(n, job.ops.max(1), 21);
        let ns = w::merge_counter(store.as_mut(), w::counter_keys(n), &order)?;
        Ok(w::Timed::plain(ns))
    })
}

/// A new store with `shape`'s merge operator in a temporary directory
/// beside the store in `dir` (removed when the directory handle is
/// dropped).
fn open_store<E: Engine>(
    dir: &Path,
    sizing: &Sizing,
    shape: MergeShape,
) -> Result<(tempfile::TempDir, Box<dyn MergeStore>)> {
    let store_dir = dir_beside(dir, "merge")?;
    let store = E::open_merging(store_dir.path(), sizing, shape)?;
    Ok((store_dir, store))
}
