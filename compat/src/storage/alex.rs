//! [`AlexStorage`]: the [`Storage`] trait on an AlexDB engine database.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use alexdb_engine::{Cursor, Db, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

use super::batch::{Op, StorageBatch};
use super::key::{decode_key, encode_key};
use super::snapshot::StorageSnapshot;
use super::{Error, Result, Storage};

/// The keyspace the pairs live in.
pub(crate) const KEYSPACE: KeyspaceId = KeyspaceId(0);

/// An `i64`-keyed store on an AlexDB database directory.
///
/// Durability is the engine's: every acknowledged write survives a process
/// crash; call [`AlexStorage::sync`] to make everything written so far
/// survive a power loss as well. Share it between threads with `Arc`.
#[derive(Debug)]
pub struct AlexStorage {
    db: Db,
    /// Serializes `delete`, so its "was it there" answer is exact.
    writer: Mutex<()>,
}

impl AlexStorage {
    /// Opens the store at `path`, creating it if missing.
    pub fn new(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self {
            db: Db::open(path, Options::default())?,
            writer: Mutex::new(()),
        })
    }

    /// Flushes every acknowledged write to stable storage.
    pub fn sync(&self) -> Result<()> {
        self.db.sync()
    }

    fn apply(&self, batch: &WriteBatch) -> Result<()> {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.db.write(batch, &WriteOptions::default())
    }

    fn cursor(&self, range: KeyRange) -> Result<Cursor> {
        self.db.cursor(KEYSPACE, range)
    }
}

impl Storage for AlexStorage {
    fn insert(&self, key: i64, value: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put(KEYSPACE, &encode_key(key), value);
        self.apply(&batch)
    }

    fn insert_batch(&self, entries: Vec<(i64, Vec<u8>)>) -> Result<()> {
        let mut batch = WriteBatch::new();
        for (key, value) in &entries {
            batch.put(KEYSPACE, &encode_key(*key), value);
        }
        self.apply(&batch)
    }

    fn write_batch(&self, batch: StorageBatch) -> Result<()> {
        let mut out = WriteBatch::new();
        for op in &batch.ops {
            match op {
                Op::Insert(key, value) => out.put(KEYSPACE, &encode_key(*key), value),
                Op::Delete(key) => out.delete(KEYSPACE, &encode_key(*key)),
            }
        }
        self.apply(&out)
    }

    fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>> {
        self.db.get_copied(KEYSPACE, &encode_key(key))
    }

    fn range_query(&self, start: i64, end: i64) -> Result<Vec<(i64, Vec<u8>)>> {
        match range_of(start, end) {
            Some(range) => collect_pairs(self.cursor(range)?),
            None => Ok(Vec::new()),
        }
    }

    fn scan_all(&self) -> Result<Vec<(i64, Vec<u8>)>> {
        collect_pairs(self.cursor(KeyRange::default())?)
    }

    fn delete(&self, key: i64) -> Result<bool> {
        let encoded = encode_key(key);
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if self.db.get(KEYSPACE, &encoded)?.is_none() {
            return Ok(false);
        }
        self.db
            .delete(KEYSPACE, &encoded, &WriteOptions::default())?;
        Ok(true)
    }

    fn count(&self) -> Result<usize> {
        let n = self.db.live_keys(KEYSPACE)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn snapshot(&self) -> StorageSnapshot {
        StorageSnapshot::new(self.db.snapshot())
    }
}

/// The key range of `start..=end`, or `None` if it is empty.
pub(crate) fn range_of(start: i64, end: i64) -> Option<KeyRange> {
    if start > end {
        return None;
    }
    Some(KeyRange {
        lower: Some(encode_key(start).to_vec()),
        upper: end.checked_add(1).map(|next| encode_key(next).to_vec()),
    })
}

/// Reads every pair of a cursor's range, in order.
pub(crate) fn collect_pairs(mut cursor: Cursor) -> Result<Vec<(i64, Vec<u8>)>> {
    cursor.seek_to_first();
    cursor
        .map(|item| {
            let (key, value) = item?;
            let key = decode_key(&key).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "key of {} bytes is not an AlexStorage key (8 bytes)",
                    key.len()
                ))
            })?;
            Ok((key, value.into_vec()))
        })
        .collect()
}
