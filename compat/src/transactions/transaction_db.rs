//! [`TransactionDB`]: a database whose transactions lock the keys they
//! touch (pessimistic concurrency control).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use alexdb_engine::key_locks::{KeyLocks, LockMode, LockOwner, LockRequest};

use super::concurrency::{Concurrency, Pessimistic, TransactionNames};
use super::options::{TransactionDBOptions, TransactionOptions, lock_wait};
use super::transaction::Transaction;
use crate::db::access::Access;
use crate::db::core::Core;
use crate::db::errors::{IntoRocks, from_lock_error};
use crate::db::open::{default_descriptors, open_core};
use crate::db::write_locks::{PlainWriteLocks, written_key};
use crate::db::{DBAccess, DBCommon, DBInner, ThreadMode};
use crate::write_batch::decode_all;
use crate::{
    CStrLike, ColumnFamilyDescriptor, Error, MultiThreaded, Options, WriteBatchWithTransaction,
    WriteOptions,
};

/// A database with pessimistic transactions: every method of a
/// [`crate::DB`] handle (through `Deref`), plus `transaction` and
/// `transaction_opt`.
///
/// A transaction locks each key it writes or reads with `get_for_update`
/// when it first touches it, and keeps the lock until it commits or rolls
/// back. Another transaction, or a plain write (`put`, `delete`, `write`,
/// which lock their keys too), waits for the lock up to its timeout and
/// then fails with `Operation timed out: Timeout waiting to lock key`.
///
/// ```
/// use alexdb::{ErrorKind, TransactionDB, TransactionDBOptions, Options};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// let mut txn_db_opts = TransactionDBOptions::default();
/// txn_db_opts.set_default_lock_timeout(10);
/// let db: TransactionDB = TransactionDB::open(&opts, &txn_db_opts, dir.path()).unwrap();
/// let txn = db.transaction();
/// txn.put(b"k", b"mine").unwrap();
/// assert_eq!(db.put(b"k", b"theirs").unwrap_err().kind(), ErrorKind::TimedOut);
/// txn.commit().unwrap();
/// db.put(b"k", b"theirs").unwrap();
/// ```
pub struct TransactionDB<T: ThreadMode = DefaultThreadMode> {
    db: DBCommon<T, TransactionDBInner>,
}

#[cfg(not(feature = "multi-threaded-cf"))]
type DefaultThreadMode = crate::SingleThreaded;
#[cfg(feature = "multi-threaded-cf")]
type DefaultThreadMode = crate::MultiThreaded;

impl<T: ThreadMode> Deref for TransactionDB<T> {
    type Target = DBCommon<T, TransactionDBInner>;

    fn deref(&self) -> &Self::Target {
        &self.db
    }
}

impl<T: ThreadMode> DerefMut for TransactionDB<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.db
    }
}

impl<T: ThreadMode> DBAccess for TransactionDB<T> {
    #[inline]
    fn core(&self) -> &Core {
        self.db.core()
    }
}

impl<T: ThreadMode> fmt::Debug for TransactionDB<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.db.fmt(f)
    }
}

/// The inner part of a [`TransactionDB`]: the open engine database (whose
/// plain writes lock their keys), the lock table and the transaction names.
pub struct TransactionDBInner {
    core: Core,
    locks: Arc<KeyLocks>,
    names: TransactionNames,
    txn_lock_timeout: i64,
    /// Prepared transactions found at open, not yet handed out.
    recovered: Mutex<Vec<RecoveredTxn>>,
}

/// A prepared transaction found at open: its name, its write batch, and
/// the lock owner that holds its keys.
struct RecoveredTxn {
    name: Vec<u8>,
    batch: WriteBatchWithTransaction<true>,
    owner: LockOwner,
}

impl DBInner for TransactionDBInner {
    #[inline]
    fn core(&self) -> &Core {
        &self.core
    }
}

impl<T: ThreadMode> TransactionDB<T> {
    /// Opens the database at `path`, creating it if missing, with default
    /// transaction options.
    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self, Error> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, &TransactionDBOptions::default(), path)
    }

    /// Opens the database at `path`, which must have no column family but `"default"`.
    pub fn open<P: AsRef<Path>>(
        opts: &Options,
        txn_db_opts: &TransactionDBOptions,
        path: P,
    ) -> Result<Self, Error> {
        Self::open_cf(opts, txn_db_opts, path, None::<&str>)
    }

    /// Opens the database with the named column families (default options for each).
    pub fn open_cf<P, I, N>(
        opts: &Options,
        txn_db_opts: &TransactionDBOptions,
        path: P,
        cfs: I,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_cf_descriptors(opts, txn_db_opts, path, default_descriptors(cfs))
    }

    /// Opens the database with the given column families and their options.
    pub fn open_cf_descriptors<P, I>(
        opts: &Options,
        txn_db_opts: &TransactionDBOptions,
        path: P,
        cfs: I,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let path = path.as_ref();
        let (core, handles) = open_core(opts, path, cfs, Access::ReadWrite, None)?;
        let max_locks = usize::try_from(txn_db_opts.max_num_locks)
            .ok()
            .filter(|n| *n > 0);
        let locks = Arc::new(KeyLocks::new(max_locks));
        let core = core.with_plain_write_locks(PlainWriteLocks {
            locks: locks.clone(),
            timeout: lock_wait(txn_db_opts.default_lock_timeout),
        });
        let names = TransactionNames::default();
        let recovered = recover_prepared(&core, &locks, &names)?;
        let inner = TransactionDBInner {
            core,
            locks,
            names,
            txn_lock_timeout: txn_db_opts.txn_lock_timeout,
            recovered: Mutex::new(recovered),
        };
        Ok(Self {
            db: DBCommon::from_inner(inner, handles, path.to_path_buf()),
        })
    }

    /// The column families of the database at `path`, `"default"` first.
    pub fn list_cf<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Vec<String>, Error> {
        DBCommon::<T, TransactionDBInner>::list_cf(opts, path)
    }

    /// Deletes the database at `path` (see `DB::destroy`).
    pub fn destroy<P: AsRef<Path>>(opts: &Options, path: P) -> Result<(), Error> {
        DBCommon::<T, TransactionDBInner>::destroy(opts, path)
    }

    /// Not supported, as for `DB::repair`.
    pub fn repair<P: AsRef<Path>>(opts: &Options, path: P) -> Result<(), Error> {
        DBCommon::<T, TransactionDBInner>::repair(opts, path)
    }

    /// Begins a transaction with default options.
    pub fn transaction(&self) -> Transaction<'_, Self> {
        self.transaction_opt(&WriteOptions::default(), &TransactionOptions::default())
    }

    /// Begins a transaction whose commit writes with `write_opts`.
    pub fn transaction_opt<'a>(
        &'a self,
        write_opts: &WriteOptions,
        txn_opts: &TransactionOptions,
    ) -> Transaction<'a, Self> {
        let inner = &self.db.inner;
        let lock_timeout = if txn_opts.lock_timeout < 0 {
            inner.txn_lock_timeout
        } else {
            txn_opts.lock_timeout
        };
        let pessimistic = Pessimistic {
            locks: &inner.locks,
            names: &inner.names,
            owner: inner.locks.new_owner(),
            timeout: lock_wait(lock_timeout),
            deadlock_depth: txn_opts
                .deadlock_detect
                .then(|| usize::try_from(txn_opts.deadlock_detect_depth).unwrap_or(0)),
            expires_at: lock_wait(txn_opts.expiration).map(|d| Instant::now() + d),
        };
        Transaction::new(
            &inner.core,
            Concurrency::Pessimistic(pessimistic),
            write_opts,
            txn_opts.set_snapshot,
            txn_opts.max_write_batch_size,
        )
    }

    /// The transactions that were prepared but neither committed nor
    /// rolled back when the database was last closed or crashed. They hold
    /// their locks until the caller commits or rolls back each one. Call it
    /// once after opening: later calls return none.
    pub fn prepared_transactions(&self) -> Vec<Transaction<'_, Self>> {
        let inner = &self.db.inner;
        let recovered = std::mem::take(
            &mut *inner
                .recovered
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        recovered
            .into_iter()
            .filter_map(|r| {
                let pessimistic = Pessimistic {
                    locks: &inner.locks,
                    names: &inner.names,
                    owner: r.owner,
                    timeout: lock_wait(inner.txn_lock_timeout),
                    deadlock_depth: None,
                    expires_at: None,
                };
                let concurrency = Concurrency::Pessimistic(pessimistic);
                Transaction::recovered(&inner.core, concurrency, r.name, &r.batch).ok()
            })
            .collect()
    }

    /// Applies `batch` atomically, after locking its keys (waiting up to
    /// the default lock timeout).
    pub fn write_opt(
        &self,
        batch: WriteBatchWithTransaction<true>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.core().write(&batch, writeopts)
    }

    /// [`Self::write_opt`] with default write options.
    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<(), Error> {
        self.write_opt(batch, &WriteOptions::default())
    }
}

/// Loads the prepared records of the database, locks each one's keys for
/// a new owner and claims its name, as RocksDB does on recovery.
fn recover_prepared(
    core: &Core,
    locks: &KeyLocks,
    names: &TransactionNames,
) -> Result<Vec<RecoveredTxn>, Error> {
    let mut recovered = Vec::new();
    for (name, data) in core.engine.prepared().rocks()? {
        let batch = WriteBatchWithTransaction::<true>::from_data(&data);
        let owner = locks.new_owner();
        for op in decode_all(batch.data())? {
            if let Some((keyspace, key)) = written_key(&op) {
                let request = LockRequest {
                    keyspace,
                    key,
                    owner,
                    mode: LockMode::Exclusive,
                    timeout: Some(std::time::Duration::ZERO),
                    deadlock_depth: None,
                };
                locks.lock(&request).map_err(|e| from_lock_error(&e))?;
            }
        }
        names.claim(&name)?;
        recovered.push(RecoveredTxn { name, batch, owner });
    }
    Ok(recovered)
}

/// As in rocksdb, the property getters of a `TransactionDB` are inherent
/// to the multi-threaded mode, so that `TransactionDB::open(..)` followed by
/// `db.property_value(..)` infers that mode. (Every mode also reaches
/// `DBCommon`'s getters through `Deref`.)
impl TransactionDB<MultiThreaded> {
    /// The value of property `name` (see `DB::property_value`).
    pub fn property_value(&self, name: impl CStrLike) -> Result<Option<String>, Error> {
        self.db.property_value(name)
    }

    /// The value of integer property `name` (see `DB::property_int_value`).
    pub fn property_int_value(&self, name: impl CStrLike) -> Result<Option<u64>, Error> {
        self.db.property_int_value(name)
    }
}
