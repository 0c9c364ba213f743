//! Applying range deletes to the index: once no snapshot is older than a
//! range tombstone, the keys it covers whose newest version is older than it
//! can be forgotten. Their index entries are removed (so scans stop walking
//! them and the key count drops), their records are counted as dead bytes
//! (so the segments holding them get compacted), and the tombstone is marked
//! applied, which lets compaction drop it later.
//!
//! The walk goes in chunks, each under the writer lock for a bounded time, so
//! a range over millions of keys never stalls writers for long.

use std::ops::Bound;

use crossbeam_epoch as epoch;

use crate::index::ScanDirection;
use crate::keyspace::Keyspace;
use crate::location::Location;
use crate::log_writer::account_dead;
use crate::range_tombstones::RangeTombstone;
use crate::read::TableResolver;
use crate::shared::Shared;

/// Index entries examined per hold of the writer lock.
const CHUNK: usize = 512;

/// Applies every range tombstone that no live snapshot predates.
pub(crate) fn apply_range_tombstones(shared: &Shared) {
    let keyspaces = shared.keyspaces.load_full();
    for ks in keyspaces.iter() {
        let pending: Vec<_> = ks
            .range_tombstones()
            .iter()
            .filter(|t| !t.is_applied())
            .cloned()
            .collect();
        for t in pending {
            if applicable(shared, &t) {
                apply_one(shared, ks, &t);
                t.mark_applied();
            }
        }
    }
}

/// Whether every reader, now and later, sees `t`.
fn applicable(shared: &Shared, t: &RangeTombstone) -> bool {
    t.seq <= shared.visible() && shared.snapshots.oldest_seq().is_none_or(|s| s >= t.seq)
}

/// Removes the index entries `t` covers, a chunk at a time.
fn apply_one(shared: &Shared, ks: &Keyspace, t: &RangeTombstone) {
    let mut from = Bound::Included(t.start.clone());
    while let Some(next) = apply_chunk(shared, ks, t, &from) {
        from = Bound::Excluded(next);
    }
}

/// One chunk from `from`, under the writer lock; returns the key to go on
/// after, or `None` at the end of the range.
fn apply_chunk(
    shared: &Shared,
    ks: &Keyspace,
    t: &RangeTombstone,
    from: &Bound<Vec<u8>>,
) -> Option<Vec<u8>> {
    let _writer = shared.lock_writer();
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    let guard = epoch::pin();
    let bound = match from {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    };
    let mut payloads = Vec::with_capacity(CHUNK);
    ks.index.collect(
        bound,
        ScanDirection::Forward,
        CHUNK,
        &resolver,
        &guard,
        &mut payloads,
    );
    let mut last = None;
    for &p in &payloads {
        let loc = Location(p);
        let Some(record) = table
            .get(loc.segment())
            .and_then(|s| s.record_at(loc.offset(), false).ok())
        else {
            // Under the writer lock every head is in the table; stop safely.
            return None;
        };
        if record.key >= t.end.as_slice() {
            return None;
        }
        let key = record.key.to_vec();
        if record.seq < t.seq {
            ks.index.remove(&key, &resolver);
            if !loc.is_tombstone() {
                // A delete was counted dead when it was written.
                account_dead(&table, loc);
            }
            ks.adjust_live_keys(!loc.is_tombstone(), false);
        }
        last = Some(key);
    }
    if payloads.len() < CHUNK {
        return None;
    }
    last
}
