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
//! no version that any live view can see. A range delete is expanded into
//! point deletes of the keys the set holds in the range, in the
//! comparator's order (`range.rs`).

mod cursor;
mod key;
mod range;
mod sweep;

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use alexdb_engine::{Db, KeyRange, KeyspaceId};
use crossbeam_epoch as epoch;
use crossbeam_skiplist::base::SkipList;

pub(crate) use cursor::OrderedCursor;
use key::OrderedKey;

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
    /// Deletes (point deletes, range deletes expanded) applied since the
    /// last sweep: what decides when the next one runs.
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
            self.add(key);
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
    pub(crate) fn add(&self, key: &[u8]) {
        let guard = &epoch::pin();
        self.keys
            .get_or_insert(self.probe(key), (), guard)
            .release(guard);
    }

    /// Appends to `out` up to `max` keys in the comparator's order, from
    /// the first at or after `from` (going [`Way::Forward`]) or the last at
    /// or before it (going [`Way::Backward`]); `Unbounded` starts at the
    /// set's start or end. One search, then one step per key.
    pub(crate) fn walk(&self, from: Bound<&[u8]>, way: Way, max: usize, out: &mut Vec<Vec<u8>>) {
        let probe = map_bound(from, |k| self.probe(k));
        let guard = &epoch::pin();
        let mut entry = match way {
            Way::Forward => self.keys.lower_bound(probe.as_ref(), guard),
            Way::Backward => self.keys.upper_bound(probe.as_ref(), guard),
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
        if let Some(entry) = self.keys.remove(&self.probe(key), guard) {
            entry.release(guard);
        }
    }

    /// A lookup key for `key`.
    fn probe(&self, key: &[u8]) -> OrderedKey {
        OrderedKey::new(key, &self.order)
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

/// `bound` with its key mapped by `f`.
fn map_bound<T, U>(bound: Bound<T>, f: impl FnOnce(T) -> U) -> Bound<U> {
    match bound {
        Bound::Included(k) => Bound::Included(f(k)),
        Bound::Excluded(k) => Bound::Excluded(f(k)),
        Bound::Unbounded => Bound::Unbounded,
    }
}
