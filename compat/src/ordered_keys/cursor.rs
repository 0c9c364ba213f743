//! [`OrderedCursor`]: an iterator's position in a column family with a
//! custom comparator, read through [`OrderedKeys`] at one snapshot.
//!
//! The cursor reads ahead: a seek searches the set once and walks a window
//! of the keys after it (16, then 4 times more per refill up to 256), and
//! reads their values at the snapshot in one batched lookup, whose index
//! descents overlap. Steps then pop from what was read; a step the other
//! way reads a new window from the current key.
//!
//! Keys read ahead stay right while the set changes: a key added after the
//! cursor's snapshot has no version the snapshot sees, and a key swept out
//! meanwhile had none either (`sweep.rs`).
//!
//! Of the forms of one class (keys the comparator calls equal), at most
//! one has a version at any snapshot (`db/ordered_writes.rs`): the cursor
//! yields it, and a step leaves the whole class.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use alexdb_engine::Snapshot;

use super::{OrderedKeys, Start, Way};
use crate::Error;
use crate::db::errors::from_engine_ref;

/// Keys in the first window after a seek.
const FIRST_WINDOW: usize = 16;
/// The largest window.
const MAX_WINDOW: usize = 256;

/// Walks the keys of an [`OrderedKeys`] in the comparator's order and reads
/// each one's value at `snapshot`, skipping the keys with no version there,
/// within `[lower, upper)` by the comparator.
pub(crate) struct OrderedCursor {
    keys: Arc<OrderedKeys>,
    snapshot: Arc<Snapshot>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    /// The visible entries read ahead going `way`, the current one first.
    ahead: VecDeque<(Vec<u8>, Vec<u8>)>,
    way: Way,
    /// Whether nothing lies beyond the last of `ahead` going `way` (the
    /// set or a bound ended the walk).
    ended: bool,
    /// Keys the next read-ahead walks.
    window: usize,
    /// Where the last read-ahead's walk stopped: the next one goes on
    /// from there.
    walked: Start<Vec<u8>>,
    /// The error of a read, which ended the walk.
    error: Option<Error>,
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
            ahead: VecDeque::new(),
            way: Way::Forward,
            ended: true,
            window: FIRST_WINDOW,
            walked: Start::Edge,
            error: None,
        }
    }

    /// The key and value the cursor is on.
    pub(crate) fn current(&self) -> Option<(&[u8], &[u8])> {
        self.ahead
            .front()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// The error that stopped the cursor, if any.
    pub(crate) fn status(&self) -> Result<(), Error> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// Positions at the first visible key.
    pub(crate) fn seek_to_first(&mut self) {
        let start = self.lower.clone().map_or(Start::Edge, Start::Including);
        self.restart(start, Way::Forward);
    }

    /// Positions at the last visible key.
    pub(crate) fn seek_to_last(&mut self) {
        let start = self.upper.clone().map_or(Start::Edge, Start::Excluding);
        self.restart(start, Way::Backward);
    }

    /// Positions at the first visible key `>= target` (and within bounds).
    pub(crate) fn seek(&mut self, target: &[u8]) {
        if self.below_lower(target) {
            return self.seek_to_first();
        }
        self.restart(Start::Including(target.to_vec()), Way::Forward);
    }

    /// Positions at the last visible key `<= target` (and within bounds).
    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) {
        if !self.below_upper(target) {
            return self.seek_to_last();
        }
        self.restart(Start::Including(target.to_vec()), Way::Backward);
    }

    /// Moves to the next visible key.
    pub(crate) fn forward(&mut self) {
        self.step(Way::Forward);
    }

    /// Moves to the previous visible key.
    pub(crate) fn backward(&mut self) {
        self.step(Way::Backward);
    }

    /// Moves one visible key `way` from the current one.
    fn step(&mut self, way: Way) {
        if self.way != way {
            if let Some((key, _)) = self.ahead.pop_front() {
                self.restart(Start::Excluding(key), way);
            }
            return;
        }
        if self.ahead.pop_front().is_none() {
            return;
        }
        if self.ahead.is_empty() && !self.ended {
            self.read_ahead(self.walked.clone());
        }
    }

    /// Drops what was read ahead and reads from `from` going `way`.
    fn restart(&mut self, from: Start<Vec<u8>>, way: Way) {
        self.ahead.clear();
        self.way = way;
        self.ended = false;
        self.window = FIRST_WINDOW;
        self.read_ahead(from);
    }

    /// Reads windows from `from` on until one holds a visible key or the
    /// walk ends.
    fn read_ahead(&mut self, mut from: Start<Vec<u8>>) {
        while self.ahead.is_empty() && !self.ended {
            let mut keys = Vec::with_capacity(self.window);
            self.keys
                .walk(from.as_ref(), self.way, self.window, &mut keys);
            self.ended = keys.len() < self.window;
            self.cut_at_bound(&mut keys);
            self.window = (self.window * 4).min(MAX_WINDOW);
            match keys.last() {
                Some(last) => from = Start::After(last.clone()),
                None => self.ended = true,
            }
            self.walked = from.clone();
            self.read_values(keys);
        }
    }

    /// Drops the keys past the bound ahead (and ends the walk there).
    fn cut_at_bound(&mut self, keys: &mut Vec<Vec<u8>>) {
        let past = keys.iter().position(|k| match self.way {
            Way::Forward => !self.below_upper(k),
            Way::Backward => self.below_lower(k),
        });
        if let Some(past) = past {
            keys.truncate(past);
            self.ended = true;
        }
    }

    /// Reads `keys` at the snapshot, moving the visible ones into `ahead`
    /// with their values.
    fn read_values(&mut self, keys: Vec<Vec<u8>>) {
        let mut values: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let error = &mut self.error;
        let read =
            self.snapshot
                .get_many_with(self.keys.keyspace(), &refs, |at, found| match found {
                    Ok(value) => values[at] = value.map(<[u8]>::to_vec),
                    Err(e) => *error = error.take().or(Some(from_engine_ref(&e))),
                });
        if let Err(e) = read {
            self.error = Some(from_engine_ref(&e));
        }
        if self.error.is_some() {
            self.ahead.clear();
            self.ended = true;
            return;
        }
        let visible = keys.into_iter().zip(values);
        for (key, value) in visible.filter_map(|(key, value)| Some((key, value?))) {
            self.push_visible(key, value);
        }
    }

    /// Adds a visible entry to `ahead`, unless it is a second visible form
    /// of the class before it (a database written before forms were kept
    /// apart may hold two; the first in the walk's order stands).
    fn push_visible(&mut self, key: Vec<u8>, value: Vec<u8>) {
        let same_class = self
            .ahead
            .back()
            .is_some_and(|(last, _)| self.compare(last, &key) == Ordering::Equal);
        if !same_class {
            self.ahead.push_back((key, value));
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
