//! A quiet index returns to the size an open gives it: overwrites move
//! keys to the log (their packed leaves go wide), compaction moves them
//! into new runs (the leaves keep slots for the segments left behind);
//! once the keyspace is quiet, the compaction thread re-encodes those
//! leaves as an open would.
//! Alone in its test binary: the index heap is the whole process's.

use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

/// Keys the test writes.
const KEYS: u64 = 300_000;

#[test]
fn overwrites_and_compactions_leave_the_index_its_size_after_an_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        write(&db, (0..KEYS).collect(), b"v");
        db.compact().unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let opened = db.stats().index_bytes;
    for round in 0..3u64 {
        // A third of the keys, spread over the whole key space.
        let keys = (0..KEYS).filter(|i| (i + round) % 3 == 0).collect();
        write(&db, keys, &[b'a' + round as u8; 16]);
        db.compact().unwrap();
    }
    let written = db.stats().index_bytes;
    let start = Instant::now();
    loop {
        let now = db.stats().index_bytes;
        if (now as f64) <= opened as f64 * 1.05 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the index holds {now} bytes a minute after the writes \
             ({written} right after them, {opened} after the open)"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for i in (0..KEYS).step_by(89) {
        let expected = match i % 3 {
            0 => b'a',
            1 => b'c',
            _ => b'b',
        };
        assert_eq!(
            db.get(KS, &key(i)).unwrap().as_deref(),
            Some(&[expected; 16][..])
        );
    }
}

/// Puts `keys` with `value`, in batches of 1,000.
fn write(db: &Db, keys: Vec<u64>, value: &[u8]) {
    for chunk in keys.chunks(1000) {
        let mut batch = WriteBatch::default();
        for &i in chunk {
            batch.put(KS, &key(i), value);
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }
}

fn key(i: u64) -> [u8; 8] {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes()
}
