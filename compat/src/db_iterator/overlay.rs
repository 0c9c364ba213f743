//! [`OverlayCursor`]: an engine cursor with a transaction's pending writes
//! laid over it, so that a transaction's iterators see its own writes: a
//! pending put shadows or adds a key, a pending delete hides one.
//!
//! With no pending writes it is the engine cursor, stepped directly. With
//! some, every step re-seeks the engine cursor next to the current key and
//! takes the nearer of the two sources, the pending write winning a tie.

use std::collections::BTreeMap;

use crate::Error;
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
    current: Option<Current>,
    error: Option<Error>,
}

impl OverlayCursor {
    #[inline]
    pub(crate) fn new(base: FamilyCursor, pending: Vec<(Vec<u8>, PendingWrite)>) -> Self {
        Self {
            base,
            pending,
            current: None,
            error: None,
        }
    }

    /// Adds `newer` pending writes (sorted by key), which win over the
    /// pending writes already laid for the same key, and unpositions.
    pub(crate) fn lay_over(&mut self, newer: Vec<(Vec<u8>, PendingWrite)>) {
        let mut merged: BTreeMap<Vec<u8>, PendingWrite> =
            std::mem::take(&mut self.pending).into_iter().collect();
        merged.extend(newer);
        self.pending = merged.into_iter().collect();
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
        let i = self.pending.partition_point(|(k, _)| k.as_slice() < key);
        self.settle_forward(i);
    }

    pub(crate) fn seek_for_prev(&mut self, key: &[u8]) {
        self.error = None;
        self.base.seek_for_prev(key);
        let i = self.pending.partition_point(|(k, _)| k.as_slice() <= key);
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
        if self.base_key() == Some(key.as_slice()) {
            self.base.forward();
        }
        let i = self.pending.partition_point(|(k, _)| *k <= key);
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
        if self.base_key() == Some(key.as_slice()) {
            self.base.backward();
        }
        let i = self.pending.partition_point(|(k, _)| *k < key);
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
            let base_key = self.base_key();
            if base_key.is_some_and(|b| b < key.as_slice()) {
                self.current = Some(Current::Base);
                return;
            }
            let shadows_base = base_key == Some(key.as_slice());
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
            let base_key = self.base_key();
            if base_key.is_some_and(|b| b > key.as_slice()) {
                self.current = Some(Current::Base);
                return;
            }
            let shadows_base = base_key == Some(key.as_slice());
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
