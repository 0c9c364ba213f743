//! [`OrderedKeys`]: the keys of a column family with a custom comparator,
//! kept in the comparator's order as writes arrive.
//!
//! The engine's learned index is byte-ordered, so a column family whose
//! options set a comparator (`Options::set_comparator`) also gets one of
//! these: a concurrent skip list (`crossbeam-skiplist`) of every key that
//! may have a visible version, ordered by the comparator. It is built at
//! open (and when the family is created) from the engine's cursor, one
//! insert per key (`O(n log n)`), and every write path adds its keys to it
//! before the engine makes the write visible (`Core::apply`: puts, merges,
//! write batches, transaction commits and ingested files all go through
//! it). An iterator ([`OrderedCursor`]) takes an engine snapshot, walks the
//! set in the comparator's order and reads each key's value at the snapshot
//! by a point lookup, skipping keys with no visible version.
//!
//! Deleted keys stay in the set until a sweep (`sweep.rs`) finds them with
//! no version that any live view can see. A range delete is one engine
//! range delete in the comparator's order, the family's keyspace ordering
//! its range deletes by the comparator (`range.rs`).
//!
//! Keys the comparator calls equal are one key, as in RocksDB. The set
//! holds each byte form written (`key.rs`), and writes keep at most one
//! form of a class visible at any sequence number: a write of one form
//! deletes the others in the same batch (`db/ordered_writes.rs`). A read
//! that misses its key's bytes therefore looks for the other forms of its
//! class ([`OrderedKeys::aliases`]) and reads them at one snapshot; an
//! iterator yields the visible form of each class.

mod cursor;
mod key;
mod range;
mod sweep;

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};

use alexdb_engine::{Db, KeyRange, KeyspaceId};
use crossbeam_epoch as epoch;
use crossbeam_skiplist::base::SkipList;

pub(crate) use cursor::OrderedCursor;
use key::{OrderedKey, Place};

use crate::Error;
use crate::comparator::Comparator;
use crate::db::errors::{IntoRocks, from_engine_ref};

/// A column family's keys in its comparator's order.
pub(crate) struct OrderedKeys {
    /// The keys (the skip list's base form: a walk pins the epoch once
    /// for its window and steps without touching reference counts).
    keys: SkipList<OrderedKey, ()>,
    order: Arc<Comparator>,
    ks: KeyspaceId,
    /// Deletes (point deletes, and the keys range deletes covered) applied
    /// since the last sweep: what decides when the next one runs.
    deletes_since_sweep: AtomicU64,
    /// Set while a sweep runs, so that only one runs at a time.
    sweeping: AtomicBool,
}

impl std::fmt::Debug for OrderedKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderedKeys")
            .field("comparator", &self.order.name)
            .field("keys", &self.keys.len())
            .finish_non_exhaustive()
    }
}

impl OrderedKeys {
    /// The keys of keyspace `ks` of `engine`, ordered by `comparator`.
    pub(crate) fn build(
        engine: &Db,
        ks: KeyspaceId,
        comparator: Comparator,
    ) -> Result<Self, Error> {
        let keys = Self {
            keys: SkipList::new(epoch::default_collector().clone()),
            order: Arc::new(comparator),
            ks,
            deletes_since_sweep: AtomicU64::new(0),
            sweeping: AtomicBool::new(false),
        };
        keys.refill(engine)?;
        Ok(keys)
    }

    /// Adds every key the engine holds now (a secondary instance calls it
    /// after catching up with its primary, whose writes it did not see).
    pub(crate) fn refill(&self, engine: &Db) -> Result<(), Error> {
        let mut cursor = engine.cursor(self.ks, KeyRange::default()).rocks()?;
        cursor.seek_to_first();
        while let Some(key) = cursor.key() {
            self.insert(key);
            cursor.forward();
        }
        cursor.status().map_err(from_engine_ref)
    }

    /// The keyspace the keys are in.
    pub(crate) fn keyspace(&self) -> KeyspaceId {
        self.ks
    }

    /// The comparator.
    pub(crate) fn comparator(&self) -> &Comparator {
        &self.order
    }

    /// Adds `key` (nothing if it is there already).
    fn insert(&self, key: &[u8]) {
        let guard = &epoch::pin();
        self.keys
            .get_or_insert(self.probe(key, Place::Form), (), guard)
            .release(guard);
    }

    /// Adds `key` and returns the other forms of its class in the set (the
    /// keys the comparator calls equal to it, with other bytes). Of two
    /// writers adding new forms of one class at once, at least one sees
    /// the other's: each adds before it looks, with a full fence between
    /// (a writer whose form was there already needs no fence: the other
    /// sees it).
    pub(crate) fn add(&self, key: &[u8]) -> Vec<Vec<u8>> {
        let guard = &epoch::pin();
        let mut added = false;
        self.keys
            .get_or_insert_with(self.probe(key, Place::Form), || added = true, guard)
            .release(guard);
        if added {
            fence(Ordering::SeqCst);
        }
        self.aliases(key)
    }

    /// The forms of `key`'s class in the set other than `key` itself:
    /// usually none, found with one search.
    pub(crate) fn aliases(&self, key: &[u8]) -> Vec<Vec<u8>> {
        let probe = self.probe(key, Place::First);
        let guard = &epoch::pin();
        let mut entry = self.keys.lower_bound(Bound::Included(&probe), guard);
        let mut forms = Vec::new();
        while let Some(at) = entry {
            let form = at.key().bytes();
            if form != key {
                if self.order.compare_user_keys(form, key) != std::cmp::Ordering::Equal {
                    break;
                }
                forms.push(form.to_vec());
            }
            entry = at.next();
        }
        forms
    }

    /// Appends to `out` up to `max` keys in the comparator's order (each
    /// form of a class in turn), from `from` on going `way`. One search,
    /// then one step per key.
    pub(crate) fn walk(&self, from: Start<&[u8]>, way: Way, max: usize, out: &mut Vec<Vec<u8>>) {
        let guard = &epoch::pin();
        let probe =
            start_probe(from, way).map(|(k, place, inclusive)| (self.probe(k, place), inclusive));
        let bound = match &probe {
            None => Bound::Unbounded,
            Some((p, true)) => Bound::Included(p),
            Some((p, false)) => Bound::Excluded(p),
        };
        let mut entry = match way {
            Way::Forward => self.keys.lower_bound(bound, guard),
            Way::Backward => self.keys.upper_bound(bound, guard),
        };
        let end = out.len() + max;
        while let Some(at) = entry {
            out.push(at.key().bytes().to_vec());
            if out.len() >= end {
                return;
            }
            entry = match way {
                Way::Forward => at.next(),
                Way::Backward => at.prev(),
            };
        }
    }

    /// Removes `key`.
    fn remove(&self, key: &[u8]) {
        let guard = &epoch::pin();
        if let Some(entry) = self.keys.remove(&self.probe(key, Place::Form), guard) {
            entry.release(guard);
        }
    }

    /// A lookup key for `key` at `place` in its class.
    fn probe(&self, key: &[u8], place: Place) -> OrderedKey {
        OrderedKey::new(key, &self.order, place)
    }
}

/// Which way a walk goes, in the comparator's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// Ascending.
    Forward,
    /// Descending.
    Backward,
}

/// Where a walk starts, in its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start<K> {
    /// At the set's start (going forward) or end (going backward).
    Edge,
    /// At the class of a key: its first form going forward, its last
    /// going backward.
    Including(K),
    /// Past the class of a key.
    Excluding(K),
    /// Past one stored form (where the last walk stopped): the class's
    /// other forms beyond it come next.
    After(K),
}

/// The key, place in its class and inclusiveness of the bound a walk from
/// `from` going `way` searches from (none from the set's edge).
fn start_probe(from: Start<&[u8]>, way: Way) -> Option<(&[u8], Place, bool)> {
    let (first, last) = match way {
        Way::Forward => (Place::First, Place::Last),
        Way::Backward => (Place::Last, Place::First),
    };
    match from {
        Start::Edge => None,
        Start::Including(k) => Some((k, first, true)),
        Start::Excluding(k) => Some((k, last, false)),
        Start::After(k) => Some((k, Place::Form, false)),
    }
}

impl Start<Vec<u8>> {
    /// The start with its key borrowed.
    pub(crate) fn as_ref(&self) -> Start<&[u8]> {
        match self {
            Start::Edge => Start::Edge,
            Start::Including(k) => Start::Including(k),
            Start::Excluding(k) => Start::Excluding(k),
            Start::After(k) => Start::After(k),
        }
    }
}
