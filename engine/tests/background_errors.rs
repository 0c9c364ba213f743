//! A background compaction pass that fails is not silent: its error is
//! kept for `Db::background_error` and counted, and damaged data found in
//! a compaction input stops writes (reads go on), as RocksDB stops writes
//! after a corruption found in the background.

mod common;

use std::time::{Duration, Instant};

use alexdb_engine::{Db, Error, Options, WriteOptions};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn a_corrupt_input_found_by_background_compaction_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        segment_bytes: 64 << 10,
        // Every segment holds a fifth of dead bytes: each is due.
        compaction_dead_ratio: 0.1,
        background_compaction: false,
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), options.clone()).unwrap();
        let ks = db.keyspace("default").unwrap();
        for round in 0..2u32 {
            for i in (0..4_000).filter(|i| round == 0 || i % 2 == 0) {
                db.put(
                    ks,
                    &key(i),
                    &[b'a' + round as u8; 100],
                    &WriteOptions::default(),
                )
                .unwrap();
            }
        }
    }
    // Damage a value in the middle of the oldest segment, from outside.
    let oldest = common::segment_files(dir.path())[0].clone();
    let mut bytes = std::fs::read(&oldest).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&oldest, &bytes).unwrap();

    let db = Db::open(
        dir.path(),
        Options {
            background_compaction: true,
            ..options
        },
    )
    .unwrap();
    let ks = db.keyspace("default").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while db.background_error().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let error = db.background_error().expect("the pass found the damage");
    assert!(error.contains("corruption"), "{error}");
    assert!(db.stats().compaction_errors >= 1);
    let refused = db
        .put(ks, b"after", b"1", &WriteOptions::default())
        .unwrap_err();
    assert!(matches!(refused, Error::Poisoned(_)), "{refused}");
    assert!(refused.to_string().contains("corruption"), "{refused}");
    // Reads of undamaged keys go on.
    assert!(db.get_copied(ks, &key(3_999)).unwrap().is_some());
}
