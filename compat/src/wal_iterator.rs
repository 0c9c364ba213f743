//! [`DBWALIterator`]: the write batches logged after a sequence number, from
//! `DB::get_updates_since`.
//!
//! AlexDB's log is its storage: every write is one batch frame in a log
//! segment, read back with the engine's `Db::batches_since` and re-encoded
//! as a rocksdb [`WriteBatch`] (puts and deletes, in their column
//! families, and the batch's log data in its place; a column family with
//! user timestamps logs each version as RocksDB does, its key followed by
//! its timestamp). Batches that
//! compaction has already folded into compaction output are gone; asking for them fails with RocksDB's `NotFound: Gap in
//! sequence numbers`.

use std::collections::BTreeMap;

use alexdb_engine::format::record::RecordKind;
use alexdb_engine::{BatchLog, LoggedBatch};

use crate::db::errors::from_engine;
use crate::timestamped;
use crate::{Error, WriteBatch};

/// The batches written after a sequence number, oldest first, each with the
/// sequence number of its first write.
pub struct DBWALIterator {
    log: BatchLog,
    /// The timestamp size of each column family with user timestamps,
    /// whose stored versions are logged back in RocksDB's form.
    timestamp_sizes: BTreeMap<u32, usize>,
    status: Result<(), Error>,
    done: bool,
}

impl DBWALIterator {
    pub(crate) fn new(log: BatchLog, timestamp_sizes: BTreeMap<u32, usize>) -> Self {
        Self {
            log,
            timestamp_sizes,
            status: Ok(()),
            done: false,
        }
    }

    /// Whether the iterator can return more batches: false once it has
    /// returned the last one or an error.
    pub fn valid(&self) -> bool {
        !self.done
    }

    /// The error the iterator stopped at, if any.
    pub fn status(&self) -> Result<(), Error> {
        self.status.clone()
    }
}

/// The logged batch as a rocksdb write batch.
fn to_write_batch(batch: &LoggedBatch, timestamp_sizes: &BTreeMap<u32, usize>) -> WriteBatch {
    let mut out = WriteBatch::default();
    for record in &batch.records {
        let timestamp_size = timestamp_sizes.get(&record.keyspace);
        if let (Some(&ts_size), false) = (timestamp_size, record.kind == RecordKind::LogData) {
            match timestamped::logged(&record.key, &record.value, ts_size) {
                Some((key, Some(value))) => out.put_in(record.keyspace, &key, value),
                Some((key, None)) => out.delete_in(record.keyspace, &key),
                None => {}
            }
            continue;
        }
        match record.kind {
            RecordKind::Put => out.put_in(record.keyspace, &record.key, &record.value),
            RecordKind::Delete => out.delete_in(record.keyspace, &record.key),
            RecordKind::Merge => out.merge_in(record.keyspace, &record.key, &record.value),
            RecordKind::RangeDelete => {
                out.delete_range_in(record.keyspace, &record.key, &record.value);
            }
            RecordKind::LogData => out.put_log_data(&record.value),
        }
    }
    out.set_sequence(batch.seq);
    out
}

impl Iterator for DBWALIterator {
    type Item = Result<(u64, WriteBatch), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.log.next() {
            Some(Ok(batch)) => {
                let rocks = to_write_batch(&batch, &self.timestamp_sizes);
                Some(Ok((batch.seq, rocks)))
            }
            Some(Err(err)) => {
                self.done = true;
                let err = from_engine(err);
                self.status = Err(err.clone());
                Some(Err(err))
            }
            None => {
                self.done = true;
                None
            }
        }
    }
}
