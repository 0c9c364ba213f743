//! Write-conflict checks: "was this key written after sequence number S?",
//! answered from the index head of the key (its newest version), for
//! optimistic transactions (checked under the writer lock, atomically with
//! the commit) and for snapshot validation under a key lock.
//!
//! The newest version of a key is found in O(1) index work: the index maps
//! each key to its newest record, whose header carries its sequence number.
//! A key the index does not hold has no version at all; compaction only
//! forgets a key whose newest version is a delete that every registered
//! snapshot already sees, so a caller that keeps a snapshot at or below
//! `since_seq` registered never misses a conflict.

use crate::db::keyspace::{Keyspace, KeyspaceId};
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::mvcc::{Attempt, Relocations, Retry, through_loaded_table};
use crate::segment::SegmentTable;
use crate::segment::resolver::TableResolver;

/// A key whose writers a transaction must not have missed: a conflict is
/// any version of `key` in `keyspace` with a sequence number above
/// `since_seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchedKey<'k> {
    /// The keyspace of the key.
    pub keyspace: KeyspaceId,
    /// The key.
    pub key: &'k [u8],
    /// The sequence number the transaction read at (or first touched the key at).
    pub since_seq: u64,
}

/// Fails with [`Error::Conflict`] naming the first watched key written after
/// its `since_seq`. Keys of keyspaces that no longer exist are skipped.
pub(crate) fn check(shared: &Shared, watched: &[WatchedKey<'_>]) -> Result<()> {
    if watched.is_empty() {
        return Ok(());
    }
    let keyspaces = shared.keyspaces.load();
    for w in watched {
        let Some(ks) = keyspaces.get(w.keyspace) else {
            continue;
        };
        // A range delete covering the key is a write of it too.
        let ranged = ks
            .range_tombstones()
            .covering(w.key, 0, u64::MAX)
            .map(|t| t.seq);
        if let Some(newest_seq) = newest_seq(shared, ks, w.key)?.max(ranged)
            && newest_seq > w.since_seq
        {
            return Err(Error::Conflict {
                keyspace: w.keyspace.0,
                key: w.key.to_vec(),
                since_seq: w.since_seq,
                newest_seq,
            });
        }
    }
    Ok(())
}

/// The sequence number of the newest version (put or delete) of `key`, or
/// `None` if the index holds no version of it.
pub(crate) fn newest_seq(shared: &Shared, ks: &Keyspace, key: &[u8]) -> Result<Option<u64>> {
    let found = through_loaded_table(&shared.segments, Retry::Patiently, |table, guard| {
        let resolver = TableResolver::new(&table);
        let candidate = ks.index.get_candidate(key, &resolver, guard);
        if resolver.missed() {
            return Ok(Attempt::Again);
        }
        let Some(head) = candidate else {
            return Ok(Attempt::Done(None));
        };
        let relocations = shared.relocations.load();
        Ok(
            match head_seq(shared, &table, &relocations, Location(head), key)? {
                Some(found) => Attempt::Done(found),
                None => Attempt::Again,
            },
        )
    })?;
    found.ok_or_else(|| {
        Error::TryAgain(format!(
            "conflict check in keyspace {:?} kept racing compaction; was the keyspace dropped?",
            ks.name()
        ))
    })
}

/// The sequence number of the record at `loc` if it holds `key`:
/// `Some(None)` if it holds another key (the index candidate was not
/// `key`), `None` if the location moved out of the loaded table (retry).
fn head_seq(
    shared: &Shared,
    table: &SegmentTable,
    relocations: &Relocations,
    mut loc: Location,
    key: &[u8],
) -> Result<Option<Option<u64>>> {
    let verify = shared.options.verify_checksums;
    loop {
        let Some(segment) = table.get(loc.segment()) else {
            match relocations.get(loc) {
                Some(moved) if moved.is_none() => return Ok(Some(None)),
                Some(moved) => {
                    loc = moved;
                    continue;
                }
                None => return Ok(None),
            }
        };
        let record = segment.record_at(loc.offset(), verify)?;
        if record.key != key {
            return Ok(Some(None));
        }
        return Ok(Some(Some(record.seq)));
    }
}
