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

pub mod batch;
mod batch_plan;
pub mod checkpoint;
mod compaction;
mod db;
pub mod dir_lock;
mod durable;
pub mod error;
mod file_hold;
mod follower;
pub mod format;
pub mod index;
mod index_save;
pub mod io;
pub mod iter;
pub mod key_locks;
pub mod keyspace;
pub mod location;
pub mod log_reader;
mod log_writer;
pub mod merge;
pub mod mvcc;
pub mod options;
mod prepared;
pub mod range_tombstones;
mod read;
mod recovery;
pub mod segment;
pub mod segment_summary;
mod shared;
mod side_rebuilds;
pub mod snapshot;
pub mod stats;
mod write_conflicts;
mod write_group;
mod write_queue;
mod write_throttle;

pub use batch::WriteBatch;
pub use checkpoint::CheckpointFile;
pub use db::{Db, is_database_file};
pub use dir_lock::LOCK_FILE;
pub use error::{Error, Result};
pub use file_hold::FileHold;
pub use iter::{Cursor, Entry, KeyRange};
pub use keyspace::{DEFAULT_KEYSPACE, KeyspaceId};
pub use log_reader::{BatchLog, LoggedBatch, LoggedRecord};
pub use merge::MergeFunction;
pub use options::{MAX_KEY_BYTES, MAX_VALUE_BYTES, MIN_SEGMENT_BYTES, Options, WriteOptions};
pub use prepared::PREPARED_PREFIX;
pub use read::{PinnedValue, ValueRef};
pub use segment_summary::SegmentSummary;
pub use snapshot::Snapshot;
pub use stats::Stats;
pub use write_conflicts::WatchedKey;
