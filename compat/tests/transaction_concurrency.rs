//! Many threads run conflicting transactions that increment counters on a
//! few hot keys (optimistic ones retrying on `Busy`, pessimistic ones
//! serialized by their locks): no increment is lost or doubled, so the
//! counters sum to the number of commits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use alexdb::{ErrorKind, MultiThreaded, OptimisticTransactionDB, TransactionDB};

const THREADS: u64 = 4;
const COMMITS_PER_THREAD: u64 = 300;
const HOT_KEYS: u64 = 3;

fn read_counter(value: Option<Vec<u8>>) -> u64 {
    value.map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()))
}

#[test]
fn counters_sum_to_the_committed_increments() {
    let dir = tempfile::tempdir().unwrap();
    let db: Arc<OptimisticTransactionDB<MultiThreaded>> =
        Arc::new(OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap());
    let conflicts = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, conflicts) = (db.clone(), conflicts.clone());
            thread::spawn(move || {
                for i in 0..COMMITS_PER_THREAD {
                    let key = format!("hot{}", (t + i) % HOT_KEYS);
                    loop {
                        let txn = db.transaction();
                        let n = read_counter(txn.get_for_update(&key, true).unwrap());
                        thread::yield_now();
                        txn.put(&key, (n + 1).to_be_bytes()).unwrap();
                        txn.put(format!("log/{t}/{i}"), key.as_bytes()).unwrap();
                        match txn.commit() {
                            Ok(()) => break,
                            Err(e) if e.kind() == ErrorKind::Busy => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let sum: u64 = (0..HOT_KEYS)
        .map(|k| read_counter(db.get(format!("hot{k}")).unwrap()))
        .sum();
    assert_eq!(sum, THREADS * COMMITS_PER_THREAD);
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
    let db: Arc<TransactionDB<MultiThreaded>> =
        Arc::new(TransactionDB::open_default(dir.path().join("db")).unwrap());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            thread::spawn(move || {
                for i in 0..COMMITS_PER_THREAD {
                    let key = format!("hot{}", (t + i) % HOT_KEYS);
                    let txn = db.transaction();
                    let n = read_counter(txn.get_for_update(&key, true).unwrap());
                    thread::yield_now();
                    txn.put(&key, (n + 1).to_be_bytes()).unwrap();
                    txn.commit().unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let sum: u64 = (0..HOT_KEYS)
        .map(|k| read_counter(db.get(format!("hot{k}")).unwrap()))
        .sum();
    assert_eq!(sum, THREADS * COMMITS_PER_THREAD);
}
