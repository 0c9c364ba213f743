//! The open database: the handle and what it owns.
//!
//! [`handle`] is the facade every caller goes through (open, write, read,
//! snapshot, iterate, compact, close); [`shared`] is the state one open
//! database shares between its handle, snapshots, iterators and the
//! compaction thread, assembled here and handed down to the write, read and
//! compaction paths. Beside them: the keyspaces, the directory lock, the
//! read-only follower, checkpoints (copies of the directory) and counters.

pub mod checkpoint;
pub mod dir_lock;
pub(crate) mod file_hold;
pub(crate) mod follower;
mod handle;
pub mod keyspace;
pub mod memory_budget;
pub(crate) mod shared;
pub mod stats;

pub use handle::{Db, KeyspaceHold, is_database_file};
