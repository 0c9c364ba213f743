//! Detecting a live process that holds a source database, and keeping
//! writers out while it is read: a shared lock on its `LOCK` file (see
//! `alexdb_rocksdb_format::lock`, which probes both RocksDB's record lock
//! and AlexDB's `flock`).

use std::path::Path;

pub use alexdb_rocksdb_format::lock::DirLock as SourceLock;

use crate::error::{MigrateError, Result};

/// Fails with [`MigrateError::InUse`] if a process holds the database
/// at `dir` open; otherwise returns a shared lock keeping writers out.
pub fn hold_source(dir: &Path) -> Result<SourceLock> {
    SourceLock::shared(dir).map_err(|e| MigrateError::rocks_format(dir, e))
}
