//! The first step of a compaction: read every record of the inputs once,
//! in log order, and list their keys in key order, each with its newest
//! record (see [`gather`]).

use std::sync::Arc;

use super::decisions::{Decisions, Reason, copy_of};
use crate::db::keyspace::KeyspaceId;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::RecordKind;
use crate::io::transient::{Transient, TransientVec};
use crate::segment::Segment;
use crate::segment::scan::{records_by_headers, scan_frames};

/// A key of the inputs: its keyspace, its bytes, and the bytes of its
/// newest record in the inputs (usually its head: what deciding it reads).
pub(super) type InputKey<'a> = (u32, &'a [u8], &'a [u8]);

/// Reads every record of the inputs: their keys, once each, sorted by
/// keyspace and key, and their range tombstones (into `out.ranges`).
/// Records of dropped keyspaces and log data (never copied: compaction
/// output holds no history) are left out.
pub(super) fn gather<'a>(
    shared: &Shared,
    inputs: &'a [Arc<Segment>],
    out: &mut Decisions<'a>,
) -> Result<TransientVec<InputKey<'a>>> {
    let keyspaces = shared.keyspaces.load();
    // Sized up front: a vector of millions of keys that grew by doubling
    // was copied by `realloc` under the malloc arena's lock, which a writer
    // freeing memory of this thread's then waited for (up to 32 MiB, 13 ms).
    // Read in order: where the maps are advised random access (a database
    // larger than memory), ask for the inputs ahead rather than fault them
    // in a page at a time.
    for segment in inputs {
        segment.will_read(0, segment.bytes().len() as u64);
    }
    let records = inputs.iter().map(|s| records_by_headers(s.bytes())).sum();
    // In blocks of their own (`io::transient`), so that their memory goes
    // back to the system when the pass ends.
    let mut keys = TransientVec::with_capacity_in(records, Transient);
    for segment in inputs {
        let scan = scan_frames(segment.bytes(), |offset, record| {
            let Some(ks) = keyspaces.get(KeyspaceId(record.keyspace)) else {
                return;
            };
            match record.kind {
                RecordKind::LogData => {}
                RecordKind::RangeDelete => out.ranges.push(copy_of(
                    ks,
                    segment,
                    Location::new(segment.id(), offset, false),
                    record,
                    Reason::RangeTombstone,
                )),
                _ => {
                    let at = offset as usize;
                    let bytes = &segment.bytes()[at..at + record.encoded_len];
                    keys.push(SortKey::of(record.keyspace, record.key, record.seq, bytes));
                }
            }
        });
        if let Some(d) = scan.damage {
            return Err(Error::corruption(segment.path(), d.offset, d.reason));
        }
    }
    // Each key's newest record sorts first among its records and is kept.
    keys.sort_unstable();
    keys.dedup_by(|later, first| later.same_key(first));
    let mut input_keys = TransientVec::with_capacity_in(keys.len(), Transient);
    input_keys.extend(keys.iter().map(|k| (k.keyspace, k.key, k.record)));
    Ok(input_keys)
}

/// A gathered key with its first 8 bytes beside it (big-endian, padded
/// with zeros), so that sorting and deduplicating compare those and read
/// the key in the mapped inputs only on a tie: a sort that read both keys
/// of every comparison jumped around the inputs, a cache miss each time.
///
/// The derived order is the order of `(keyspace, key)`: where two prefixes
/// differ, at the first differing byte both keys have that byte (and it
/// decides) or the shorter key ends there and is a prefix of the other
/// (padding is zero, the smallest byte), so it sorts first either way.
/// Records of one key come newest first (their sequence numbers,
/// reversed), so that deduplicating keeps the newest, whose bytes deciding
/// the key reads (it is usually the key's head).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SortKey<'a> {
    keyspace: u32,
    prefix: u64,
    key: &'a [u8],
    newest_first: std::cmp::Reverse<u64>,
    /// The record's bytes in its input.
    record: &'a [u8],
}

impl<'a> SortKey<'a> {
    fn of(keyspace: u32, key: &'a [u8], seq: u64, record: &'a [u8]) -> Self {
        let mut prefix = [0u8; 8];
        let n = key.len().min(8);
        prefix[..n].copy_from_slice(&key[..n]);
        SortKey {
            keyspace,
            prefix: u64::from_be_bytes(prefix),
            key,
            newest_first: std::cmp::Reverse(seq),
            record,
        }
    }

    /// Whether both are records of one key.
    fn same_key(&self, other: &Self) -> bool {
        (self.keyspace, self.prefix, self.key) == (other.keyspace, other.prefix, other.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorting by [`SortKey`] orders keys as their bytes do: every key of
    /// up to 9 bytes over 0, 1 and 255 (zeros that padding could confuse,
    /// lengths on both sides of the 8-byte prefix), in two keyspaces, and
    /// deduplicates exactly the equal ones. (Comparing the prefix as
    /// little-endian, or padding with 0xFF, fails it.)
    #[test]
    fn sort_keys_order_as_the_keys_do() {
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = keys.clone();
        for _ in 0..9 {
            last = last
                .iter()
                .flat_map(|k| [0u8, 1, 255].map(|b| [k.as_slice(), &[b]].concat()))
                .collect();
            keys.extend(last.iter().cloned());
        }
        let mut plain: Vec<(u32, &[u8])> = Vec::new();
        let mut sorted: Vec<SortKey<'_>> = Vec::new();
        for ks in [1, 0] {
            // The first 50 keys twice: the second time as newer records.
            let records = keys.iter().rev().chain(keys.iter().take(50));
            for (seq, k) in records.enumerate() {
                plain.push((ks, k));
                sorted.push(SortKey::of(ks, k, seq as u64, &[]));
            }
        }
        plain.sort_unstable();
        plain.dedup();
        sorted.sort_unstable();
        sorted.dedup_by(|later, first| later.same_key(first));
        let via_prefix: Vec<(u32, &[u8])> = sorted.iter().map(|k| (k.keyspace, k.key)).collect();
        assert_eq!(via_prefix.len(), 2 * keys.len());
        assert_eq!(via_prefix, plain);
        // Of a key's records, the newest is the one kept.
        let newest = sorted
            .iter()
            .filter(|k| k.newest_first.0 >= keys.len() as u64);
        assert_eq!(newest.count(), 2 * 50);
    }
}
