//! Differential test of transactions against the real `rocksdb` crate
//! (0.25): the same seeded random sequences of interleaved transactions
//! (begin with or without a snapshot, put, delete, get, get_for_update
//! shared or exclusive, savepoints, rollback, scans in both directions,
//! commit) and plain writes run on an `OptimisticTransactionDB` and on a
//! `TransactionDB` (lock timeouts of 0) of each crate; every result, or
//! its `ErrorKind`, must be equal. Up to three transactions are open at a
//! time, on six keys, so conflicts and lock waits are frequent.
//!
//! `ALEXDB_DIFF_SEQUENCES` and `ALEXDB_DIFF_SEED` change how many
//! sequences run and where they start.

// Compares with, or converts from, the real RocksDB: a dev-dependency
// everywhere but Windows and musl (see compat/Cargo.toml).
#![cfg(not(any(windows, target_env = "musl")))]

/// `rocksdb`.
mod real {
    use rocksdb as api;
    include!("differential_transactions/runner.rs");
}

/// `alexdb`.
mod ours {
    use alexdb as api;
    include!("differential_transactions/runner.rs");
}

/// Transactions open at a time.
const SLOTS: usize = 3;
/// Operations per sequence.
const OPS: usize = 60;

/// An operation on an open transaction.
#[derive(Clone, Debug)]
enum Action {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Get(Vec<u8>),
    GetForUpdate(Vec<u8>, bool),
    SetSavepoint,
    RollbackToSavepoint,
    Rollback,
    Scan(bool),
}

/// One step of a sequence.
#[derive(Clone, Debug)]
enum TxnOp {
    /// (Re)starts transaction slot `t`, with a snapshot or not (an open
    /// one is dropped, which rolls it back).
    Begin(usize, bool),
    InTxn(usize, Action),
    Commit(usize),
    DbPut(Vec<u8>, Vec<u8>),
    DbDelete(Vec<u8>),
    DbGet(Vec<u8>),
}

/// A seeded generator of sequences (xorshift64).
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }

    fn key(&mut self) -> Vec<u8> {
        format!("k{}", self.below(6)).into_bytes()
    }

    fn value(&mut self, step: usize) -> Vec<u8> {
        format!("v{step}").into_bytes()
    }

    fn action(&mut self, step: usize) -> Action {
        match self.below(12) {
            0..=2 => Action::Put(self.key(), self.value(step)),
            3 => Action::Delete(self.key()),
            4 | 5 => Action::Get(self.key()),
            6 | 7 => {
                let exclusive = self.below(3) != 0;
                Action::GetForUpdate(self.key(), exclusive)
            }
            8 => Action::SetSavepoint,
            9 => Action::RollbackToSavepoint,
            10 => Action::Scan(self.below(2) == 0),
            _ => Action::Rollback,
        }
    }

    fn op(&mut self, step: usize) -> TxnOp {
        let t = self.below(SLOTS as u64);
        match self.below(20) {
            0..=2 => TxnOp::Begin(t, self.below(2) == 0),
            3 | 4 => TxnOp::Commit(t),
            5 => TxnOp::DbPut(self.key(), self.value(step)),
            6 => TxnOp::DbDelete(self.key()),
            7 => TxnOp::DbGet(self.key()),
            _ => TxnOp::InTxn(t, self.action(step)),
        }
    }

    fn ops(&mut self) -> Vec<TxnOp> {
        (0..OPS).map(|step| self.op(step)).collect()
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs the sequences on both crates; returns how many results were
/// `err <conflict_kind>`, so that the caller can check conflicts happened.
fn compare(pessimistic: bool, conflict_kind: &str) -> usize {
    let sequences = env_u64("ALEXDB_DIFF_SEQUENCES", 100);
    let first = env_u64("ALEXDB_DIFF_SEED", 1);
    let mut conflicts = 0;
    for seed in first..first + sequences {
        let ops = Generator(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1).ops();
        let (real_dir, ours_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let real = real::run(&ops, real_dir.path(), pessimistic);
        let ours = ours::run(&ops, ours_dir.path(), pessimistic);
        if let Some(i) = (0..ops.len()).find(|&i| real[i] != ours[i]) {
            let steps: Vec<String> = ops[..=i]
                .iter()
                .zip(&real)
                .map(|(op, got)| format!("  {op:?} -> {got}"))
                .collect();
            panic!(
                "seed {seed} (pessimistic: {pessimistic}) differs at step {i}: rocksdb {:?}, alexdb {:?}\n{}",
                real[i],
                ours[i],
                steps.join("\n")
            );
        }
        conflicts += real.iter().filter(|r| r.as_str() == conflict_kind).count();
    }
    conflicts
}

#[test]
fn optimistic_transactions_match_rocksdb() {
    let conflicts = compare(false, "err Busy");
    assert!(conflicts > 0, "no sequence produced a write conflict");
}

#[test]
fn pessimistic_transactions_match_rocksdb() {
    let timeouts = compare(true, "err TimedOut");
    assert!(timeouts > 0, "no sequence produced a lock timeout");
}
