//! [`PlainWriteLocks`]: the key locks that plain writes (`put`, `delete`,
//! `write`) take on a pessimistic `TransactionDB`, so that they wait for,
//! and time out on, keys a transaction holds, as in RocksDB.

use std::sync::Arc;
use std::time::Duration;

use alexdb_engine::KeyspaceId;
use alexdb_engine::key_locks::{KeyLocks, LockMode, LockRequest};

use crate::Error;
use crate::db::errors::from_lock_error;
use crate::write_batch::BatchOp;

/// The lock table of a pessimistic database, as plain writes use it.
#[derive(Debug)]
pub(crate) struct PlainWriteLocks {
    /// The table transactions lock in too.
    pub(crate) locks: Arc<KeyLocks>,
    /// How long a plain write waits for a key (`None`: forever).
    pub(crate) timeout: Option<Duration>,
}

impl PlainWriteLocks {
    /// Runs `write` while holding an exclusive lock on every key `ops`
    /// write, taken in key order; the locks are released afterwards. Fails
    /// with the lock's error, writing nothing, if a key stays locked past
    /// the timeout.
    pub(crate) fn around<R>(
        &self,
        ops: &[BatchOp<'_>],
        write: impl FnOnce() -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut keys: Vec<(KeyspaceId, &[u8])> = ops.iter().filter_map(written_key).collect();
        keys.sort_unstable();
        keys.dedup();
        let owner = self.locks.new_owner();
        for (taken, &(keyspace, key)) in keys.iter().enumerate() {
            let request = LockRequest {
                keyspace,
                key,
                owner,
                mode: LockMode::Exclusive,
                timeout: self.timeout,
                deadlock_depth: None,
            };
            if let Err(e) = self.locks.lock(&request) {
                self.locks.unlock_all(owner, keys[..taken].iter().copied());
                return Err(from_lock_error(&e));
            }
        }
        let result = write();
        self.locks.unlock_all(owner, keys.iter().copied());
        result
    }
}

/// The key a batch record writes, if it writes exactly one.
pub(crate) fn written_key<'a>(op: &BatchOp<'a>) -> Option<(KeyspaceId, &'a [u8])> {
    match *op {
        BatchOp::Put { cf, key, .. }
        | BatchOp::Delete { cf, key }
        | BatchOp::SingleDelete { cf, key }
        | BatchOp::Merge { cf, key, .. } => Some((KeyspaceId(cf), key)),
        BatchOp::DeleteRange { .. } | BatchOp::LogData(_) | BatchOp::Noop => None,
    }
}
