//! How a transaction keeps other writers out of its keys:
//! [`Concurrency::Optimistic`] tracks each key with the sequence number it
//! was first touched at (or the transaction's snapshot) and lets the commit
//! fail with `Resource busy` if another write came after it;
//! [`Concurrency::Pessimistic`] locks each key when first touched and keeps
//! the lock until commit or rollback.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use alexdb_engine::key_locks::{KeyLocks, LockMode, LockOwner, LockRequest};
use alexdb_engine::{KeyspaceId, WatchedKey};

use super::write_set::{TrackedKey, WriteSet};
use crate::db::core::Core;
use crate::db::errors::from_lock_error;
use crate::{Error, WriteOptions};

/// What a pessimistic database shares with its transactions besides the
/// lock table: the names in use, for `set_name`.
#[derive(Debug, Default)]
pub(crate) struct TransactionNames {
    names: Mutex<HashSet<Vec<u8>>>,
}

impl TransactionNames {
    /// Claims `name`; fails as RocksDB does if a live transaction has it.
    pub(crate) fn claim(&self, name: &[u8]) -> Result<(), Error> {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        if !names.insert(name.to_vec()) {
            return Err(Error::invalid_argument("Transaction name must be unique."));
        }
        Ok(())
    }

    /// Gives `name` back.
    pub(crate) fn release(&self, name: &[u8]) {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        names.remove(name);
    }
}

/// The lock settings of one pessimistic transaction.
#[derive(Debug)]
pub(crate) struct Pessimistic<'db> {
    pub(crate) locks: &'db Arc<KeyLocks>,
    pub(crate) names: &'db TransactionNames,
    pub(crate) owner: LockOwner,
    pub(crate) timeout: Option<Duration>,
    pub(crate) deadlock_depth: Option<usize>,
    pub(crate) expires_at: Option<Instant>,
}

/// How a transaction keeps other writers out of its keys.
#[derive(Debug)]
pub(crate) enum Concurrency<'db> {
    /// Check for conflicts at commit.
    Optimistic,
    /// Lock keys when first touched.
    Pessimistic(Pessimistic<'db>),
}

/// The snapshots a transaction holds.
#[derive(Debug, Default)]
pub(crate) struct TxnSnapshots {
    /// The snapshot set with `set_snapshot`: conflicts are counted from it.
    pub(crate) user: Option<Arc<alexdb_engine::Snapshot>>,
    /// A snapshot no newer than any tracked key's `since_seq`, kept so that
    /// compaction cannot forget a newer delete of a tracked key.
    pub(crate) guard: Option<Arc<alexdb_engine::Snapshot>>,
}

impl Concurrency<'_> {
    /// Tracks (optimistic) or locks (pessimistic) `key` before the
    /// transaction writes it (`Exclusive`) or reads it for update.
    pub(crate) fn touch(
        &self,
        core: &Core,
        writes: &mut WriteSet,
        snapshots: &mut TxnSnapshots,
        (cf, key): (u32, &[u8]),
        mode: LockMode,
    ) -> Result<(), Error> {
        let newly = !writes.is_tracked(cf, key);
        if let Concurrency::Pessimistic(p) = self {
            p.lock(cf, key, mode)?;
        }
        if !newly {
            return Ok(());
        }
        let since_seq = match &snapshots.user {
            Some(snapshot) => snapshot.seq(),
            None => {
                snapshots.guard.get_or_insert_with(|| core.snapshot());
                core.engine.latest_sequence_number()
            }
        };
        if let Concurrency::Pessimistic(p) = self
            && snapshots.user.is_some()
        {
            let watched = [watched_key(cf, key, since_seq)];
            if let Err(e) = core.check_unchanged(&watched) {
                p.locks.unlock(p.owner, KeyspaceId(cf), key);
                return Err(e);
            }
        }
        writes.track(cf, key, since_seq);
        Ok(())
    }

    /// Writes the transaction's batch as one engine batch: optimistic
    /// transactions only if no tracked key changed since it was tracked.
    pub(crate) fn commit(
        &self,
        core: &Core,
        writes: &WriteSet,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        match self {
            Concurrency::Optimistic => {
                let watched: Vec<WatchedKey<'_>> = writes
                    .tracked()
                    .iter()
                    .map(|t| watched_key(t.cf, &t.key, t.since_seq))
                    .collect();
                core.commit(writes.batch(), writeopts, &watched)
            }
            Concurrency::Pessimistic(p) => {
                if p.expires_at.is_some_and(|at| Instant::now() > at) {
                    return Err(Error::with_kind(crate::ErrorKind::Expired, ""));
                }
                core.commit(writes.batch(), writeopts, &[])
            }
        }
    }

    /// Releases what the transaction held on `keys` (pessimistic locks).
    pub(crate) fn release(&self, keys: &[TrackedKey]) {
        if let Concurrency::Pessimistic(p) = self {
            let keys = keys.iter().map(|t| (KeyspaceId(t.cf), t.key.as_slice()));
            p.locks.unlock_all(p.owner, keys);
        }
    }
}

impl Pessimistic<'_> {
    fn lock(&self, cf: u32, key: &[u8], mode: LockMode) -> Result<(), Error> {
        let request = LockRequest {
            keyspace: KeyspaceId(cf),
            key,
            owner: self.owner,
            mode,
            timeout: self.timeout,
            deadlock_depth: self.deadlock_depth,
        };
        self.locks.lock(&request).map_err(|e| from_lock_error(&e))
    }
}

fn watched_key(cf: u32, key: &[u8], since_seq: u64) -> WatchedKey<'_> {
    WatchedKey {
        keyspace: KeyspaceId(cf),
        key,
        since_seq,
    }
}
