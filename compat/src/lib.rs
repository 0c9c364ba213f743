//! `alexdb`: a pure-Rust drop-in replacement for the `rocksdb` crate.
//!
//! Depend on it as `rocksdb = { package = "alexdb", version = "..." }` and
//! keep `use rocksdb::...`: the types below are exported at the paths where
//! rocksdb 0.25 exports them, with the same signatures.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("db");
//! use alexdb::{DB, IteratorMode, Options};
//!
//! let mut opts = Options::default();
//! opts.create_if_missing(true);
//! let db = DB::open(&opts, &path).unwrap();
//! db.put(b"key", b"value").unwrap();
//! assert_eq!(db.get(b"key").unwrap().as_deref(), Some(&b"value"[..]));
//! for item in db.iterator(IteratorMode::Start) {
//!     let (key, value) = item.unwrap();
//!     assert_eq!((&*key, &*value), (&b"key"[..], &b"value"[..]));
//! }
//! ```
//!
//! The database layer (`db/`, `db_iterator/`, `snapshot.rs`,
//! `pinnable_slice.rs`) translates every call onto `alexdb-engine`; the rest
//! (errors, options, write batches, column family handles, property names)
//! needs no open database.

pub mod backup;
pub mod checkpoint;
pub mod compaction_filter;
pub mod compaction_filter_factory;
pub mod merge_operator;
pub mod perf;
pub mod properties;
pub mod statistics;
pub mod storage;

mod column_family;
mod comparator;
mod comparator_names;
mod cslice;
mod cstr_like;
mod db;
mod db_iterator;
mod error;
mod family_cursor;
mod identity;
mod info_log;
mod iter_range;
mod iterator_mode;
mod key_hex;
mod options;
mod ordered_keys;
mod pinnable_slice;
mod prop_name;
mod slice_transform;
mod snapshot;
mod sst_file_writer;
mod timestamped;
mod transactions;
mod wal_iterator;
mod write_batch;
mod write_batch_with_index;

pub use crate::column_family::{
    AsColumnFamilyRef, BoundColumnFamily, ColumnFamily, ColumnFamilyDescriptor, ColumnFamilyRef,
    ColumnFamilyTtl, DEFAULT_COLUMN_FAMILY_NAME,
};
pub use crate::compaction_filter::Decision as CompactionDecision;
pub use crate::cstr_like::CStrLike;
pub use crate::db::{
    DB, DBAccess, DBCommon, DBWithThreadMode, LiveFile, MultiThreaded, Range, SingleThreaded,
    ThreadMode,
};
pub use crate::db_iterator::{
    DBIterator, DBIteratorWithThreadMode, DBRawIterator, DBRawIteratorWithThreadMode,
};
pub use crate::error::{Error, ErrorKind};
pub use crate::iter_range::{IterateBounds, PrefixRange};
pub use crate::iterator_mode::{Direction, IteratorMode};
pub use crate::merge_operator::MergeOperands;
pub use crate::options::{
    BlockBasedIndexType, BlockBasedOptions, BlockBasedTablePinningTier, BottommostLevelCompaction,
    Cache, ChecksumType, CompactOptions, CompactionPri, CuckooTableOptions, DBCompactionStyle,
    DBCompressionType, DBPath, DBRecoveryMode, DataBlockIndexType, Env, FifoCompactOptions,
    FlushOptions, InfoLogger, IngestExternalFileOptions, KeyEncodingType, LogLevel,
    LruCacheOptions, MemtableFactory, Options, PlainTableFactoryOptions, ReadOptions, ReadTier,
    UniversalCompactOptions, UniversalCompactionStopStyle, WaitForCompactOptions,
    WriteBufferManager, WriteOptions,
};
pub use crate::perf::{PerfContext, PerfMetric, PerfStatsLevel};
pub use crate::pinnable_slice::DBPinnableSlice;
pub use crate::prop_name::{PropName, PropertyName};
pub use crate::slice_transform::SliceTransform;
pub use crate::snapshot::{Snapshot, SnapshotWithThreadMode};
pub use crate::sst_file_writer::SstFileWriter;
pub use crate::transactions::{
    OptimisticTransactionDB, OptimisticTransactionOptions, Transaction, TransactionDB,
    TransactionDBOptions, TransactionOptions,
};
pub use crate::wal_iterator::DBWALIterator;
pub use crate::write_batch::{
    WriteBatch, WriteBatchIterator, WriteBatchIteratorCf, WriteBatchWithTransaction,
};
pub use crate::write_batch_with_index::WriteBatchWithIndex;

#[cfg(test)]
mod tests {
    use super::{
        BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, Env, Error,
        IngestExternalFileOptions, Options, PlainTableFactoryOptions, ReadOptions, WriteBatch,
        WriteBufferManager, WriteOptions,
    };

    fn is_send_sync<T: Send + Sync>() {}

    #[test]
    fn shared_types_are_send_and_sync() {
        is_send_sync::<Options>();
        is_send_sync::<ReadOptions>();
        is_send_sync::<WriteOptions>();
        is_send_sync::<IngestExternalFileOptions>();
        is_send_sync::<BlockBasedOptions>();
        is_send_sync::<PlainTableFactoryOptions>();
        is_send_sync::<ColumnFamilyDescriptor>();
        is_send_sync::<ColumnFamily>();
        is_send_sync::<WriteBatch>();
        is_send_sync::<Cache>();
        is_send_sync::<Env>();
        is_send_sync::<WriteBufferManager>();
        is_send_sync::<Error>();
        is_send_sync::<super::DB>();
        is_send_sync::<super::DBWithThreadMode<super::MultiThreaded>>();
        is_send_sync::<super::DBWithThreadMode<super::SingleThreaded>>();
    }
}
