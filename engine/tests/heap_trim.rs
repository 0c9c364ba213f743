//! Giving the index heap's free memory back: a database filled by writes
//! leaves free blocks in pages still in use (its data nodes were copied as
//! they grew); once its keyspace is quiet, the compaction thread packs the
//! leaves and gives back every small page that holds only free blocks, and
//! the whole pages it keeps spare; so it does after overwrites, which leave
//! the key count unchanged.
//! Alone in its test binary: the heap is the whole process's.

use std::time::{Duration, Instant};

use alexdb_engine::index::{NodeHeapUsage, node_heap_usage};
use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

/// Keys the test writes.
const KEYS: u64 = 400_000;

/// Free bytes of the heap besides the pages kept ready for writers.
fn idle(usage: NodeHeapUsage) -> u64 {
    usage.free_bytes - usage.ready_bytes
}

#[test]
fn a_quiet_database_gives_the_heaps_free_blocks_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    write_all(&db, b"v");
    let written = node_heap_usage();
    assert!(
        idle(written) > written.used_bytes / 4,
        "the load left free blocks: {written:?}"
    );
    let start = Instant::now();
    let settled = loop {
        let usage = node_heap_usage();
        if idle(usage) <= usage.used_bytes / 4 {
            break usage;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "still {usage:?} after a minute (after the writes: {written:?})"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(settled.used_bytes < written.used_bytes / 2, "{settled:?}");
    assert_reads(&db, b"v");

    // Overwrites leave the key count as it was; the heap's spare pages
    // (and free blocks) still go back once the keyspace is quiet. The quiet
    // spell used to be noticed only by a change of the key count.
    write_all(&db, b"w");
    db.compact().unwrap();
    let overwritten = node_heap_usage();
    assert!(
        overwritten.free_bytes > 0,
        "the overwrites left nothing free: {overwritten:?}"
    );
    let start = Instant::now();
    loop {
        let usage = node_heap_usage();
        if usage.ready_bytes == 0 && idle(usage) <= usage.used_bytes / 4 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "still {usage:?} a minute after overwrites (then: {overwritten:?})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_reads(&db, b"w");
}

/// Puts every key of the test with `value`, in batches of 1,000.
fn write_all(db: &Db, value: &[u8]) {
    let mut batch = WriteBatch::default();
    for i in 0..KEYS {
        batch.put(KS, &key(i), value);
        if i % 1000 == 999 {
            db.write(&std::mem::take(&mut batch), &WriteOptions::default())
                .unwrap();
        }
    }
}

/// Checks every 97th key reads `value`.
fn assert_reads(db: &Db, value: &[u8]) {
    for i in (0..KEYS).step_by(97) {
        assert_eq!(db.get(KS, &key(i)).unwrap().as_deref(), Some(value));
    }
}

fn key(i: u64) -> [u8; 8] {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes()
}
