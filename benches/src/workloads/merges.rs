//! `merge-append` and `merge-counter`: merges through each engine's merge
//! operator, into a store of their own.
//!
//! `merge-append` grows values by appending operands (the shape that made
//! a merge cost its whole value when merges were resolved on write);
//! `merge-counter` adds small integers to counters (a small value each
//! merge folds into). Both check every value at the end.

use std::hint::black_box;
use std::time::Instant;

use super::point::{expect_count, per};
use crate::engines::MergeStore;
use crate::error::{BenchError, Result};
use crate::rng::Xorshift;

/// Operands merged into each key by `merge-append`.
pub const APPEND_OPERANDS: usize = 2_000;
/// Bytes of each `merge-append` operand.
pub const APPEND_OPERAND_BYTES: usize = 64;

/// Keys `merge-append` grows for a run of `n` keys: 200 at 1M keys, in
/// proportion below, at least 2.
pub fn append_keys(n: usize) -> usize {
    (n / 5_000).clamp(2, 200)
}

/// Counters `merge-counter` adds to for a run of `n` keys: one per 100
/// keys, between 1 and 10,000.
pub fn counter_keys(n: usize) -> usize {
    (n / 100).clamp(1, 10_000)
}

/// The key of merge target `i`.
fn merge_key(i: usize) -> [u8; 12] {
    let mut key = *b"merge:000000";
    key[6..].copy_from_slice(format!("{:06}", i % 1_000_000).as_bytes());
    key
}

/// The operand `round` appends to key `k`: 64 pseudo-random bytes (so no
/// engine's compression shrinks the values), a function of both.
fn append_operand(k: usize, round: usize) -> [u8; APPEND_OPERAND_BYTES] {
    let mut rng = Xorshift::new(((k as u64) << 32 | round as u64).wrapping_mul(0x9E37_79B9) + 1);
    let mut operand = [0u8; APPEND_OPERAND_BYTES];
    for chunk in operand.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    operand
}

/// Appends [`APPEND_OPERANDS`] operands to each of `keys` keys, one round
/// over the keys at a time (so each key's stack grows between the others'
/// merges); nanoseconds per merge. Checks every value afterwards.
pub fn merge_append(store: &mut dyn MergeStore, keys: usize) -> Result<f64> {
    let start = Instant::now();
    for round in 0..APPEND_OPERANDS {
        for k in 0..keys {
            store.merge(&merge_key(k), &append_operand(k, round))?;
        }
    }
    let ns = per(start, keys * APPEND_OPERANDS);
    for k in (0..keys).step_by((keys / 16).max(1)) {
        check_appended(store, k)?;
    }
    Ok(ns)
}

/// Whether key `k` holds every operand appended to it, in order.
fn check_appended(store: &mut dyn MergeStore, k: usize) -> Result<()> {
    let value = store
        .get(&merge_key(k))?
        .ok_or_else(|| BenchError(format!("merged key {k} is missing")))?;
    expect_count(
        "bytes of an appended value",
        value.len(),
        APPEND_OPERANDS * APPEND_OPERAND_BYTES,
    )?;
    let wrong = value
        .chunks(APPEND_OPERAND_BYTES)
        .enumerate()
        .filter(|&(round, chunk)| chunk != append_operand(k, round))
        .count();
    expect_count("operands out of place", wrong, 0)
}

/// Adds 1 to the counter `order[i] % keys` for each `i`; nanoseconds per
/// merge. Checks that the counters add up to the merges afterwards.
pub fn merge_counter(store: &mut dyn MergeStore, keys: usize, order: &[u32]) -> Result<f64> {
    let one = 1u64.to_le_bytes();
    let start = Instant::now();
    for &i in order {
        store.merge(&merge_key(i as usize % keys), &one)?;
    }
    let ns = per(start, order.len());
    let mut total = 0u64;
    for k in 0..keys {
        if let Some(v) = store.get(&merge_key(k))? {
            let bytes: [u8; 8] = v
                .as_slice()
                .try_into()
                .map_err(|_| BenchError(format!("counter {k} holds {} bytes", v.len())))?;
            total += u64::from_le_bytes(bytes);
        }
    }
    expect_count("merges the counters add up to", total as usize, order.len())?;
    black_box(total);
    Ok(ns)
}

/// The appending merge operator both workloads' stores are given for
/// `merge-append`: the existing value, then every operand, oldest first.
pub fn append_all<'a>(
    existing: Option<&[u8]>,
    operands: impl Iterator<Item = &'a [u8]>,
) -> Vec<u8> {
    let mut value = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands {
        value.extend_from_slice(operand);
    }
    value
}

/// The counter operator for `merge-counter`: the sum of the existing value
/// and every operand, as 8-byte little-endian integers (`None` for an
/// operand of another length: a failed merge).
pub fn add_all<'a>(
    existing: Option<&[u8]>,
    operands: impl Iterator<Item = &'a [u8]>,
) -> Option<Vec<u8>> {
    let read = |v: &[u8]| v.try_into().ok().map(u64::from_le_bytes);
    let mut sum = match existing {
        Some(v) => read(v)?,
        None => 0,
    };
    for operand in operands {
        sum = sum.wrapping_add(read(operand)?);
    }
    Some(sum.to_le_bytes().to_vec())
}
