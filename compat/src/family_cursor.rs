//! [`FamilyCursor`]: what an iterator reads a column family through.
//!
//! A column family in bytewise order (the default) is read through the
//! engine's cursor, straight from the learned index. The learned index is
//! byte-ordered, so a column family with a custom comparator is served by
//! another ordered structure: its key set in the comparator's order, kept
//! as writes arrive (`ordered_keys/`), walked in `O(log n)` a step with a
//! point read of each key at the iterator's snapshot, and the read
//! options' bounds applied in the comparator's order. A column family with
//! user timestamps is read through a copy of the versions visible at the
//! read timestamp, sorted by the comparator when the iterator is made
//! (`O(n log n)` in the column family's size; see `timestamped/`).

use std::cmp::Ordering;

use alexdb_engine::Cursor;

use crate::Error;
use crate::comparator::Comparator;
use crate::db::errors::from_engine_ref;
use crate::ordered_keys::OrderedCursor;
use crate::timestamped::{self, VisibleEntry};

/// A positioned reader over one column family's entries.
pub(crate) struct FamilyCursor {
    order: Order,
    /// Bytes at the end of each value that are not the user's (a TTL
    /// stamp), cut off by [`FamilyCursor::item`].
    trim: usize,
}

/// How the entries are ordered.
#[expect(
    clippy::large_enum_variant,
    reason = "the engine's cursor is the common case; boxing it would allocate per iterator"
)]
enum Order {
    /// Bytewise order: the engine's cursor.
    Bytewise(Cursor),
    /// A custom comparator's order: the column family's key set.
    Keys(OrderedCursor),
    /// A comparator with user timestamps: a sorted copy.
    Sorted(SortedEntries),
}

/// A column family's entries sorted by its comparator, and a position.
pub(crate) struct SortedEntries {
    /// Key, value and user timestamp (empty without timestamps).
    entries: Vec<VisibleEntry>,
    comparator: Comparator,
    at: Option<usize>,
}

impl SortedEntries {
    /// The versions of a column family with user timestamps visible at
    /// `read_ts`, read through `cursor`, sorted by `comparator`'s user-key
    /// order and kept within `[lower, upper)` by it.
    pub(crate) fn at_timestamp(
        cursor: Cursor,
        comparator: Comparator,
        read_ts: &[u8],
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Result<Self, Error> {
        let entries = timestamped::visible(cursor, &comparator, read_ts)?;
        Ok(Self::sorted(entries, comparator, lower, upper))
    }

    fn sorted(
        mut entries: Vec<VisibleEntry>,
        comparator: Comparator,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Self {
        let cmp = &comparator;
        entries.sort_by(|a, b| cmp.compare_user_keys(&a.0, &b.0));
        entries.retain(|(key, _, _)| {
            lower.is_none_or(|l| cmp.compare_user_keys(key, l) != Ordering::Less)
                && upper.is_none_or(|u| cmp.compare_user_keys(key, u) == Ordering::Less)
        });
        Self {
            entries,
            comparator,
            at: None,
        }
    }

    fn seek(&mut self, key: &[u8]) {
        let cmp = &self.comparator;
        let index = self
            .entries
            .partition_point(|(k, _, _)| cmp.compare_user_keys(k, key) == Ordering::Less);
        self.at = (index < self.entries.len()).then_some(index);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        let cmp = &self.comparator;
        let index = self
            .entries
            .partition_point(|(k, _, _)| cmp.compare_user_keys(k, key) != Ordering::Greater);
        self.at = index.checked_sub(1);
    }

    fn current(&self) -> Option<&VisibleEntry> {
        self.at.and_then(|at| self.entries.get(at))
    }
}

impl FamilyCursor {
    /// Reads in bytewise order through the engine's cursor.
    #[inline]
    pub(crate) fn bytewise(cursor: Cursor, trim: usize) -> Self {
        Self {
            order: Order::Bytewise(cursor),
            trim,
        }
    }

    /// Reads through a column family's key set.
    pub(crate) fn ordered(cursor: OrderedCursor, trim: usize) -> Self {
        Self {
            order: Order::Keys(cursor),
            trim,
        }
    }

    /// Reads a sorted copy.
    pub(crate) fn sorted(entries: SortedEntries, trim: usize) -> Self {
        Self {
            order: Order::Sorted(entries),
            trim,
        }
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub(crate) fn valid(&self) -> bool {
        match &self.order {
            Order::Bytewise(cursor) => cursor.valid(),
            Order::Keys(cursor) => cursor.current().is_some(),
            Order::Sorted(sorted) => sorted.current().is_some(),
        }
    }

    /// The current key and value.
    #[inline]
    pub(crate) fn item(&self) -> Option<(&[u8], &[u8])> {
        Some((self.key()?, self.value()?))
    }

    /// The current key (as [`Self::item`]'s, without the value).
    #[inline]
    pub(crate) fn key(&self) -> Option<&[u8]> {
        match &self.order {
            Order::Bytewise(cursor) => cursor.key(),
            Order::Keys(cursor) => cursor.current().map(|(k, _)| k),
            Order::Sorted(sorted) => sorted.current().map(|(k, _, _)| k.as_slice()),
        }
    }

    /// The current value (as [`Self::item`]'s, without the key).
    #[inline]
    pub(crate) fn value(&self) -> Option<&[u8]> {
        let value = match &self.order {
            Order::Bytewise(cursor) => cursor.value()?,
            Order::Keys(cursor) => cursor.current().map(|(_, v)| v)?,
            Order::Sorted(sorted) => sorted.current().map(|(_, v, _)| v.as_slice())?,
        };
        Some(&value[..value.len().saturating_sub(self.trim)])
    }

    /// The current entry's user timestamp: empty in a column family
    /// without timestamps, `None` when not on an entry.
    pub(crate) fn timestamp(&self) -> Option<&[u8]> {
        match &self.order {
            Order::Bytewise(cursor) => cursor.entry().map(|_| &[][..]),
            Order::Keys(cursor) => cursor.current().map(|_| &[][..]),
            Order::Sorted(sorted) => sorted.current().map(|(_, _, ts)| ts.as_slice()),
        }
    }

    /// The error that stopped the cursor, if any.
    pub(crate) fn status(&self) -> Result<(), Error> {
        match &self.order {
            Order::Bytewise(cursor) => cursor.status().map_err(from_engine_ref),
            Order::Keys(cursor) => cursor.status(),
            Order::Sorted(_) => Ok(()),
        }
    }

    /// Positions at the first entry.
    pub(crate) fn seek_to_first(&mut self) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.seek_to_first(),
            Order::Keys(cursor) => cursor.seek_to_first(),
            Order::Sorted(sorted) => sorted.at = (!sorted.entries.is_empty()).then_some(0),
        }
    }

    /// Positions at the last entry.
    pub(crate) fn seek_to_last(&mut self) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.seek_to_last(),
            Order::Keys(cursor) => cursor.seek_to_last(),
            Order::Sorted(sorted) => sorted.at = sorted.entries.len().checked_sub(1),
        }
    }

    /// Positions at the first entry `>= key`.
    pub(crate) fn seek(&mut self, key: &[u8]) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.seek(key),
            Order::Keys(cursor) => cursor.seek(key),
            Order::Sorted(sorted) => sorted.seek(key),
        }
    }

    /// Positions at the last entry `<= key`.
    pub(crate) fn seek_for_prev(&mut self, key: &[u8]) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.seek_for_prev(key),
            Order::Keys(cursor) => cursor.seek_for_prev(key),
            Order::Sorted(sorted) => sorted.seek_for_prev(key),
        }
    }

    /// Moves to the next entry.
    #[inline]
    pub(crate) fn forward(&mut self) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.forward(),
            Order::Keys(cursor) => cursor.forward(),
            Order::Sorted(sorted) => {
                let len = sorted.entries.len();
                sorted.at = sorted.at.map(|at| at + 1).filter(|&next| next < len);
            }
        }
    }

    /// Moves to the previous entry.
    #[inline]
    pub(crate) fn backward(&mut self) {
        match &mut self.order {
            Order::Bytewise(cursor) => cursor.backward(),
            Order::Keys(cursor) => cursor.backward(),
            Order::Sorted(sorted) => sorted.at = sorted.at.and_then(|at| at.checked_sub(1)),
        }
    }
}
