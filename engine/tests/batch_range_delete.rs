//! Regressions found while building the rocksdb-compatible layer on the
//! engine: range deletes within batches.

use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

const DEFAULT: KeyspaceId = KeyspaceId(0);

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
    (dir, db)
}

/// A range delete covers keys put by earlier operations of its own batch,
/// as in RocksDB (it once expanded only to keys stored before the batch).
#[test]
fn range_delete_covers_earlier_puts_of_its_batch() {
    let (_dir, db) = open();
    let mut batch = WriteBatch::new();
    batch.put(DEFAULT, b"b", b"1");
    batch.delete_range(DEFAULT, b"a", b"c");
    db.write(&batch, &WriteOptions::default()).unwrap();
    assert!(db.get(DEFAULT, b"b").unwrap().is_none());
}

/// A range delete consumes exactly one sequence number, whatever it covers,
/// as in RocksDB (it once consumed one per deleted key).
#[test]
fn range_delete_uses_one_sequence_number() {
    let (_dir, db) = open();
    for key in [b"a", b"b", b"c"] {
        db.put(DEFAULT, key, key, &WriteOptions::default()).unwrap();
    }
    let mut batch = WriteBatch::new();
    batch.delete_range(DEFAULT, b"a", b"z");
    db.write(&batch, &WriteOptions::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 4);
    let mut empty_range = WriteBatch::new();
    empty_range.delete_range(DEFAULT, b"x", b"y");
    db.write(&empty_range, &WriteOptions::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 5);
}

/// Sequence numbers consumed by operations that log no record (range
/// deletes of empty ranges, alone or at the end of a batch) survive a
/// reopen, as in RocksDB (they were once lost).
#[test]
fn sequence_numbers_of_trailing_empty_range_deletes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Db::open(&path, Options::default()).unwrap();
        db.put(DEFAULT, b"a", b"1", &WriteOptions::default())
            .unwrap();
        let mut alone = WriteBatch::new();
        alone.delete_range(DEFAULT, b"x", b"y");
        db.write(&alone, &WriteOptions::default()).unwrap();
        let mut trailing = WriteBatch::new();
        trailing.put(DEFAULT, b"b", b"2");
        trailing.delete_range(DEFAULT, b"x", b"y");
        trailing.delete_range(DEFAULT, b"p", b"q");
        db.write(&trailing, &WriteOptions::default()).unwrap();
        assert_eq!(db.latest_sequence_number(), 5);
    }
    let db = Db::open(&path, Options::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 5);
    db.put(DEFAULT, b"c", b"3", &WriteOptions::default())
        .unwrap();
    assert_eq!(db.latest_sequence_number(), 6);
    db.compact().unwrap();
    drop(db);
    let db = Db::open(&path, Options::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 6);
    assert_eq!(db.get(DEFAULT, b"b").unwrap().as_deref(), Some(&b"2"[..]));
}
