//! `compact-plain` and `filter-compact`: `compact_range` over a fresh
//! database, without and with a compaction filter.

use std::time::Instant;

use super::ordered::load_in_batches;
use super::point::{expect_count, per};
use crate::engines::Compacting;
use crate::error::Result;
use crate::keys::DataSet;

/// Loads every present key of `data` into `store` in batches (untimed),
/// then compacts its whole key range; nanoseconds per key. With
/// `filtered`, the store's filter removes the keys [`removed_by_filter`]
/// names, and the keys left are checked.
pub fn compact_all(store: &mut dyn Compacting, data: &DataSet, filtered: bool) -> Result<f64> {
    let n = data.present.len();
    load_in_batches(data, &mut |pairs| store.write_batch(pairs))?;
    let timer = Instant::now();
    store.compact_all()?;
    let ns = per(timer, n);
    let removed = match filtered {
        true => (0..n)
            .filter(|&i| removed_by_filter(data.present.get(i)))
            .count(),
        false => 0,
    };
    expect_count(
        "keys left after the compaction",
        store.count()?,
        n - removed,
    )?;
    Ok(ns)
}

/// Whether the benchmark's compaction filter removes `key`: about half the
/// keys, by the parity of their bytes' sum.
pub fn removed_by_filter(key: &[u8]) -> bool {
    key.iter().fold(0u8, |sum, b| sum.wrapping_add(*b)) % 2 == 0
}
