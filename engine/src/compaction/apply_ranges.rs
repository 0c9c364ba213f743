//! Applying range deletes to the index: once no snapshot is older than a
//! range tombstone, the keys it covers whose newest version is older than it
//! can be forgotten. Their index entries are removed (so scans stop walking
//! them and the key count drops), their records are counted as dead bytes
//! (so the segments holding them get compacted), and the tombstone is marked
//! applied, which lets compaction drop it later.
//!
//! Writers are not held: an entry is removed only if it still holds the
//! payload the walk read (checked under the index's own write lock), so a
//! key written again meanwhile keeps its new version. Compaction runs one
//! pass at a time, so no entry moves under the walk; a new segment created
//! by a rotation during the walk holds only writes newer than the
//! tombstone, and the walk reloads the segment table to read past them.
//!
//! In a keyspace whose range deletes follow an order of its own (see
//! [`crate::mvcc::key_order`]), a range's keys lie anywhere in the index's
//! byte order: one walk of the whole keyspace applies every tombstone
//! ready at once.

use std::ops::Bound;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::format::location::Location;
use crate::index::ScanDirection;
use crate::mvcc::range_tombstones::{RangeTombstone, RangeTombstones};
use crate::mvcc::{Attempt, Retry, through_loaded_table};
use crate::segment::resolver::TableResolver;

/// Index entries examined per hold of the writer lock.
const CHUNK: usize = 512;

/// Applies every range tombstone that no live snapshot predates.
pub(crate) fn apply_range_tombstones(shared: &Shared) {
    let keyspaces = shared.keyspaces.load_full();
    for ks in keyspaces.iter() {
        let pending: Vec<_> = ks
            .range_tombstones()
            .iter()
            .filter(|t| !t.is_applied() && applicable(shared, t))
            .cloned()
            .collect();
        if pending.is_empty() {
            continue;
        }
        if !ks.range_order().is_bytewise() {
            let list = RangeTombstones::new(ks.range_order().clone(), pending.clone());
            if walk(shared, ks, Bound::Unbounded, &Walk::Everywhere(&list)) {
                pending.iter().for_each(|t| t.mark_applied());
            }
            continue;
        }
        for t in pending {
            let from = Bound::Included(t.start.clone());
            if walk(shared, ks, from, &Walk::Range(&t)) {
                t.mark_applied();
            }
        }
    }
}

/// What a walk applies.
enum Walk<'a> {
    /// One tombstone of a keyspace in the bytes' order: the walk ends at
    /// its end.
    Range(&'a RangeTombstone),
    /// These tombstones, in the keyspace's own order: the walk covers the
    /// keyspace.
    Everywhere(&'a RangeTombstones),
}

impl Walk<'_> {
    /// Whether the walk is past its last key at `key`.
    fn past_end(&self, key: &[u8]) -> bool {
        match self {
            Walk::Range(t) => key >= t.end.as_slice(),
            Walk::Everywhere(_) => false,
        }
    }

    /// Whether the version of `key` at `seq` is deleted.
    fn deletes(&self, key: &[u8], seq: u64) -> bool {
        match self {
            Walk::Range(t) => seq < t.seq,
            Walk::Everywhere(list) => list.hides(key, seq, u64::MAX),
        }
    }
}

/// Whether every reader, now and later, sees `t`.
fn applicable(shared: &Shared, t: &RangeTombstone) -> bool {
    t.seq <= shared.visible() && shared.snapshots.oldest_seq().is_none_or(|s| s >= t.seq)
}

/// Removes the index entries `what` deletes from `from` on, a chunk at a
/// time. Returns whether it got through (else the tombstones stay
/// unapplied and a later pass tries again).
fn walk(shared: &Shared, ks: &Keyspace, mut from: Bound<Vec<u8>>, what: &Walk<'_>) -> bool {
    loop {
        match apply_chunk(shared, ks, what, &from) {
            Step::Next(key) => from = Bound::Excluded(key),
            Step::Done => return true,
            Step::Abandoned => return false,
        }
    }
}

/// Where a chunk left the walk.
enum Step {
    /// Go on after this key.
    Next(Vec<u8>),
    /// The range is done.
    Done,
    /// An entry could not be read; stop without marking the tombstone.
    Abandoned,
}

/// Table loads a chunk tries before it gives up on an entry it cannot read.
const RESOLVE_TRIES: u32 = 3;

/// One chunk from `from`.
fn apply_chunk(shared: &Shared, ks: &Keyspace, what: &Walk<'_>, from: &Bound<Vec<u8>>) -> Step {
    let bound = match from {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    };
    let mut payloads = Vec::with_capacity(CHUNK);
    // A rotation may add a segment the loaded table lacks: load it again.
    let collected = through_loaded_table(
        &shared.segments,
        Retry::AtMost(RESOLVE_TRIES),
        |table, guard| {
            let resolver = TableResolver::new(&table);
            payloads.clear();
            let scan = ScanDirection::Forward;
            ks.index
                .collect(bound, scan, CHUNK, &resolver, guard, &mut payloads);
            Ok(match resolver.missed() {
                true => Attempt::Again,
                false => Attempt::Done(table),
            })
        },
    );
    let Ok(Some(table)) = collected else {
        return Step::Abandoned;
    };
    let resolver = TableResolver::new(&table);
    let mut last = None;
    for &p in &payloads {
        let loc = Location(p);
        let Some(record) = table
            .get(loc.segment())
            .and_then(|s| s.record_at(loc.offset(), false).ok())
        else {
            return Step::Abandoned;
        };
        if what.past_end(record.key) {
            return Step::Done;
        }
        let key = record.key.to_vec();
        if what.deletes(&key, record.seq) && ks.index.remove_if(&key, p, &resolver) {
            if !loc.is_tombstone() {
                // A delete was counted dead when it was written.
                table.account_dead(loc);
            }
            ks.adjust_live_keys(!loc.is_tombstone(), false);
        }
        last = Some(key);
    }
    match (payloads.len() < CHUNK, last) {
        (false, Some(key)) => Step::Next(key),
        _ => Step::Done,
    }
}
