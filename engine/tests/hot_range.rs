//! A hot range through the database: new keys pour into the gap
//! between two neighbours of a loaded keyspace. The subtree over the gap
//! outgrows what a writer may rebuild under the lock; the compaction
//! thread rebuilds it to the side while writes go on, every key stays
//! readable, and a reopen (from the index checkpoint the close writes)
//! finds them all.

use std::time::{Duration, Instant};

use alexdb_engine::index::SIDE_REBUILD_KEYS;
use alexdb_engine::{Db, Options, WriteBatch, WriteOptions};

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn value(key: u64) -> Vec<u8> {
    key.to_le_bytes().repeat(2)
}

#[test]
fn a_hot_range_is_rebuilt_to_the_side_and_keeps_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.create_keyspace("hot").unwrap();
    let wo = WriteOptions::default();
    let mut loaded: Vec<u64> = (0..400_000).map(mix).collect();
    for chunk in loaded.chunks(1_000) {
        let mut batch = WriteBatch::new();
        for k in chunk {
            batch.put(ks, &k.to_be_bytes(), &value(*k));
        }
        db.write(&batch, &wo).unwrap();
    }
    loaded.sort_unstable();
    let (lo, hi) = (loaded[loaded.len() / 2], loaded[loaded.len() / 2 + 1]);
    let hot: Vec<u64> = (0..250_000)
        .map(|i| lo + 1 + mix(!i) % (hi - lo - 1))
        .collect();
    for (i, k) in hot.iter().enumerate() {
        // Single puts and small batches, as clients write.
        if i % 2 == 0 {
            db.put(ks, &k.to_be_bytes(), &value(*k), &wo).unwrap();
        } else {
            let mut batch = WriteBatch::new();
            batch.put(ks, &k.to_be_bytes(), &value(*k));
            db.write(&batch, &wo).unwrap();
        }
    }
    // The compaction thread was asked for the rebuild; wait for it (a
    // bounded wait on progress, not a timing assertion).
    let deadline = Instant::now() + Duration::from_secs(120);
    let stats = loop {
        let stats = db.index_stats(ks).unwrap();
        if stats.side_rebuilds > 0 || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(stats.side_rebuilds > 0, "no rebuild to the side: {stats:?}");
    assert!(
        stats.largest_rebuild <= SIDE_REBUILD_KEYS as u64,
        "{stats:?}"
    );
    let check = |db: &Db| {
        for k in loaded.iter().step_by(7).chain(&hot) {
            let got = db.get(ks, &k.to_be_bytes()).unwrap();
            assert_eq!(got.as_deref(), Some(value(*k).as_slice()), "key {k:x}");
        }
    };
    check(&db);
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check(&db);
}
