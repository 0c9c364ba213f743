//! `alexdb-engine`: an embedded, ordered key-value store built on an ALEX
//! learned index over append-only, memory-mapped, checksummed segment files.
//!
//! The engine knows nothing of RocksDB; the `alexdb` crate builds the
//! RocksDB-compatible API on top of it.
//!
//! ```
//! use alexdb_engine::{Db, KeyRange, Options, WriteOptions};
//! let dir = tempfile::tempdir().unwrap();
//! let db = Db::open(dir.path(), Options::default()).unwrap();
//! let ks = db.keyspace("default").unwrap();
//! db.put(ks, b"hello", b"world", &WriteOptions::default()).unwrap();
//! assert_eq!(&*db.get(ks, b"hello").unwrap().unwrap(), b"world");
//! let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
//! cursor.seek_to_first();
//! assert_eq!(cursor.entry().unwrap().key(), b"hello");
//! ```
//!
//! Durability: every acknowledged write survives a process crash; writes
//! made with [`WriteOptions::sync`] (or followed by a successful
//! [`Db::sync`]) also survive a power loss, and what survives a power loss
//! is always a prefix of the acknowledged history.

mod compaction;
mod db;
pub mod error;
pub mod format;
pub mod index;
pub mod io;
pub mod mvcc;
pub mod options;
mod read;
mod recovery;
pub mod segment;
#[cfg(test)]
mod test_rng;
mod write;

// The public module paths, wherever the modules live in the tree.
pub use compaction::filter as compaction_filter;
pub use db::{checkpoint, dir_lock, keyspace, memory_budget, stats};
pub use format::location;
pub use mvcc::{key_order, range_tombstones};
pub use read::{iter, log_reader, snapshot};
pub use segment::summary as segment_summary;
pub use write::{batch, key_locks, merge};

pub use batch::WriteBatch;
pub use checkpoint::CheckpointFile;
pub use compaction_filter::CompactionFilter;
pub use db::file_hold::FileHold;
pub use db::{Db, KeyspaceHold, is_database_file};
pub use dir_lock::LOCK_FILE;
pub use error::{Error, Result};
pub use iter::{Cursor, Entry, KeyRange};
pub use keyspace::{DEFAULT_KEYSPACE, KeyspaceId};
pub use log_reader::{BatchLog, LoggedBatch, LoggedRecord};
pub use memory_budget::{MemoryBudget, MemoryUse};
pub use merge::MergeFunction;
pub use options::{
    BackgroundErrorListener, Compression, MAX_KEY_BYTES, MAX_VALUE_BYTES, MIN_SEGMENT_BYTES,
    Options, WriteOptions,
};
pub use read::{PinnedValue, ValueRef};
pub use segment::summary::SegmentSummary;
pub use snapshot::Snapshot;
pub use stats::Stats;
pub use write::conflicts::WatchedKey;
pub use write::prepared::PREPARED_PREFIX;
