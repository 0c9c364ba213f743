//! Reading the write history back: `get_updates_since`.

use super::errors::IntoRocks;
use super::{DBCommon, DBInner, ThreadMode};
use crate::{DBWALIterator, Error};

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// The write batches made after sequence number `seq_number`, oldest
    /// first, each with the sequence number of its first write. A batch
    /// that started at or before `seq_number` is not returned, as in
    /// rocksdb.
    ///
    /// Fails with `NotFound` if `seq_number` is above the latest sequence
    /// number, or if compaction has already folded batches after it into
    /// compaction output (RocksDB: its WAL files are gone).
    pub fn get_updates_since(&self, seq_number: u64) -> Result<DBWALIterator, Error> {
        let engine = &self.core().engine;
        if seq_number > engine.latest_sequence_number() {
            return Err(Error::not_found(
                "Requested sequence not yet written in the db",
            ));
        }
        let log = engine.batches_since(seq_number).rocks()?;
        let timestamp_sizes = self
            .core()
            .families()
            .iter()
            .filter_map(|(&cf, f)| f.timestamps().map(|c| (cf, c.timestamp_size)))
            .collect();
        Ok(DBWALIterator::new(log, timestamp_sizes))
    }
}
