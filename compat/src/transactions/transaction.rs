//! [`Transaction`]: a group of writes, on an [`super::OptimisticTransactionDB`]
//! or a [`super::TransactionDB`], that becomes visible all at once at
//! commit, as one engine batch (durable as any batch is). Its reads see its
//! own writes first. This file holds its life cycle and writes;
//! `transaction_read.rs` its reads and iterators.

use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError};

use alexdb_engine::key_locks::LockMode;

use super::concurrency::{Concurrency, TxnSnapshots};
use super::write_set::{Write, WriteSet};
use crate::db::core::Core;
use crate::db::errors::IntoRocks;
use crate::write_batch::{BatchOp, PendingWrite, decode_all};
use crate::{
    AsColumnFamilyRef, Error, MergeOperands, ReadOptions, SnapshotWithThreadMode,
    WriteBatchWithTransaction, WriteOptions,
};

/// The default column family's id.
const DEFAULT_CF: u32 = 0;

/// The longest transaction name RocksDB accepts.
const MAX_NAME_BYTES: usize = 512;

/// A transaction of a transaction database `DB`; it cannot outlive it.
///
/// Writes go to the transaction's own batch and are invisible to others
/// until [`commit`](Self::commit), which applies them atomically. Reads
/// through the transaction see its own writes over the database (at the
/// `ReadOptions` snapshot, if one is set). On an optimistic database the
/// commit fails with `Resource busy` if a key the transaction wrote or read
/// with `get_for_update` was written by someone else since the transaction
/// first touched it (or since its snapshot); on a pessimistic one each such
/// key is locked when first touched, and a lock that cannot be had in time
/// fails the operation with `Operation timed out`.
///
/// Dropping a transaction without committing it rolls it back, except a
/// prepared one: it stays prepared and is recovered at the next open.
pub struct Transaction<'db, DB> {
    pub(crate) core: &'db Core,
    concurrency: Concurrency<'db>,
    write_options: WriteOptions,
    pub(crate) state: Mutex<TxnState>,
    db: PhantomData<&'db DB>,
}

/// The mutable part of a transaction.
#[derive(Debug)]
pub(crate) struct TxnState {
    pub(crate) writes: WriteSet,
    pub(crate) snapshots: TxnSnapshots,
    name: Option<Vec<u8>>,
    /// `prepare` saved the write set as a prepared record.
    prepared: bool,
}

impl<'db, DB> Transaction<'db, DB> {
    pub(crate) fn new(
        core: &'db Core,
        concurrency: Concurrency<'db>,
        write_options: &WriteOptions,
        set_snapshot: bool,
        max_batch_bytes: usize,
    ) -> Self {
        let snapshots = TxnSnapshots {
            user: set_snapshot.then(|| core.snapshot()),
            guard: None,
        };
        Self {
            core,
            concurrency,
            write_options: write_options.clone(),
            state: Mutex::new(TxnState {
                writes: WriteSet::new(max_batch_bytes),
                snapshots,
                name: None,
                prepared: false,
            }),
            db: PhantomData,
        }
    }

    /// A prepared transaction recovered at open: `batch` is its write set,
    /// whose keys `concurrency`'s owner already holds locked.
    pub(crate) fn recovered(
        core: &'db Core,
        concurrency: Concurrency<'db>,
        name: Vec<u8>,
        batch: &WriteBatchWithTransaction<true>,
    ) -> Result<Self, Error> {
        let txn = Self::new(core, concurrency, &WriteOptions::default(), false, 0);
        {
            let mut state = txn.state();
            for op in decode_all(batch.data())? {
                let (cf, key, write) = match op {
                    BatchOp::Put { cf, key, value } => (cf, key, Write::Put(value)),
                    BatchOp::Delete { cf, key } | BatchOp::SingleDelete { cf, key } => {
                        (cf, key, Write::Delete)
                    }
                    BatchOp::Merge { cf, key, value } => (cf, key, Write::Merge(value)),
                    BatchOp::DeleteRange { .. } | BatchOp::LogData(_) | BatchOp::Noop => continue,
                };
                state.writes.track(cf, key, 0);
                state.writes.write(cf, key, write, None)?;
            }
            state.name = Some(name);
            state.prepared = true;
        }
        Ok(txn)
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, TxnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies every write of the transaction atomically, as one batch.
    ///
    /// On an optimistic database it fails with `Resource busy` (and writes
    /// nothing) if a key the transaction wrote or read with
    /// `get_for_update` was written by another writer since the transaction
    /// first touched it, or since its snapshot if it has one. A pessimistic
    /// transaction fails with `Operation expired` past its expiration.
    /// Locks are released either way.
    pub fn commit(self) -> Result<(), Error> {
        let mut state = self.state();
        let mut result = self
            .concurrency
            .commit(self.core, &state.writes, &self.write_options);
        if result.is_ok() {
            result = self.forget_prepared(&mut state);
        }
        let tracked = state.writes.clear();
        self.concurrency.release(&tracked);
        result
    }

    /// Removes the prepared record of a prepared transaction, once it has
    /// committed or rolled back. A crash between a commit and this removal
    /// recovers the transaction as prepared again; committing it again
    /// rewrites the same values.
    fn forget_prepared(&self, state: &mut TxnState) -> Result<(), Error> {
        if !std::mem::take(&mut state.prepared) {
            return Ok(());
        }
        let name = state.name.as_deref().unwrap_or_default();
        self.core.engine.remove_prepared(name).rocks()
    }

    /// Names the transaction (needed before [`Self::prepare`]). Fails with
    /// `Invalid argument` if it is named already, if the name is longer
    /// than 512 bytes, or if another live transaction of a pessimistic
    /// database has that name.
    pub fn set_name(&self, name: &[u8]) -> Result<(), Error> {
        let mut state = self.state();
        if state.name.is_some() {
            return Err(Error::invalid_argument(
                "Transaction has already been named.",
            ));
        }
        if name.is_empty() || name.len() > MAX_NAME_BYTES {
            return Err(Error::invalid_argument(
                "Transaction name length must be between 1 and 512 chars.",
            ));
        }
        if let Concurrency::Pessimistic(p) = &self.concurrency {
            p.names.claim(name)?;
        }
        state.name = Some(name.to_vec());
        Ok(())
    }

    /// The name given with [`Self::set_name`], if any.
    pub fn get_name(&self) -> Option<Vec<u8>> {
        self.state().name.clone()
    }

    /// The first phase of a two-phase commit: saves the transaction's
    /// writes durably as prepared, holding its locks. A prepared
    /// transaction that is neither committed nor rolled back (dropped, or
    /// cut short by a crash) is recovered as prepared when the database is
    /// opened again: see `TransactionDB::prepared_transactions`. The
    /// transaction must be named (else `Invalid argument`); an optimistic
    /// one fails with `Invalid argument`, as in RocksDB.
    pub fn prepare(&self) -> Result<(), Error> {
        if let Concurrency::Optimistic = &self.concurrency {
            return Err(Error::invalid_argument(
                "Two phase commit not supported for optimistic transactions.",
            ));
        }
        let mut state = self.state();
        let Some(name) = state.name.clone() else {
            return Err(Error::invalid_argument(
                "Cannot prepare a transaction that has not been named.",
            ));
        };
        self.core.check_writable()?;
        let batch = state.writes.batch().data().to_vec();
        self.core.engine.save_prepared(&name, &batch).rocks()?;
        state.prepared = true;
        Ok(())
    }

    /// The transaction's snapshot (set with `set_snapshot` in its options);
    /// without one, reads through the returned value see the latest data.
    /// Either way they see the transaction's own writes.
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }

    /// Discards every write, savepoint and lock of the transaction. It
    /// stays usable.
    pub fn rollback(&self) -> Result<(), Error> {
        let mut state = self.state();
        let forgotten = self.forget_prepared(&mut state);
        let tracked = state.writes.clear();
        drop(state);
        self.concurrency.release(&tracked);
        forgotten
    }

    /// Records the transaction's state for [`Self::rollback_to_savepoint`];
    /// savepoints nest.
    pub fn set_savepoint(&self) {
        self.state().writes.set_savepoint();
    }

    /// Undoes every write since the last savepoint (and releases the locks
    /// first taken since then), then forgets that savepoint. Fails with
    /// `NotFound` if there is no savepoint.
    pub fn rollback_to_savepoint(&self) -> Result<(), Error> {
        let untracked = self.state().writes.rollback_to_savepoint();
        match untracked {
            Some(untracked) => {
                self.concurrency.release(&untracked);
                Ok(())
            }
            None => Err(Error::not_found("")),
        }
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<(), Error> {
        self.write(DEFAULT_CF, key.as_ref(), Write::Put(value.as_ref()))
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<(), Error> {
        self.write(cf.cf_id(), key.as_ref(), Write::Put(value.as_ref()))
    }

    /// Adds the merge operand `value` for `key` in the default column
    /// family. Reads of the key through this transaction see it merged over
    /// the transaction's own earlier write, or over the latest committed
    /// value when the merge was made; the commit merges it over the value
    /// committed by then.
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<(), Error> {
        self.write(DEFAULT_CF, key.as_ref(), Write::Merge(value.as_ref()))
    }

    /// [`Self::merge`] in column family `cf`.
    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<(), Error> {
        self.write(cf.cf_id(), key.as_ref(), Write::Merge(value.as_ref()))
    }

    /// Deletes `key` from the default column family.
    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<(), Error> {
        self.write(DEFAULT_CF, key.as_ref(), Write::Delete)
    }

    /// Deletes `key` from column family `cf`.
    pub fn delete_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<(), Error> {
        self.write(cf.cf_id(), key.as_ref(), Write::Delete)
    }

    /// A copy of the transaction's write batch.
    pub fn get_writebatch(&self) -> WriteBatchWithTransaction<true> {
        self.state().writes.batch().clone()
    }

    /// Replays the puts, deletes and merges of `writebatch` into the
    /// transaction, as if each had been called on it.
    pub fn rebuild_from_writebatch(
        &self,
        writebatch: &WriteBatchWithTransaction<true>,
    ) -> Result<(), Error> {
        for op in decode_all(writebatch.data())? {
            match op {
                BatchOp::Put { cf, key, value } => self.write(cf, key, Write::Put(value))?,
                BatchOp::Delete { cf, key } | BatchOp::SingleDelete { cf, key } => {
                    self.write(cf, key, Write::Delete)?;
                }
                BatchOp::Merge { cf, key, value } => self.write(cf, key, Write::Merge(value))?,
                BatchOp::DeleteRange { .. } => {
                    return Err(Error::not_supported(
                        "DeleteRange is not supported in transactions",
                    ));
                }
                BatchOp::LogData(_) | BatchOp::Noop => {}
            }
        }
        Ok(())
    }

    /// Tracks or locks `key`, then adds `write` to the batch.
    fn write(&self, cf: u32, key: &[u8], write: Write<'_>) -> Result<(), Error> {
        self.core.check_writable()?;
        let resolved = match write {
            Write::Merge(operand) => self.resolve_merge(cf, key, operand)?,
            _ => None,
        };
        let mut state = self.state();
        let TxnState {
            writes, snapshots, ..
        } = &mut *state;
        self.concurrency
            .touch(self.core, writes, snapshots, (cf, key), LockMode::Exclusive)?;
        writes.write(cf, key, write, resolved)
    }

    /// The value `key` has for this transaction once `operand` is merged
    /// into it: over its own pending write, or over the latest committed
    /// value (as RocksDB's `Transaction::Get` merges at read time). `None`
    /// if that cannot be known (no merge operator, a refused operand, or an
    /// unresolved merge under it): reads of the key then fail.
    fn resolve_merge(&self, cf: u32, key: &[u8], operand: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let order = self.core.key_order(cf);
        let base = match self
            .state()
            .writes
            .pending(cf, key, order.as_ref())
            .cloned()
        {
            Some(PendingWrite::Put(value) | PendingWrite::Merge(Some(value))) => Some(value),
            Some(PendingWrite::Delete) => None,
            Some(PendingWrite::Merge(None)) => return Ok(None),
            None => self.core.get_copied(cf, key, &ReadOptions::default())?,
        };
        let Some(operator) = self.core.merge_operator(cf) else {
            return Ok(None);
        };
        Ok((operator.full_merge)(
            key,
            base.as_deref(),
            &MergeOperands::new([operand]),
        ))
    }

    /// Tracks or locks `key` for a read with `get_for_update`.
    pub(crate) fn touch_for_update(
        &self,
        cf: u32,
        key: &[u8],
        exclusive: bool,
    ) -> Result<(), Error> {
        let mode = if exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        let mut state = self.state();
        let TxnState {
            writes, snapshots, ..
        } = &mut *state;
        self.concurrency
            .touch(self.core, writes, snapshots, (cf, key), mode)
    }
}

impl<DB> Drop for Transaction<'_, DB> {
    fn drop(&mut self) {
        let mut state = self.state();
        let tracked = state.writes.clear();
        let name = state.name.take();
        drop(state);
        self.concurrency.release(&tracked);
        if let (Concurrency::Pessimistic(p), Some(name)) = (&self.concurrency, name) {
            p.names.release(&name);
        }
    }
}
