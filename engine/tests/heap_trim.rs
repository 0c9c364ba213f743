//! Giving the index heap's free memory back: a database filled by writes
//! leaves free blocks in pages still in use (its data nodes were copied as
//! they grew); once its keyspace is quiet, the compaction thread packs the
//! leaves and gives back every small page that holds only free blocks.
//! Alone in its test binary: the heap is the whole process's.

use std::time::{Duration, Instant};

use alexdb_engine::index::{NodeHeapUsage, node_heap_usage};
use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

/// Free bytes of the heap besides the pages kept ready for writers.
fn idle(usage: NodeHeapUsage) -> u64 {
    usage.free_bytes - usage.ready_bytes
}

#[test]
fn a_quiet_database_gives_the_heaps_free_blocks_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let mut batch = WriteBatch::default();
    for i in 0..400_000u64 {
        batch.put(
            KS,
            &i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes(),
            b"v",
        );
        if i % 1000 == 999 {
            db.write(&std::mem::take(&mut batch), &WriteOptions::default())
                .unwrap();
        }
    }
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
    for i in (0..400_000u64).step_by(97) {
        let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        assert_eq!(db.get(KS, &key).unwrap().as_deref(), Some(&b"v"[..]));
    }
}
