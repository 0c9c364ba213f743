//! [`OrderedCursor`]: an iterator's position in a column family with a
//! custom comparator, read through [`OrderedKeys`] at one snapshot.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use alexdb_engine::Snapshot;

use super::OrderedKeys;
use crate::Error;
use crate::db::errors::from_engine_ref;

/// Walks the keys of an [`OrderedKeys`] in the comparator's order and reads
/// each one's value at `snapshot`, skipping the keys with no version there,
/// within `[lower, upper)` by the comparator.
pub(crate) struct OrderedCursor {
    keys: Arc<OrderedKeys>,
    snapshot: Arc<Snapshot>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    /// The key and value the cursor is on.
    current: Option<(Vec<u8>, Vec<u8>)>,
    /// The error of the last point read, which ended the walk.
    error: Option<Error>,
}

/// Which way a walk goes.
#[derive(Clone, Copy)]
enum Way {
    Forward,
    Backward,
}

impl OrderedCursor {
    /// A cursor over `keys` at `snapshot`, unpositioned. `snapshot` must be
    /// taken before the cursor reads the set, so that every key written at
    /// or before it is in the set already.
    pub(crate) fn new(
        keys: Arc<OrderedKeys>,
        snapshot: Arc<Snapshot>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        Self {
            keys,
            snapshot,
            lower,
            upper,
            current: None,
            error: None,
        }
    }

    /// The key and value the cursor is on.
    pub(crate) fn current(&self) -> Option<(&[u8], &[u8])> {
        self.current
            .as_ref()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// The error that stopped the cursor, if any.
    pub(crate) fn status(&self) -> Result<(), Error> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// Positions at the first visible key.
    pub(crate) fn seek_to_first(&mut self) {
        let start = self
            .lower
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Included);
        let candidate = self.keys.next_from(start);
        self.settle(candidate, Way::Forward);
    }

    /// Positions at the last visible key.
    pub(crate) fn seek_to_last(&mut self) {
        let start = self
            .upper
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Excluded);
        let candidate = self.keys.prev_from(start);
        self.settle(candidate, Way::Backward);
    }

    /// Positions at the first visible key `>= target` (and within bounds).
    pub(crate) fn seek(&mut self, target: &[u8]) {
        if self.below_lower(target) {
            return self.seek_to_first();
        }
        self.settle(self.keys.next_from(Bound::Included(target)), Way::Forward);
    }

    /// Positions at the last visible key `<= target` (and within bounds).
    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) {
        if !self.below_upper(target) {
            return self.seek_to_last();
        }
        self.settle(self.keys.prev_from(Bound::Included(target)), Way::Backward);
    }

    /// Moves to the next visible key.
    pub(crate) fn forward(&mut self) {
        if let Some((key, _)) = self.current.take() {
            self.settle(self.keys.next_from(Bound::Excluded(&key)), Way::Forward);
        }
    }

    /// Moves to the previous visible key.
    pub(crate) fn backward(&mut self) {
        if let Some((key, _)) = self.current.take() {
            self.settle(self.keys.prev_from(Bound::Excluded(&key)), Way::Backward);
        }
    }

    /// Stops on `candidate` or the first key after it going `way` that has
    /// a version at the snapshot, or ends the walk at a bound.
    fn settle(&mut self, mut candidate: Option<Vec<u8>>, way: Way) {
        self.current = None;
        while let Some(key) = candidate {
            let in_bounds = match way {
                Way::Forward => self.below_upper(&key),
                Way::Backward => !self.below_lower(&key),
            };
            if !in_bounds {
                return;
            }
            match self.snapshot.get_pinned(self.keys.keyspace(), &key) {
                Ok(Some(value)) => {
                    self.current = Some((key, value.to_vec()));
                    return;
                }
                Ok(None) => {}
                Err(e) => {
                    self.error = Some(from_engine_ref(&e));
                    return;
                }
            }
            candidate = match way {
                Way::Forward => self.keys.next_from(Bound::Excluded(&key)),
                Way::Backward => self.keys.prev_from(Bound::Excluded(&key)),
            };
        }
    }

    /// Whether `key` sorts before the lower bound.
    fn below_lower(&self, key: &[u8]) -> bool {
        self.lower
            .as_deref()
            .is_some_and(|l| self.compare(key, l) == Ordering::Less)
    }

    /// Whether `key` sorts before the upper bound (always, without one).
    fn below_upper(&self, key: &[u8]) -> bool {
        self.upper
            .as_deref()
            .is_none_or(|u| self.compare(key, u) == Ordering::Less)
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.keys.comparator().compare_user_keys(a, b)
    }
}
