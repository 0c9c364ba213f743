//! Write batches: several writes applied atomically, across keyspaces.

use crate::error::{Error, Result};
use crate::keyspace::KeyspaceId;
use crate::options::{MAX_BATCH_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES};

/// One operation of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchOp {
    /// Set `key` to `value`.
    Put {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Delete `key`.
    Delete {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: Vec<u8>,
    },
    /// Merge `operand` into `key`'s value with the keyspace's merge
    /// function (see [`crate::merge`]).
    Merge {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// The key.
        key: Vec<u8>,
        /// The operand.
        operand: Vec<u8>,
    },
    /// Delete every key in `[start, end)`.
    DeleteRange {
        /// Target keyspace.
        keyspace: KeyspaceId,
        /// First key deleted.
        start: Vec<u8>,
        /// First key kept.
        end: Vec<u8>,
    },
    /// Keep `blob` in the log for readers of the write history
    /// ([`crate::Db::batches_since`]). It takes no sequence number and is
    /// never visible to reads.
    LogData {
        /// The bytes kept.
        blob: Vec<u8>,
    },
}

/// A list of writes that become durable and visible all at once: after any
/// crash either every operation is present or none is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<BatchOp>,
    bytes: usize,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put.
    pub fn put(&mut self, keyspace: KeyspaceId, key: &[u8], value: &[u8]) {
        self.bytes += key.len() + value.len();
        self.ops.push(BatchOp::Put {
            keyspace,
            key: key.to_vec(),
            value: value.to_vec(),
        });
    }

    /// Adds a delete.
    pub fn delete(&mut self, keyspace: KeyspaceId, key: &[u8]) {
        self.bytes += key.len();
        self.ops.push(BatchOp::Delete {
            keyspace,
            key: key.to_vec(),
        });
    }

    /// Adds a merge of `operand` into `key`.
    pub fn merge(&mut self, keyspace: KeyspaceId, key: &[u8], operand: &[u8]) {
        self.bytes += key.len() + operand.len();
        self.ops.push(BatchOp::Merge {
            keyspace,
            key: key.to_vec(),
            operand: operand.to_vec(),
        });
    }

    /// Adds a range delete of `[start, end)`.
    pub fn delete_range(&mut self, keyspace: KeyspaceId, start: &[u8], end: &[u8]) {
        self.bytes += start.len() + end.len();
        self.ops.push(BatchOp::DeleteRange {
            keyspace,
            start: start.to_vec(),
            end: end.to_vec(),
        });
    }

    /// Adds a log-data blob: kept in the log with the batch, returned by
    /// [`crate::Db::batches_since`], never read by a get or a scan.
    pub fn log_data(&mut self, blob: &[u8]) {
        self.bytes += blob.len();
        self.ops.push(BatchOp::LogData {
            blob: blob.to_vec(),
        });
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[BatchOp] {
        &self.ops
    }

    /// Number of sequence-numbered operations: every operation but log
    /// data, which takes no sequence number (as in RocksDB's `Count()`).
    pub fn len(&self) -> usize {
        self.ops
            .iter()
            .filter(|op| !matches!(op, BatchOp::LogData { .. }))
            .count()
    }

    /// Whether the batch holds no operation at all (a batch of log data
    /// alone is not empty: it is still written to the log).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.bytes = 0;
    }

    /// Checks every key and value against the size limits.
    pub fn validate(&self) -> Result<()> {
        if self.bytes > MAX_BATCH_BYTES {
            return Err(Error::InvalidArgument(format!(
                "batch holds {} bytes, over the maximum of {MAX_BATCH_BYTES}",
                self.bytes
            )));
        }
        for op in &self.ops {
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
