//! Writes from many threads at once are written as groups (one `pwrite`
//! per group): each batch stays atomic with its own sequence numbers, the
//! result is that of some serial order, a batch that fails its own checks
//! fails alone, and every acknowledged write survives a reopen.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use alexdb_engine::io::faulty::FaultyFileSystem;
use alexdb_engine::{
    Db, Error, KeyspaceId, MAX_KEY_BYTES, MergeFunction, Options, WatchedKey, WriteBatch,
    WriteOptions,
};

const THREADS: u64 = 8;
const BATCHES: u64 = 300;
/// Keys every batch sets to one value, so a non-serial interleaving of two
/// batches would leave them mixed.
const SHARED_KEYS: u32 = 6;

fn shared_key(i: u32) -> Vec<u8> {
    format!("shared:{i}").into_bytes()
}

fn own_key(thread: u64, n: u64) -> Vec<u8> {
    format!("own:{thread:02}:{n:05}").into_bytes()
}

fn add_u64() -> Arc<dyn MergeFunction> {
    Arc::new(|_: &[u8], existing: Option<&[u8]>, operand: &[u8]| {
        let old = existing.map_or(0, |e| u64::from_le_bytes(e.try_into().unwrap()));
        let add = u64::from_le_bytes(operand.try_into().ok()?);
        Some((old + add).to_le_bytes().to_vec())
    })
}

fn counter(db: &Db, ks: KeyspaceId) -> u64 {
    let v = db.get_copied(ks, b"counter").unwrap().unwrap();
    u64::from_le_bytes(v.as_slice().try_into().unwrap())
}

/// One thread's batch `n`: its own key, every shared key set to one value
/// naming the batch, and a merge of 1 into the counter; every third batch
/// is synced.
fn batch(ks: KeyspaceId, thread: u64, n: u64) -> (WriteBatch, WriteOptions) {
    let mut b = WriteBatch::new();
    b.put(ks, &own_key(thread, n), &n.to_le_bytes());
    let tag = format!("{thread}:{n}");
    for i in 0..SHARED_KEYS {
        b.put(ks, &shared_key(i), tag.as_bytes());
    }
    b.merge(ks, b"counter", &1u64.to_le_bytes());
    let opts = WriteOptions {
        sync: n.is_multiple_of(3),
        ..WriteOptions::default()
    };
    (b, opts)
}

/// A batch that must fail alone: a key over the maximum size, or a write
/// conditional on a key every batch changes.
fn doomed(db: &Db, ks: KeyspaceId, thread: u64, n: u64) -> Error {
    let mut b = WriteBatch::new();
    b.put(ks, &own_key(thread, n), b"must not exist");
    if n.is_multiple_of(2) {
        b.put(ks, &vec![b'k'; MAX_KEY_BYTES + 1], b"too long");
        return db.write(&b, &WriteOptions::default()).unwrap_err();
    }
    let watched = [WatchedKey {
        keyspace: ks,
        key: b"shared:0",
        since_seq: 0,
    }];
    db.write_unless_changed(&b, &WriteOptions::default(), &watched)
        .unwrap_err()
}

#[test]
fn concurrent_batches_equal_a_serial_order_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let acknowledged = Arc::new(AtomicU64::new(0));
    {
        let db = Arc::new(common::open(dir.path()));
        let ks = db.keyspace("default").unwrap();
        db.set_merge_function(ks, Some(add_u64())).unwrap();
        db.put(ks, b"shared:0", b"start", &WriteOptions::default())
            .unwrap();
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (db, acknowledged) = (db.clone(), acknowledged.clone());
                std::thread::spawn(move || {
                    for n in 0..BATCHES {
                        if n % 10 == 9 {
                            let err = doomed(&db, ks, t, n);
                            assert!(
                                matches!(err, Error::InvalidArgument(_) | Error::Conflict { .. }),
                                "{err}"
                            );
                            continue;
                        }
                        let (b, opts) = batch(ks, t, n);
                        db.write(&b, &opts).unwrap();
                        acknowledged.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        check_serial_state(&db, ks, acknowledged.load(Ordering::Relaxed));
    }
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    db.set_merge_function(ks, Some(add_u64())).unwrap();
    check_serial_state(&db, ks, acknowledged.load(Ordering::Relaxed));
    db.verify().unwrap();
}

/// The state some serial order of the acknowledged batches leaves: every
/// shared key names the same batch, the counter counts every batch, every
/// acknowledged own key is present and no failed batch left anything.
fn check_serial_state(db: &Db, ks: KeyspaceId, acknowledged: u64) {
    assert_eq!(acknowledged, THREADS * (BATCHES - BATCHES / 10));
    let values: Vec<Vec<u8>> = (0..SHARED_KEYS)
        .map(|i| db.get_copied(ks, &shared_key(i)).unwrap().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] == w[1]), "{values:?}");
    assert_eq!(counter(db, ks), acknowledged);
    for t in 0..THREADS {
        for n in 0..BATCHES {
            let got = db.get_copied(ks, &own_key(t, n)).unwrap();
            let expected = (n % 10 != 9).then(|| n.to_le_bytes().to_vec());
            assert_eq!(got, expected, "thread {t} batch {n}");
        }
    }
    // The last batch to set the shared keys is the last of its thread.
    let last = String::from_utf8(values[0].clone()).unwrap();
    let n: u64 = last.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(n, BATCHES - 2, "{last}");
}

#[test]
fn sequence_numbers_stay_per_batch_under_contention() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        background_compaction: false,
        ..common::small_options()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let ks = db.keyspace("default").unwrap();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for n in 0..200 {
                    let mut b = WriteBatch::new();
                    b.put(ks, &own_key(t, n), b"a");
                    b.delete(ks, &own_key(t, n + 1000));
                    b.put(ks, &own_key(t, n + 2000), b"b");
                    db.write(&b, &WriteOptions::default()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Three operations per batch, no number used twice or skipped.
    assert_eq!(db.latest_sequence_number(), 4 * 200 * 3);
    let mut next = 1;
    for batch in db.batches_since(0).unwrap() {
        let batch = batch.unwrap();
        assert_eq!(batch.seq, next);
        assert_eq!(batch.records.len(), 3);
        next += 3;
    }
    assert_eq!(next, 4 * 200 * 3 + 1);
}

#[test]
fn a_failed_group_write_fails_its_batches_and_refuses_later_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    let options = Options {
        file_system: Arc::new(fs.clone()),
        ..common::small_options()
    };
    let acknowledged: Arc<std::sync::Mutex<Vec<Vec<u8>>>> = Arc::default();
    {
        let db = Arc::new(Db::open(dir.path(), options).unwrap());
        let ks = db.keyspace("default").unwrap();
        let failing = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let (db, acknowledged, failing) =
                    (db.clone(), acknowledged.clone(), failing.clone());
                std::thread::spawn(move || {
                    for n in 0.. {
                        let key = own_key(t, n);
                        match db.put(ks, &key, b"v", &WriteOptions::default()) {
                            Ok(()) => acknowledged.lock().unwrap().push(key),
                            Err(e) => {
                                assert!(failing.load(Ordering::SeqCst), "{e}");
                                assert!(matches!(e, Error::Io { .. } | Error::Poisoned(_)), "{e}");
                                return;
                            }
                        }
                    }
                })
            })
            .collect();
        while acknowledged.lock().unwrap().len() < 2000 {
            std::thread::yield_now();
        }
        failing.store(true, Ordering::SeqCst);
        fs.faults.fail_writes.store(true, Ordering::SeqCst);
        for t in threads {
            t.join().unwrap();
        }
        let refused = db.put(ks, b"after", b"x", &WriteOptions::default());
        assert!(matches!(refused, Err(Error::Poisoned(_))), "{refused:?}");
        fs.faults.fail_writes.store(false, Ordering::SeqCst);
    }
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    for key in acknowledged.lock().unwrap().iter() {
        assert!(db.get_copied(ks, key).unwrap().is_some(), "{key:?} lost");
    }
}
