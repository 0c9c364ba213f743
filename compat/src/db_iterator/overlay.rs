//! [`OverlayCursor`]: an engine cursor with a transaction's pending writes
//! laid over it, so that a transaction's iterators see its own writes: a
//! pending put shadows or adds a key, a pending delete hides one.
//!
//! With no pending writes it is the engine cursor, stepped directly. With
//! some, every step re-seeks the engine cursor next to the current key and
//! takes the nearer of the two sources, the pending write winning a tie.
//! In a column family with a custom comparator, "nearer" and "tie" are the
//! comparator's: a pending write of one form of a key shadows the base's
//! entry under another form the comparator calls equal.

use std::cmp::Ordering;

use crate::Error;
use crate::comparator::Comparator;
use crate::family_cursor::FamilyCursor;
use crate::write_batch::PendingWrite;

/// Where the current entry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Current {
    Base,
    Pending(usize),
}

/// An engine cursor merged with sorted pending writes (already limited to
/// the cursor's bounds).
pub(crate) struct OverlayCursor {
    base: FamilyCursor,
    pending: Vec<(Vec<u8>, PendingWrite)>,
    /// The column family's comparator, if it has one of its own (the base
    /// cursor and the pending writes are in its order).
    order: Option<Comparator>,
    current: Option<Current>,
    error: Option<Error>,
}

impl OverlayCursor {
    /// `base` with `pending` writes (sorted in `order`, or by bytes, one
    /// per key) laid over it.
    #[inline]
    pub(crate) fn new(
        base: FamilyCursor,
        pending: Vec<(Vec<u8>, PendingWrite)>,
        order: Option<Comparator>,
    ) -> Self {
        Self {
            base,
            pending,
            order,
            current: None,
            error: None,
        }
    }

    /// Compares two keys in the column family's order.
    #[inline]
    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.order {
            None => a.cmp(b),
            Some(order) => order.compare_user_keys(a, b),
        }
    }

    /// Adds `newer` pending writes (sorted as the others), which win over
    /// the pending writes already laid for the same key, and unpositions.
    pub(crate) fn lay_over(&mut self, newer: Vec<(Vec<u8>, PendingWrite)>) {
        let mut merged = std::mem::take(&mut self.pending);
        merged.extend(newer);
        // Stable: of one key, the newer write comes last and is kept.
        merged.sort_by(|(a, _), (b, _)| self.cmp(a, b));
        let mut kept: Vec<(Vec<u8>, PendingWrite)> = Vec::with_capacity(merged.len());
        for entry in merged {
            match kept.last_mut() {
                Some(last) if self.cmp(&last.0, &entry.0).is_eq() => *last = entry,
                _ => kept.push(entry),
            }
        }
        self.pending = kept;
        self.current = None;
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub(crate) fn valid(&self) -> bool {
        self.current.is_some()
    }

    pub(crate) fn status(&self) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.base.status()
    }

    /// The current key and value.
    #[inline]
    pub(crate) fn item(&self) -> Option<(&[u8], &[u8])> {
        match self.current? {
            Current::Base => self.base.item(),
            Current::Pending(i) => self.pending_item(i),
        }
    }

    /// The current key (as [`Self::item`]'s, without the value).
    #[inline]
    pub(crate) fn key(&self) -> Option<&[u8]> {
        match self.current? {
            Current::Base => self.base.key(),
            Current::Pending(i) => self.pending_item(i).map(|(key, _)| key),
        }
    }

    /// The current value (as [`Self::item`]'s, without the key).
    #[inline]
    pub(crate) fn value(&self) -> Option<&[u8]> {
        match self.current? {
            Current::Base => self.base.value(),
            Current::Pending(i) => self.pending_item(i).map(|(_, value)| value),
        }
    }

    /// The key and value of pending write `i`, if it is one with a value.
    fn pending_item(&self, i: usize) -> Option<(&[u8], &[u8])> {
        match &self.pending[i] {
            (key, PendingWrite::Put(value) | PendingWrite::Merge(Some(value))) => {
                Some((key, value))
            }
            _ => None,
        }
    }

    /// The current entry's user timestamp: the base entry's, or empty for
    /// a pending write.
    pub(crate) fn timestamp(&self) -> Option<&[u8]> {
        match self.current? {
            Current::Base => self.base.timestamp(),
            Current::Pending(_) => Some(&[]),
        }
    }

    pub(crate) fn seek_to_first(&mut self) {
        self.error = None;
        self.base.seek_to_first();
        self.settle_forward(0);
    }

    pub(crate) fn seek_to_last(&mut self) {
        self.error = None;
        self.base.seek_to_last();
        self.settle_backward(self.pending.len());
    }

    pub(crate) fn seek(&mut self, key: &[u8]) {
        self.error = None;
        self.base.seek(key);
        let i = self
            .pending
            .partition_point(|(k, _)| self.cmp(k, key).is_lt());
        self.settle_forward(i);
    }

    pub(crate) fn seek_for_prev(&mut self, key: &[u8]) {
        self.error = None;
        self.base.seek_for_prev(key);
        let i = self
            .pending
            .partition_point(|(k, _)| self.cmp(k, key).is_le());
        self.settle_backward(i);
    }

    /// Moves to the next entry.
    #[inline]
    pub(crate) fn forward(&mut self) {
        if self.pending.is_empty() {
            self.base.forward();
            self.current = self.base.valid().then_some(Current::Base);
            return;
        }
        self.forward_merged();
    }

    /// [`Self::forward`] with pending writes: re-seeks the base next to the
    /// current key and takes the nearer source.
    fn forward_merged(&mut self) {
        let Some(key) = self.item().map(|(k, _)| k.to_vec()) else {
            return;
        };
        self.base.seek(&key);
        if self.base_key().is_some_and(|b| self.cmp(b, &key).is_eq()) {
            self.base.forward();
        }
        let i = self
            .pending
            .partition_point(|(k, _)| self.cmp(k, &key).is_le());
        self.settle_forward(i);
    }

    /// Moves to the previous entry.
    #[inline]
    pub(crate) fn backward(&mut self) {
        if self.pending.is_empty() {
            self.base.backward();
            self.current = self.base.valid().then_some(Current::Base);
            return;
        }
        self.backward_merged();
    }

    /// [`Self::backward`] with pending writes: re-seeks the base next to the
    /// current key and takes the nearer source.
    fn backward_merged(&mut self) {
        let Some(key) = self.item().map(|(k, _)| k.to_vec()) else {
            return;
        };
        self.base.seek_for_prev(&key);
        if self.base_key().is_some_and(|b| self.cmp(b, &key).is_eq()) {
            self.base.backward();
        }
        let i = self
            .pending
            .partition_point(|(k, _)| self.cmp(k, &key).is_lt());
        self.settle_backward(i);
    }

    fn base_key(&self) -> Option<&[u8]> {
        self.base.item().map(|(key, _)| key)
    }

    /// Lands on the smaller of the base cursor's key and `pending[i]`,
    /// skipping keys a pending delete hides.
    fn settle_forward(&mut self, mut i: usize) {
        loop {
            let Some((key, write)) = self.pending.get(i) else {
                self.current = self.base.valid().then_some(Current::Base);
                return;
            };
            let base_order = self.base_key().map(|b| self.cmp(b, key));
            if base_order == Some(Ordering::Less) {
                self.current = Some(Current::Base);
                return;
            }
            let shadows_base = base_order == Some(Ordering::Equal);
            match write {
                PendingWrite::Put(_) | PendingWrite::Merge(Some(_)) => {
                    self.current = Some(Current::Pending(i));
                    return;
                }
                PendingWrite::Delete => {
                    if shadows_base {
                        self.base.forward();
                    }
                    i += 1;
                }
                PendingWrite::Merge(None) => return self.fail_on_merge(),
            }
        }
    }

    /// Lands on the larger of the base cursor's key and `pending[i - 1]`,
    /// skipping keys a pending delete hides.
    fn settle_backward(&mut self, mut i: usize) {
        loop {
            let Some((key, write)) = i.checked_sub(1).and_then(|j| self.pending.get(j)) else {
                self.current = self.base.valid().then_some(Current::Base);
                return;
            };
            let base_order = self.base_key().map(|b| self.cmp(b, key));
            if base_order == Some(Ordering::Greater) {
                self.current = Some(Current::Base);
                return;
            }
            let shadows_base = base_order == Some(Ordering::Equal);
            match write {
                PendingWrite::Put(_) | PendingWrite::Merge(Some(_)) => {
                    self.current = Some(Current::Pending(i - 1));
                    return;
                }
                PendingWrite::Delete => {
                    if shadows_base {
                        self.base.backward();
                    }
                    i -= 1;
                }
                PendingWrite::Merge(None) => return self.fail_on_merge(),
            }
        }
    }

    fn fail_on_merge(&mut self) {
        self.current = None;
        self.error = Some(merge_unsupported());
    }
}

/// The error for reading a key with merge operands pending in a transaction.
pub(crate) fn merge_unsupported() -> Error {
    Error::not_supported(
        "AlexDB cannot yet read a key with merge operands pending in a transaction",
    )
}
