//! `cmp-seek10`: `seek10` in a database ordered by a custom comparator.

use std::hint::black_box;
use std::time::Instant;

use super::point::{expect_count, per};
use super::{BATCH, NEXTS};
use crate::engines::OrderedSeek;
use crate::error::Result;
use crate::keys::DataSet;

/// Loads every present key of `data` into `store` in batches of [`BATCH`]
/// (untimed: the figure is the seeks').
pub fn load_ordered(store: &mut dyn OrderedSeek, data: &DataSet) -> Result<()> {
    load_in_batches(data, &mut |pairs| store.write_batch(pairs))
}

/// Writes one batch of key-value pairs.
pub(super) type WriteBatchFn<'a> = dyn FnMut(&[(&[u8], &[u8])]) -> Result<()> + 'a;

/// Hands every present key of `data`, with its first value, to `write` in
/// batches of [`BATCH`].
pub(super) fn load_in_batches(data: &DataSet, write: &mut WriteBatchFn<'_>) -> Result<()> {
    let n = data.present.len();
    let mut start = 0;
    while start < n {
        let end = (start + BATCH).min(n);
        let pairs: Vec<(&[u8], &[u8])> = (start..end)
            .map(|i| (data.present.get(i), data.value(i, 0)))
            .collect();
        write(&pairs)?;
        start = end;
    }
    Ok(())
}

/// Seeks to `order`'s keys and reads [`NEXTS`] more entries after each, in
/// the store's order; nanoseconds per seek (with its nexts).
pub fn cmp_seek10(store: &mut dyn OrderedSeek, data: &DataSet, order: &[u32]) -> Result<f64> {
    let mut sum = 0u64;
    let mut short = 0usize;
    let probes = data.present.gather(order);
    let start = Instant::now();
    for key in probes.iter() {
        let (t, seen) = store.seek_next(key, NEXTS)?;
        sum = sum.wrapping_add(t);
        short += usize::from(seen == 0);
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("seeks that found nothing", short, 0)?;
    Ok(ns)
}
