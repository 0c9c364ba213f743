//! Options of transaction databases and their transactions, with RocksDB's
//! defaults. Times are in milliseconds, as in rocksdb.

use std::time::Duration;

/// Options of one pessimistic transaction ([`super::TransactionDB::transaction_opt`]).
#[derive(Clone, Debug)]
pub struct TransactionOptions {
    pub(crate) skip_prepare: bool,
    pub(crate) set_snapshot: bool,
    pub(crate) deadlock_detect: bool,
    pub(crate) lock_timeout: i64,
    pub(crate) expiration: i64,
    pub(crate) deadlock_detect_depth: i64,
    pub(crate) max_write_batch_size: usize,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        Self {
            skip_prepare: true,
            set_snapshot: false,
            deadlock_detect: false,
            lock_timeout: -1,
            expiration: -1,
            deadlock_detect_depth: 50,
            max_write_batch_size: 0,
        }
    }
}

impl TransactionOptions {
    /// The default options.
    pub fn new() -> TransactionOptions {
        TransactionOptions::default()
    }

    /// Whether `commit` may come without `prepare` (default `true`). AlexDB
    /// lets a named transaction commit either way, as RocksDB does.
    pub fn set_skip_prepare(&mut self, skip_prepare: bool) {
        self.skip_prepare = skip_prepare;
    }

    /// Takes a snapshot when the transaction starts (default `false`): keys
    /// it then writes or reads with `get_for_update` must not have been
    /// written by others since the snapshot, or the operation fails with
    /// `Resource busy`. Plain `get`s still read the latest data.
    pub fn set_snapshot(&mut self, snapshot: bool) {
        self.set_snapshot = snapshot;
    }

    /// Fails a lock wait that would deadlock with `Resource busy: Deadlock`
    /// instead of waiting for the timeout (default `false`).
    pub fn set_deadlock_detect(&mut self, deadlock_detect: bool) {
        self.deadlock_detect = deadlock_detect;
    }

    /// How long the transaction waits for a key lock, in milliseconds: 0
    /// does not wait, a negative value (the default, -1) uses the
    /// database's `txn_lock_timeout`.
    pub fn set_lock_timeout(&mut self, lock_timeout: i64) {
        self.lock_timeout = lock_timeout;
    }

    /// A transaction older than this many milliseconds fails to commit with
    /// `Operation expired` (negative, the default: never).
    pub fn set_expiration(&mut self, expiration: i64) {
        self.expiration = expiration;
    }

    /// How many waiting transactions deadlock detection follows (default 50).
    pub fn set_deadlock_detect_depth(&mut self, depth: i64) {
        self.deadlock_detect_depth = depth;
    }

    /// The largest write batch, in bytes, the transaction may build (0, the
    /// default: no limit); a write past it fails with
    /// `Operation aborted: Memory limit reached`.
    pub fn set_max_write_batch_size(&mut self, size: usize) {
        self.max_write_batch_size = size;
    }
}

/// Options of a pessimistic transaction database ([`super::TransactionDB::open`]).
#[derive(Clone, Debug)]
pub struct TransactionDBOptions {
    pub(crate) default_lock_timeout: i64,
    pub(crate) txn_lock_timeout: i64,
    pub(crate) max_num_locks: i64,
}

impl Default for TransactionDBOptions {
    fn default() -> Self {
        Self {
            default_lock_timeout: 1000,
            txn_lock_timeout: 1000,
            max_num_locks: -1,
        }
    }
}

impl TransactionDBOptions {
    /// The default options.
    pub fn new() -> TransactionDBOptions {
        TransactionDBOptions::default()
    }

    /// How long a write outside a transaction (`TransactionDB::put` and
    /// friends) waits for a key lock, in milliseconds (default 1000; 0 does
    /// not wait; negative waits forever).
    pub fn set_default_lock_timeout(&mut self, default_lock_timeout: i64) {
        self.default_lock_timeout = default_lock_timeout;
    }

    /// How long a transaction waits for a key lock unless its own options
    /// say otherwise, in milliseconds (default 1000; 0 does not wait;
    /// negative waits forever).
    pub fn set_txn_lock_timeout(&mut self, txn_lock_timeout: i64) {
        self.txn_lock_timeout = txn_lock_timeout;
    }

    /// The most keys locked at once (default -1: no limit). Past it, a lock
    /// fails with `Resource busy: Failed to acquire lock due to
    /// max_num_locks limit`. AlexDB counts locked keys across all column
    /// families together, where RocksDB counts per column family.
    pub fn set_max_num_locks(&mut self, max_num_locks: i64) {
        self.max_num_locks = max_num_locks;
    }

    /// Accepted for compatibility: AlexDB's lock table has one mutex.
    pub fn set_num_stripes(&mut self, _num_stripes: usize) {}
}

/// Options of one optimistic transaction
/// ([`super::OptimisticTransactionDB::transaction_opt`]).
#[derive(Clone, Debug, Default)]
pub struct OptimisticTransactionOptions {
    pub(crate) set_snapshot: bool,
}

impl OptimisticTransactionOptions {
    /// The default options.
    pub fn new() -> OptimisticTransactionOptions {
        OptimisticTransactionOptions::default()
    }

    /// Takes a snapshot when the transaction starts (default `false`): the
    /// commit then fails with `Resource busy` if a key the transaction wrote
    /// or read with `get_for_update` was written by others since the
    /// snapshot, instead of since the transaction first touched the key.
    pub fn set_snapshot(&mut self, snapshot: bool) {
        self.set_snapshot = snapshot;
    }
}

/// A rocksdb lock timeout in milliseconds as a wait: negative is forever.
pub(crate) fn lock_wait(millis: i64) -> Option<Duration> {
    u64::try_from(millis).ok().map(Duration::from_millis)
}
