//! Checkpoints: an openable, consistent copy of a database, as rocksdb's
//! `checkpoint` module.
//!
//! AlexDB's sealed segments never change, so a checkpoint hard-links them
//! and copies only the written part of the active segment (the engine's
//! `Db::checkpoint`). There are no memtables, so nothing needs flushing:
//! every write acknowledged before `create_checkpoint` is in the copy,
//! whatever `log_size_for_flush` says. The copy holds segment files, not
//! RocksDB's `*.sst`/`*.log` files.

use std::marker::PhantomData;
use std::path::Path;

use crate::db::DBInner;
use crate::db::core::Core;
use crate::db::errors::IntoRocks;
use crate::{DBCommon, Error, ThreadMode};

/// Makes checkpoints of one open database.
pub struct Checkpoint<'db> {
    core: &'db Core,
    _db: PhantomData<&'db ()>,
}

impl<'db> Checkpoint<'db> {
    /// A checkpoint maker for `db`; `create_checkpoint` writes the copies.
    pub fn new<T: ThreadMode, I: DBInner>(db: &'db DBCommon<T, I>) -> Result<Self, Error> {
        Ok(Self {
            core: db.core(),
            _db: PhantomData,
        })
    }

    /// Writes a consistent copy of the database into `path`, which must not
    /// exist; it can be opened as a database of its own.
    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<(), Error> {
        create(self.core, path.as_ref())
    }

    /// As [`Self::create_checkpoint`]. `log_size_for_flush` changes nothing:
    /// AlexDB has no memtable to flush and its log is its storage, so the
    /// copy always holds every acknowledged write.
    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        _log_size_for_flush: u64,
    ) -> Result<(), Error> {
        create(self.core, path.as_ref())
    }
}

/// Writes the checkpoint of `core` into `path` with RocksDB's errors.
pub(crate) fn create(core: &Core, path: &Path) -> Result<(), Error> {
    if path.exists() {
        return Err(Error::invalid_argument("Directory exists"));
    }
    core.engine.checkpoint(path).rocks()?;
    crate::identity::copy(core.engine.path(), path)?;
    crate::comparator_names::copy(core.engine.path(), path)
}

/// Makes checkpoints of a [`TransactionDB`](crate::TransactionDB), as
/// [`Checkpoint`] does of a plain database: committed transactions are in
/// the copy, uncommitted ones are not.
pub struct TransactionDBCheckpoint<'db> {
    inner: Checkpoint<'db>,
}

impl<'db> TransactionDBCheckpoint<'db> {
    /// A checkpoint maker for `db`; `create_checkpoint` writes the copies.
    pub fn new<T: ThreadMode>(db: &'db crate::TransactionDB<T>) -> Result<Self, Error> {
        Ok(Self {
            inner: Checkpoint::new(db)?,
        })
    }

    /// Writes a consistent copy of the database into `path`, which must not
    /// exist; it can be opened as a database of its own.
    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<(), Error> {
        self.inner.create_checkpoint(path)
    }

    /// As [`Self::create_checkpoint`] (see
    /// [`Checkpoint::create_checkpoint_with_log_size`]).
    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        log_size_for_flush: u64,
    ) -> Result<(), Error> {
        self.inner
            .create_checkpoint_with_log_size(path, log_size_for_flush)
    }
}
