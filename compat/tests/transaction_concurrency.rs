//! Many threads run conflicting transactions that increment counters on a
//! few hot keys (optimistic ones retrying on `Busy`, pessimistic ones
//! serialized by their locks): no increment is lost or doubled, so the
//! counters sum to the number of commits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use alexdb::{ErrorKind, MultiThreaded, OptimisticTransactionDB, TransactionDB};

const THREADS: u64 = 4;
const COMMITS_PER_THREAD: u64 = 300;
const HOT_KEYS: u64 = 3;

fn read_counter(value: Option<Vec<u8>>) -> u64 {
    value.map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()))
}

/// Calls `increment(thread, i, hot_key)` `COMMITS_PER_THREAD` times on
/// each of `THREADS` threads at once.
fn on_threads(increment: impl Fn(u64, u64, &str) + Sync) {
    thread::scope(|s| {
        for t in 0..THREADS {
            let increment = &increment;
            s.spawn(move || {
                for i in 0..COMMITS_PER_THREAD {
                    increment(t, i, &format!("hot{}", (t + i) % HOT_KEYS));
                }
            });
        }
    });
}

/// The sum of the hot counters, read with `get`.
fn counter_sum(get: impl Fn(String) -> Option<Vec<u8>>) -> u64 {
    (0..HOT_KEYS)
        .map(|k| read_counter(get(format!("hot{k}"))))
        .sum()
}

#[test]
fn optimistic_increments_retried_on_busy_sum_up() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB<MultiThreaded> =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    let conflicts = AtomicU64::new(0);
    on_threads(|t, i, key| {
        loop {
            let txn = db.transaction();
            let n = read_counter(txn.get_for_update(key, true).unwrap());
            thread::yield_now();
            txn.put(key, (n + 1).to_be_bytes()).unwrap();
            txn.put(format!("log/{t}/{i}"), key.as_bytes()).unwrap();
            match txn.commit() {
                Ok(()) => return,
                Err(e) if e.kind() == ErrorKind::Busy => {
                    conflicts.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => panic!("{e}"),
            }
        }
    });
    assert_eq!(
        counter_sum(|k| db.get(k).unwrap()),
        THREADS * COMMITS_PER_THREAD
    );
    let logged = db
        .prefix_iterator(b"log/")
        .take_while(|item| item.as_ref().is_ok_and(|(k, _)| k.starts_with(b"log/")));
    assert_eq!(logged.count() as u64, THREADS * COMMITS_PER_THREAD);
    eprintln!(
        "{} commits, {} conflicts retried",
        THREADS * COMMITS_PER_THREAD,
        conflicts.load(Ordering::Relaxed)
    );
}

#[test]
fn pessimistic_increments_are_never_lost() {
    let dir = tempfile::tempdir().unwrap();
    let db: TransactionDB<MultiThreaded> =
        TransactionDB::open_default(dir.path().join("db")).unwrap();
    on_threads(|_, _, key| {
        let txn = db.transaction();
        let n = read_counter(txn.get_for_update(key, true).unwrap());
        thread::yield_now();
        txn.put(key, (n + 1).to_be_bytes()).unwrap();
        txn.commit().unwrap();
    });
    assert_eq!(
        counter_sum(|k| db.get(k).unwrap()),
        THREADS * COMMITS_PER_THREAD
    );
}
