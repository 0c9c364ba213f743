//! `compact-plain` and `filter-compact`: each in a fresh store beside the
//! loaded one, the same keys, compacted without and with a filter.

use std::path::Path;

use super::{Job, dir_beside, record_timed};
use crate::engines::{Engine, Sizing};
use crate::error::Result;
use crate::keys::DataSet;
use crate::results::ChildOutput;
use crate::workloads::{self as w, Workload};

/// Runs both, if asked, in directories beside `dir`.
pub(super) fn run<E: Engine>(
    job: &Job,
    data: &DataSet,
    dir: &Path,
    sizing: &Sizing,
    out: &mut ChildOutput,
) -> Result<()> {
    for (workload, filtered) in [
        (Workload::CompactPlain, false),
        (Workload::FilterCompact, true),
    ] {
        record_timed(out, job, workload, E::supports(workload), || {
            let fresh = dir_beside(dir, "compact")?;
            let mut store = E::open_compacting(fresh.path(), sizing, filtered)?;
            let ns = w::compact_all(store.as_mut(), data, filtered)?;
            Ok(w::Timed::plain(ns))
        })?;
    }
    Ok(())
}
