//! Regression: `multi_get*` without a snapshot read each key at its own
//! moment, so a batch written between two of the keys was seen half-applied
//! (223 times in a 60 s run). RocksDB's `MultiGet` reads every key at one
//! sequence number; so must we.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{ReadOptions, WriteBatch};

const KEYS: [&[u8]; 4] = [b"a", b"b", b"c", b"d"];
const ROUNDS: usize = 20_000;

/// Every value returned by one multi-get must come from the same batch.
fn assert_one_batch(values: &[Option<Vec<u8>>]) {
    let first = &values[0];
    assert!(
        values.iter().all(|v| v == first),
        "multi_get saw a half-applied batch: {values:?}"
    );
}

/// Stops the writer when the reader is done, also when it fails an
/// assertion (else the scope would wait for the writer forever).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn unwrap_all<T>(results: Vec<Result<Option<T>, rocksdb::Error>>) -> Vec<Option<Vec<u8>>>
where
    T: AsRef<[u8]>,
{
    results
        .into_iter()
        .map(|r| r.unwrap().map(|v| v.as_ref().to_vec()))
        .collect()
}

#[test]
fn multi_get_never_returns_a_half_applied_batch() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    let default = db.cf_handle("default").unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut n = 0u64;
            while !done.load(Ordering::Relaxed) {
                let mut batch = WriteBatch::default();
                for k in KEYS {
                    batch.put(k, n.to_be_bytes());
                    batch.put_cf(&cf, k, n.to_be_bytes());
                }
                db.write(batch).unwrap();
                n += 1;
            }
        });
        let _stop = StopOnDrop(&done);
        for _ in 0..ROUNDS {
            assert_one_batch(&unwrap_all(db.multi_get(KEYS)));
            let pairs: Vec<_> = KEYS
                .iter()
                .flat_map(|k| [(&default, *k), (&cf, *k)])
                .collect();
            let mixed = db.multi_get_cf(pairs);
            assert_one_batch(&unwrap_all(mixed));
            let batched = db.batched_multi_get_cf(&cf, KEYS, false);
            assert_one_batch(&unwrap_all(batched));
        }
    });
}

#[test]
fn multi_get_with_a_snapshot_still_reads_at_that_snapshot() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"old").unwrap();
    let snapshot = db.snapshot();
    db.put(b"a", b"new").unwrap();
    let mut opts = ReadOptions::default();
    opts.set_snapshot(&snapshot);
    let values = unwrap_all(db.multi_get_opt([b"a"], &opts));
    assert_eq!(values, vec![Some(b"old".to_vec())]);
    assert_eq!(
        unwrap_all(db.multi_get([b"a"])),
        vec![Some(b"new".to_vec())]
    );
}

/// A transaction's `multi_get` reads the keys it has not written at one
/// point too (they were read one by one, each at its own moment).
#[test]
fn a_transactions_multi_get_never_returns_a_half_applied_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db: rocksdb::OptimisticTransactionDB =
        rocksdb::OptimisticTransactionDB::open_default(dir.path()).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut n = 0u64;
            while !done.load(Ordering::Relaxed) {
                let mut batch = rocksdb::WriteBatchWithTransaction::<true>::default();
                for k in KEYS {
                    batch.put(k, n.to_be_bytes());
                }
                db.write(batch).unwrap();
                n += 1;
            }
        });
        let _stop = StopOnDrop(&done);
        for _ in 0..ROUNDS / 4 {
            let txn = db.transaction();
            txn.put(b"own", b"write").unwrap();
            let mut keys = KEYS.to_vec();
            keys.insert(2, b"own");
            let mut values = unwrap_all(txn.multi_get(keys));
            assert_eq!(values.remove(2), Some(b"write".to_vec()));
            assert_one_batch(&values);
        }
    });
}
