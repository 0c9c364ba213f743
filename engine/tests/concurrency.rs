//! Stress: writers put batches that set every key of a group to one value
//! while readers (single and batched gets), iterators and long-lived
//! snapshots check that they never
//! see a mix of two batches and that a snapshot's view never changes, with
//! background and explicit compaction running all along.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

const KEYS: u32 = 12;

fn key(i: u32) -> Vec<u8> {
    format!("group:{i:03}").into_bytes()
}

fn options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        compaction_dead_ratio: 0.3,
        ..Options::default()
    }
}

fn check_uniform(values: &[Vec<u8>], what: &str, violations: &AtomicU64) {
    if values.len() != KEYS as usize || values.windows(2).any(|w| w[0] != w[1]) {
        violations.fetch_add(1, Ordering::Relaxed);
        eprintln!("{what}: mixed view {values:?}");
    }
}

/// The group's values read in one batched get (one implicit snapshot).
fn batched_values(db: &Db, ks: KeyspaceId) -> Vec<Vec<u8>> {
    let keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut values = Vec::new();
    db.get_many_with(ks, &keys, |_, value| {
        values.extend(value.unwrap().map(<[u8]>::to_vec));
    })
    .unwrap();
    values
}

fn snapshot_values(db: &Db, ks: KeyspaceId) -> Vec<Vec<u8>> {
    let snap = db.snapshot();
    (0..KEYS)
        .filter_map(|i| snap.get(ks, &key(i)).unwrap().map(|v| v.to_vec()))
        .collect()
}

#[test]
fn readers_never_see_partial_batches_and_snapshots_never_change() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), options()).unwrap());
    let ks = db.keyspace("default").unwrap();
    let mut first = WriteBatch::new();
    for i in 0..KEYS {
        first.put(ks, &key(i), b"initial");
    }
    db.write(&first, &WriteOptions::default()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let violations = Arc::new(AtomicU64::new(0));
    let reads = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for w in 0..2u8 {
        let (db, stop) = (db.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut b = WriteBatch::new();
                let value = format!("writer{w}:{n}:{}", "x".repeat((n % 200) as usize));
                for i in 0..KEYS {
                    b.put(ks, &key(i), value.as_bytes());
                }
                b.put(ks, format!("filler:{w}:{}", n % 500).as_bytes(), &[w; 100]);
                db.write(&b, &WriteOptions::default()).unwrap();
                n += 1;
            }
        }));
    }
    for _ in 0..2 {
        let (db, stop, violations, reads) =
            (db.clone(), stop.clone(), violations.clone(), reads.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                check_uniform(&snapshot_values(&db, ks), "snapshot gets", &violations);
                check_uniform(&batched_values(&db, ks), "batched gets", &violations);
                let mut c = db
                    .cursor(
                        ks,
                        KeyRange {
                            lower: Some(b"group:".to_vec()),
                            upper: Some(b"group;".to_vec()),
                        },
                    )
                    .unwrap();
                c.seek_to_first();
                let scanned: Vec<Vec<u8>> = c.map(|r| r.unwrap().1.into_vec()).collect();
                check_uniform(&scanned, "iterator", &violations);
                reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    {
        let (db, stop, violations) = (db.clone(), stop.clone(), violations.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                let frozen: Vec<_> = (0..KEYS)
                    .map(|i| snap.get(ks, &key(i)).unwrap().map(|v| v.to_vec()))
                    .collect();
                let started = Instant::now();
                while started.elapsed() < Duration::from_millis(200) {
                    let again: Vec<_> = (0..KEYS)
                        .map(|i| snap.get(ks, &key(i)).unwrap().map(|v| v.to_vec()))
                        .collect();
                    if again != frozen {
                        violations.fetch_add(1, Ordering::Relaxed);
                        eprintln!("snapshot changed under us");
                    }
                    let keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
                    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                    let mut batched = Vec::new();
                    snap.get_many_with(ks, &keys, |_, v| {
                        batched.push(v.unwrap().map(<[u8]>::to_vec))
                    })
                    .unwrap();
                    if batched != frozen {
                        violations.fetch_add(1, Ordering::Relaxed);
                        eprintln!("a snapshot's batched get disagrees with its gets");
                    }
                    let mut c = snap.cursor(ks, KeyRange::default()).unwrap();
                    c.seek(b"group:");
                    let scanned: Vec<_> = c
                        .take(KEYS as usize)
                        .map(|r| Some(r.unwrap().1.into_vec()))
                        .collect();
                    if scanned != frozen {
                        violations.fetch_add(1, Ordering::Relaxed);
                        eprintln!("snapshot cursor disagrees with snapshot gets");
                    }
                }
            }
        }));
    }
    {
        let (db, stop) = (db.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                db.compact().unwrap();
                std::thread::sleep(Duration::from_millis(150));
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(violations.load(Ordering::Relaxed), 0);
    assert!(reads.load(Ordering::Relaxed) > 10);
    let stats = db.stats();
    assert!(stats.compactions > 0, "{stats:?}");
    assert_eq!(stats.compaction_errors, 0);
    db.verify().unwrap();
}

#[test]
fn handle_and_owned_cursors_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<Db>();
    assert_send_sync::<alexdb_engine::Snapshot>();
    assert_send::<alexdb_engine::Cursor>();
    assert_send_sync::<alexdb_engine::ValueRef>();
}
