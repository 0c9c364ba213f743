//! [`OptimisticTransactionDB`]: a database whose transactions take no locks
//! and check for conflicts when they commit.

use std::path::Path;

use super::concurrency::Concurrency;
use super::options::OptimisticTransactionOptions;
use super::transaction::Transaction;
use crate::db::access::Access;
use crate::db::core::Core;
use crate::db::open::{default_descriptors, open_core};
use crate::db::{DBCommon, DBInner, ThreadMode};
use crate::{
    AsColumnFamilyRef, ColumnFamilyDescriptor, Error, Options, WriteBatchWithTransaction,
    WriteOptions,
};

/// A database with optimistic transactions: every method of a
/// [`crate::DB`] handle (reads, writes, iterators, snapshots, column
/// families), plus `transaction` and `transaction_opt`.
///
/// A transaction's commit is atomic with its conflict check (both happen
/// under the engine's writer lock): it fails with `Resource busy` and
/// writes nothing if another writer wrote one of its keys after the
/// transaction touched it. Plain writes (`put`, `write`) never fail that
/// way; they make conflicting transactions fail instead.
///
/// ```
/// use alexdb::{ErrorKind, OptimisticTransactionDB};
///
/// let dir = tempfile::tempdir().unwrap();
/// let db: OptimisticTransactionDB = OptimisticTransactionDB::open_default(dir.path()).unwrap();
/// let txn = db.transaction();
/// let n = txn.get_for_update(b"counter", true).unwrap().map_or(0, |v| v[0]);
/// txn.put(b"counter", [n + 1]).unwrap();
/// db.put(b"counter", [7]).unwrap(); // someone else writes the key
/// assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
/// assert_eq!(db.get(b"counter").unwrap().unwrap(), [7]);
/// ```
#[cfg(not(feature = "multi-threaded-cf"))]
pub type OptimisticTransactionDB<T = crate::SingleThreaded> =
    DBCommon<T, OptimisticTransactionDBInner>;

/// A database with optimistic transactions (see the single-threaded
/// definition for the details).
#[cfg(feature = "multi-threaded-cf")]
pub type OptimisticTransactionDB<T = crate::MultiThreaded> =
    DBCommon<T, OptimisticTransactionDBInner>;

/// The inner part of an [`OptimisticTransactionDB`]: the open engine database.
pub struct OptimisticTransactionDBInner {
    core: Core,
}

impl DBInner for OptimisticTransactionDBInner {
    #[inline]
    fn core(&self) -> &Core {
        &self.core
    }
}

impl<T: ThreadMode> OptimisticTransactionDB<T> {
    /// Opens the database at `path`, creating it if missing.
    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self, Error> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, path)
    }

    /// Opens the database at `path`, which must have no column family but `"default"`.
    pub fn open<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Self, Error> {
        Self::open_cf(opts, path, None::<&str>)
    }

    /// Opens the database with the named column families (default options for each).
    pub fn open_cf<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_cf_descriptors(opts, path, default_descriptors(cfs))
    }

    /// Opens the database with the given column families and their options.
    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let path = path.as_ref();
        let (core, handles) = open_core(opts, path, cfs, Access::ReadWrite, None)?;
        let inner = OptimisticTransactionDBInner { core };
        Ok(Self::from_inner(inner, handles, path.to_path_buf()))
    }

    /// Begins a transaction with default options.
    pub fn transaction(&self) -> Transaction<'_, Self> {
        self.transaction_opt(
            &WriteOptions::default(),
            &OptimisticTransactionOptions::default(),
        )
    }

    /// Begins a transaction whose commit writes with `writeopts`.
    pub fn transaction_opt(
        &self,
        writeopts: &WriteOptions,
        otxn_opts: &OptimisticTransactionOptions,
    ) -> Transaction<'_, Self> {
        let snapshot = otxn_opts.set_snapshot;
        Transaction::new(self.core(), Concurrency::Optimistic, writeopts, snapshot, 0)
    }

    /// Applies `batch` atomically, with write options.
    pub fn write_opt(
        &self,
        batch: WriteBatchWithTransaction<true>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.core().write(&batch, writeopts)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<(), Error> {
        self.write_opt(batch, &WriteOptions::default())
    }

    /// Applies `batch` with `disable_wal` set (AlexDB still logs it).
    pub fn write_without_wal(&self, batch: WriteBatchWithTransaction<true>) -> Result<(), Error> {
        let mut writeopts = WriteOptions::new();
        writeopts.disable_wal(true);
        self.write_opt(batch, &writeopts)
    }

    /// Removes the keys in `[from, to)` from column family `cf`, with write options.
    pub fn delete_range_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.core()
            .delete_range(cf.cf_id(), from.as_ref(), to.as_ref(), writeopts)
    }

    /// Removes the keys in `[from, to)` from column family `cf`.
    pub fn delete_range_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
    ) -> Result<(), Error> {
        self.delete_range_cf_opt(cf, from, to, &WriteOptions::default())
    }
}
