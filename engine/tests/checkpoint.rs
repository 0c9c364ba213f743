//! Checkpoints over many segments (sealed ones hard-linked, compaction
//! outputs included), and reading the log back as batches, including the
//! gap compaction leaves.

use std::collections::BTreeMap;

use alexdb_engine::format::record::RecordKind;
use alexdb_engine::{Db, Error, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

fn options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        compaction_dead_ratio: 0.3,
        background_compaction: false,
        ..Options::default()
    }
}

fn contents(db: &Db, ks: KeyspaceId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.cursor(ks, KeyRange::default())
        .unwrap()
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

fn write_rounds(db: &Db, rounds: u32) {
    let ks = db.keyspace("default").unwrap();
    for round in 0..rounds {
        for i in 0..300u32 {
            let value = vec![b'a' + (round % 26) as u8; 100];
            db.put(ks, &i.to_be_bytes(), &value, &WriteOptions::default())
                .unwrap();
        }
    }
}

#[test]
fn a_checkpoint_of_many_segments_opens_with_the_same_contents() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    write_rounds(&db, 6);
    db.compact().unwrap();
    write_rounds(&db, 3);
    assert!(db.stats().segments > 3, "the test needs sealed segments");
    let files = db.checkpoint(dir.path().join("cp")).unwrap();
    assert!(files.iter().filter(|f| f.immutable).count() >= 2);
    assert!(
        files
            .iter()
            .any(|f| !f.immutable && f.name.ends_with(".seg"))
    );
    let ks = db.keyspace("default").unwrap();
    let expected = contents(&db, ks);
    drop(db);

    let copy = Db::open(dir.path().join("cp"), options()).unwrap();
    let ks = copy.keyspace("default").unwrap();
    assert_eq!(contents(&copy, ks), expected);
    copy.verify().unwrap();
}

#[test]
fn batches_come_back_in_order_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let mut expected = Vec::new();
    for i in 0..2000u32 {
        let mut batch = WriteBatch::new();
        batch.put(ks, &i.to_be_bytes(), &[7; 60]);
        if i % 10 == 0 {
            batch.delete(ks, &(i / 2).to_be_bytes());
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
        expected.push(if i % 10 == 0 { 2 } else { 1 });
    }
    assert!(db.stats().segments > 1);
    let batches: Vec<_> = db.batches_since(0).unwrap().map(Result::unwrap).collect();
    assert_eq!(batches.len(), expected.len());
    let mut seq = 1;
    for (batch, records) in batches.iter().zip(&expected) {
        assert_eq!(batch.seq, seq);
        assert_eq!(batch.records.len(), *records);
        assert_eq!(batch.records[0].kind, RecordKind::Put);
        seq += *records as u64;
    }
    let tail: Vec<u64> = db
        .batches_since(seq - 2)
        .unwrap()
        .map(|b| b.unwrap().seq)
        .collect();
    assert_eq!(tail, [seq - 1]);
}

#[test]
fn history_compaction_removed_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    write_rounds(&db, 6);
    db.compact().unwrap();
    let outcome = db
        .batches_since(0)
        .and_then(|log| log.collect::<Result<Vec<_>, _>>());
    match outcome {
        Err(Error::HistoryGone { requested, oldest }) => assert!(requested < oldest),
        other => panic!("compaction replaced log segments, yet: {other:?}"),
    }
    let ks = db.keyspace("default").unwrap();
    for i in 0..5u32 {
        db.put(ks, &i.to_be_bytes(), b"after", &WriteOptions::default())
            .unwrap();
    }
    let latest = db.latest_sequence_number();
    let recent: Vec<_> = db
        .batches_since(latest - 5)
        .unwrap()
        .map(|b| b.unwrap().seq)
        .collect();
    assert_eq!(recent, (latest - 4..=latest).collect::<Vec<_>>());
}

#[test]
fn a_checkpoint_cleans_a_leftover_staging_directory_and_creates_missing_parents() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    write_rounds(&db, 2);
    let target = dir.path().join("backups").join("daily").join("cp");
    // A crash while an earlier checkpoint was assembled left its staging
    // directory behind.
    let staging = dir.path().join("backups").join("daily").join("cp.tmp");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("MANIFEST"), b"torn").unwrap();
    db.checkpoint(&target).unwrap();
    assert!(!staging.exists());
    match db.checkpoint(&target) {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("a second checkpoint into the same directory: {other:?}"),
    }
    let ks = db.keyspace("default").unwrap();
    let expected = contents(&db, ks);
    drop(db);
    let copy = Db::open(&target, options()).unwrap();
    let ks = copy.keyspace("default").unwrap();
    assert_eq!(contents(&copy, ks), expected);
}
