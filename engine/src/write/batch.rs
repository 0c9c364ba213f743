//! Write batches: several writes applied atomically, across keyspaces.

use crate::db::keyspace::KeyspaceId;
use crate::error::{Error, Result};
use crate::options::{MAX_BATCH_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES};

/// One operation of a batch, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Delete `key`.
    Delete {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: &'a [u8],
    },
    /// Merge `operand` into `key`'s value with the keyspace's merge
    /// function (see [`crate::write::merge`]).
    Merge {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: &'a [u8],
        /// The operand.
        operand: &'a [u8],
    },
    /// Delete every key in `[start, end)`.
    DeleteRange {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// First key deleted.
        start: &'a [u8],
        /// First key kept.
        end: &'a [u8],
    },
    /// Keep `blob` in the log for readers of the write history
    /// ([`crate::Db::batches_since`]). It takes no sequence number and is
    /// never visible to reads.
    LogData {
        /// The bytes kept.
        blob: &'a [u8],
    },
}

/// A list of writes that become durable and visible all at once: after any
/// crash either every operation is present or none is.
///
/// The keys and values of all operations sit back to back in one buffer
/// (a batch of many small writes costs no allocation per write).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<Entry>,
    /// Every operation's bytes: its first field, then its second.
    data: Vec<u8>,
}

/// Where one operation's fields lie in [`WriteBatch::data`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    kind: Kind,
    keyspace: KeyspaceId,
    /// Offset of the first field (key, start or blob).
    at: usize,
    /// Length of the first field.
    first: usize,
    /// Length of the second field (value, operand or end; 0 if none).
    second: usize,
}

/// The kind of an [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Put,
    Delete,
    Merge,
    DeleteRange,
    LogData,
}

impl Entry {
    /// The operation, borrowed from the batch's `data`.
    fn view<'a>(&self, data: &'a [u8]) -> BatchOp<'a> {
        let first = &data[self.at..self.at + self.first];
        let second = &data[self.at + self.first..self.at + self.first + self.second];
        let keyspace = self.keyspace;
        match self.kind {
            Kind::Put => BatchOp::Put {
                keyspace,
                key: first,
                value: second,
            },
            Kind::Delete => BatchOp::Delete {
                keyspace,
                key: first,
            },
            Kind::Merge => BatchOp::Merge {
                keyspace,
                key: first,
                operand: second,
            },
            Kind::DeleteRange => BatchOp::DeleteRange {
                keyspace,
                start: first,
                end: second,
            },
            Kind::LogData => BatchOp::LogData { blob: first },
        }
    }
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.ops()).finish()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `ops` operations whose keys and values
    /// (and other fields) take `bytes` in all, so that adding them
    /// allocates nothing more.
    pub fn with_capacity(ops: usize, bytes: usize) -> Self {
        WriteBatch {
            ops: Vec::with_capacity(ops),
            data: Vec::with_capacity(bytes),
        }
    }

    fn push(&mut self, kind: Kind, keyspace: KeyspaceId, first: &[u8], second: &[u8]) {
        self.ops.push(Entry {
            kind,
            keyspace,
            at: self.data.len(),
            first: first.len(),
            second: second.len(),
        });
        self.data.extend_from_slice(first);
        self.data.extend_from_slice(second);
    }

    /// Adds a put.
    pub fn put(&mut self, keyspace: KeyspaceId, key: &[u8], value: &[u8]) {
        self.push(Kind::Put, keyspace, key, value);
    }

    /// Adds a delete.
    pub fn delete(&mut self, keyspace: KeyspaceId, key: &[u8]) {
        self.push(Kind::Delete, keyspace, key, &[]);
    }

    /// Adds a merge of `operand` into `key`.
    pub fn merge(&mut self, keyspace: KeyspaceId, key: &[u8], operand: &[u8]) {
        self.push(Kind::Merge, keyspace, key, operand);
    }

    /// Adds a range delete of `[start, end)`.
    pub fn delete_range(&mut self, keyspace: KeyspaceId, start: &[u8], end: &[u8]) {
        self.push(Kind::DeleteRange, keyspace, start, end);
    }

    /// Adds a log-data blob: kept in the log with the batch, returned by
    /// [`crate::Db::batches_since`], never read by a get or a scan.
    pub fn log_data(&mut self, blob: &[u8]) {
        self.push(Kind::LogData, KeyspaceId(0), blob, &[]);
    }

    /// The operations, in order.
    pub fn ops(&self) -> impl ExactSizeIterator<Item = BatchOp<'_>> + Clone + '_ {
        self.ops.iter().map(|e| e.view(&self.data))
    }

    /// Number of sequence-numbered operations: every operation but log
    /// data, which takes no sequence number (as in RocksDB's `Count()`).
    pub fn len(&self) -> usize {
        self.ops.iter().filter(|e| e.kind != Kind::LogData).count()
    }

    /// Whether the batch holds no operation at all (a batch of log data
    /// alone is not empty: it is still written to the log).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Bytes of the keys, values and operands held.
    pub(crate) fn payload_bytes(&self) -> usize {
        self.data.len()
    }

    /// Makes room for `ops` more operations whose fields take `bytes` more,
    /// so that adding them allocates nothing (a reused batch usually has
    /// the room already).
    pub fn reserve(&mut self, ops: usize, bytes: usize) {
        self.ops.reserve(ops);
        self.data.reserve(bytes);
    }

    /// Bytes the batch has allocated (for a caller deciding whether an
    /// emptied batch is small enough to keep for reuse).
    pub fn allocated_bytes(&self) -> usize {
        self.ops.capacity() * std::mem::size_of::<Entry>() + self.data.capacity()
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.data.clear();
    }

    /// Checks every key and value against the size limits.
    pub fn validate(&self) -> Result<()> {
        if self.data.len() > MAX_BATCH_BYTES {
            return Err(Error::InvalidArgument(format!(
                "batch holds {} bytes, over the maximum of {MAX_BATCH_BYTES}",
                self.data.len()
            )));
        }
        for op in self.ops() {
            match op {
                BatchOp::Put { key, value, .. }
                | BatchOp::Merge {
                    key,
                    operand: value,
                    ..
                } => {
                    check_key(key)?;
                    check_value(value)?;
                }
                BatchOp::Delete { key, .. } => check_key(key)?,
                BatchOp::LogData { blob } => check_value(blob)?,
                BatchOp::DeleteRange { start, end, .. } => {
                    check_key(start)?;
                    check_key(end)?;
                }
            }
        }
        Ok(())
    }
}

/// Rejects keys over [`MAX_KEY_BYTES`].
pub fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "key of {} bytes is over the maximum of {MAX_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(())
}

/// Rejects values over [`MAX_VALUE_BYTES`].
pub fn check_value(value: &[u8]) -> Result<()> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "value of {} bytes is over the maximum of {MAX_VALUE_BYTES}",
            value.len()
        )));
    }
    Ok(())
}
