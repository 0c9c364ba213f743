//! [`StorageSnapshot`]: a read-only view of an [`super::AlexStorage`] frozen
//! at its creation.

use alexdb_engine::{Cursor, KeyRange, Snapshot};

use super::Result;
use super::alex::{KEYSPACE, collect_pairs, range_of};
use super::key::encode_key;

/// A read-only view frozen when `snapshot()` was called: later inserts and
/// deletes are invisible to it. Owned, `Send + Sync`, and cheap to keep
/// (compaction preserves the versions it sees).
#[derive(Debug)]
pub struct StorageSnapshot {
    inner: Snapshot,
}

impl StorageSnapshot {
    pub(crate) fn new(inner: Snapshot) -> Self {
        Self { inner }
    }

    /// The value `key` had when the snapshot was taken.
    pub fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .inner
            .get(KEYSPACE, &encode_key(key))?
            .map(|v| v.to_vec()))
    }

    /// Every pair with `start <= key <= end` at the snapshot, in key order.
    pub fn range_query(&self, start: i64, end: i64) -> Result<Vec<(i64, Vec<u8>)>> {
        match range_of(start, end) {
            Some(range) => collect_pairs(self.cursor(range)?),
            None => Ok(Vec::new()),
        }
    }

    /// Every pair at the snapshot, in key order.
    pub fn scan_all(&self) -> Result<Vec<(i64, Vec<u8>)>> {
        collect_pairs(self.cursor(KeyRange::default())?)
    }

    /// The number of keys with a value at the snapshot.
    pub fn count(&self) -> Result<usize> {
        let mut cursor = self.cursor(KeyRange::default())?;
        cursor.seek_to_first();
        cursor.try_fold(0, |n, item| item.map(|_| n + 1))
    }

    fn cursor(&self, range: KeyRange) -> Result<Cursor> {
        self.inner.cursor(KEYSPACE, range)
    }
}
