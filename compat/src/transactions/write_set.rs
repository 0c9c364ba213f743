//! [`WriteSet`]: what a transaction has done so far: its write batch (in
//! RocksDB's format, committed as one engine batch), an index of the batch
//! for reading its own writes, the keys it tracks for conflicts or holds
//! locks on, and its savepoints.

use std::collections::HashSet;

use crate::comparator::Comparator;
use crate::write_batch::{BatchMark, KeyIndex, PendingWrite, decode_all};
use crate::{Error, WriteBatchWithTransaction};

/// A key a transaction wrote or read with `get_for_update`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TrackedKey {
    /// Column family id.
    pub(crate) cf: u32,
    /// The key.
    pub(crate) key: Vec<u8>,
    /// Others' writes after this sequence number conflict.
    pub(crate) since_seq: u64,
}

/// One write to add to the batch.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Write<'a> {
    Put(&'a [u8]),
    Delete,
    Merge(&'a [u8]),
}

/// Where the write set stood when a savepoint was set.
#[derive(Debug)]
struct Savepoint {
    mark: BatchMark,
    tracked: usize,
}

/// A transaction's writes, tracked keys and savepoints.
#[derive(Debug, Default)]
pub(crate) struct WriteSet {
    batch: WriteBatchWithTransaction<true>,
    index: KeyIndex,
    tracked: Vec<TrackedKey>,
    tracked_ids: HashSet<(u32, Vec<u8>)>,
    savepoints: Vec<Savepoint>,
    /// The largest batch allowed, in bytes (0: no limit).
    max_batch_bytes: usize,
}

impl WriteSet {
    /// An empty write set whose batch may grow to `max_batch_bytes` (0: no limit).
    pub(crate) fn new(max_batch_bytes: usize) -> Self {
        Self {
            max_batch_bytes,
            ..Self::default()
        }
    }

    /// The batch to commit.
    pub(crate) fn batch(&self) -> &WriteBatchWithTransaction<true> {
        &self.batch
    }

    /// Appends `write` of `key` in column family `cf`. Fails with RocksDB's
    /// `Memory limit reached` and changes nothing if the batch would grow
    /// past its limit.
    /// A merge's `resolved` value is what reads of the key return.
    pub(crate) fn write(
        &mut self,
        cf: u32,
        key: &[u8],
        write: Write<'_>,
        resolved: Option<Vec<u8>>,
    ) -> Result<(), Error> {
        let mark = self.batch.mark();
        match write {
            Write::Put(value) => self.batch.put_in(cf, key, value),
            Write::Delete => self.batch.delete_in(cf, key),
            Write::Merge(value) => self.batch.merge_in(cf, key, value),
        }
        if self.max_batch_bytes > 0 && self.batch.size_in_bytes() > self.max_batch_bytes {
            self.batch.truncate_to(mark);
            return Err(Error::aborted("Memory limit reached"));
        }
        let pending = match write {
            Write::Put(value) => PendingWrite::Put(value.to_vec()),
            Write::Delete => PendingWrite::Delete,
            Write::Merge(_) => PendingWrite::Merge(resolved),
        };
        self.index.insert(cf, key, pending);
        Ok(())
    }

    /// The transaction's own pending write of `key`, if any; in a column
    /// family ordered by a comparator (`order`), of any key it calls equal.
    pub(crate) fn pending(
        &self,
        cf: u32,
        key: &[u8],
        order: Option<&Comparator>,
    ) -> Option<&PendingWrite> {
        self.index.get_in(cf, key, order)
    }

    /// The pending writes of column family `cf` within `[lower, upper)`,
    /// in its order (`order`, or the bytes').
    pub(crate) fn pending_range(
        &self,
        cf: u32,
        bounds: (Option<&[u8]>, Option<&[u8]>),
        order: Option<&Comparator>,
    ) -> Vec<(Vec<u8>, PendingWrite)> {
        self.index.range_in(cf, bounds, order)
    }

    /// Whether `key` is tracked already.
    pub(crate) fn is_tracked(&self, cf: u32, key: &[u8]) -> bool {
        self.tracked_ids.contains(&(cf, key.to_vec()))
    }

    /// Tracks `key` (once; later calls keep the first `since_seq`).
    pub(crate) fn track(&mut self, cf: u32, key: &[u8], since_seq: u64) {
        if self.tracked_ids.insert((cf, key.to_vec())) {
            self.tracked.push(TrackedKey {
                cf,
                key: key.to_vec(),
                since_seq,
            });
        }
    }

    /// The tracked keys, in the order they were first touched.
    pub(crate) fn tracked(&self) -> &[TrackedKey] {
        &self.tracked
    }

    /// Remembers the current state for [`Self::rollback_to_savepoint`].
    pub(crate) fn set_savepoint(&mut self) {
        self.savepoints.push(Savepoint {
            mark: self.batch.mark(),
            tracked: self.tracked.len(),
        });
    }

    /// Undoes everything since the last savepoint and forgets it. Returns
    /// the keys first tracked since then (now untracked), or `None` if there
    /// is no savepoint.
    pub(crate) fn rollback_to_savepoint(&mut self) -> Option<Vec<TrackedKey>> {
        let savepoint = self.savepoints.pop()?;
        self.batch.truncate_to(savepoint.mark);
        self.index.clear();
        if let Ok(ops) = decode_all(self.batch.data()) {
            for op in &ops {
                self.index.record(op);
            }
        }
        let untracked = self.tracked.split_off(savepoint.tracked);
        for key in &untracked {
            self.tracked_ids.remove(&(key.cf, key.key.clone()));
        }
        Some(untracked)
    }

    /// Forgets every write, tracked key and savepoint; returns the keys
    /// that were tracked.
    pub(crate) fn clear(&mut self) -> Vec<TrackedKey> {
        self.batch.clear();
        self.index.clear();
        self.savepoints.clear();
        self.tracked_ids.clear();
        std::mem::take(&mut self.tracked)
    }
}
