//! Applying a range delete does not hold writers: keys written again while
//! compaction removes the entries the range delete covers keep their new
//! versions, and the key count ends exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use alexdb_engine::{Db, Options, WriteBatch, WriteOptions};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

#[test]
fn keys_rewritten_while_a_range_delete_is_applied_keep_their_new_versions() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        background_compaction: false,
        ..Options::default()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let ks = db.keyspace("default").unwrap();
    let w = WriteOptions::default();
    const N: u32 = 60_000;
    for chunk in (0..N).collect::<Vec<_>>().chunks(1000) {
        let mut b = WriteBatch::new();
        chunk.iter().for_each(|&i| b.put(ks, &key(i), b"old"));
        db.write(&b, &w).unwrap();
    }
    let mut b = WriteBatch::new();
    b.delete_range(ks, &key(0), &key(N));
    db.write(&b, &w).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let mut rounds = 0u32;
            // Rewrite every 97th key, over and over, until the apply ends
            // (and at least once).
            while rounds == 0 || !done.load(Ordering::Acquire) {
                for i in (0..N).step_by(97) {
                    db.put(ks, &key(i), b"new", &WriteOptions::default())
                        .unwrap();
                }
                rounds += 1;
            }
            rounds
        })
    };
    db.compact().unwrap();
    done.store(true, Ordering::Release);
    let rounds = writer.join().unwrap();
    db.compact().unwrap();
    let rewritten = (0..N).step_by(97).count() as u64;
    for i in (0..N).step_by(97) {
        assert_eq!(
            db.get_copied(ks, &key(i)).unwrap().as_deref(),
            Some(&b"new"[..])
        );
    }
    assert_eq!(db.get_copied(ks, &key(1)).unwrap(), None);
    let stats = db.stats();
    assert_eq!(
        stats.live_keys, rewritten,
        "after {rounds} rounds of rewrites"
    );
    assert_eq!(stats.index_entries, rewritten);
}
