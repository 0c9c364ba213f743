//! Log-data records (record kind 5): a blob kept in the log with its
//! batch, returned by `batches_since`, taking no sequence number, never
//! read by key, kept across reopen, and a damaged one is corruption.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use alexdb_engine::format::record::RecordKind;
use alexdb_engine::{Db, Error, KeyspaceId, LoggedBatch, WriteBatch, WriteOptions};

const BLOB: &[u8] = b"log-data-blob-0123456789";

fn all_batches(db: &Db) -> Vec<LoggedBatch> {
    db.batches_since(0).unwrap().map(Result::unwrap).collect()
}

/// Writes `put a; log data; put b` then a batch of log data alone.
fn write_log_data(db: &Db, ks: KeyspaceId) {
    let mut batch = WriteBatch::new();
    batch.put(ks, b"a", b"1");
    batch.log_data(BLOB);
    batch.put(ks, b"b", b"2");
    assert_eq!(batch.len(), 2, "log data is not a counted operation");
    db.write(&batch, &WriteOptions::default()).unwrap();
    let mut alone = WriteBatch::new();
    alone.log_data(b"alone");
    db.write(&alone, &WriteOptions::default()).unwrap();
}

fn assert_logged(batches: &[LoggedBatch]) {
    assert_eq!(batches.len(), 2);
    let kinds: Vec<RecordKind> = batches[0].records.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [RecordKind::Put, RecordKind::LogData, RecordKind::Put]
    );
    assert_eq!(batches[0].seq, 1);
    assert_eq!(batches[0].records[1].value, BLOB);
    assert!(batches[0].records[1].key.is_empty());
    // A batch of log data alone starts where the next write will.
    assert_eq!(batches[1].seq, 3);
    assert_eq!(batches[1].records.len(), 1);
    assert_eq!(batches[1].records[0].value, b"alone");
}

fn assert_unread(db: &Db, ks: KeyspaceId) {
    assert_eq!(db.latest_sequence_number(), 2, "log data took a number");
    assert_eq!(db.get_copied(ks, b"").unwrap(), None);
    let keys: Vec<Vec<u8>> = common::scan_all(db, ks)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(db.live_keys(ks).unwrap(), 2);
}

#[test]
fn log_data_round_trips_through_batches_since_and_takes_no_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    write_log_data(&db, ks);
    assert_logged(&all_batches(&db));
    assert_unread(&db, ks);
    db.put(ks, b"c", b"3", &WriteOptions::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 3);
    let last = all_batches(&db).pop().unwrap();
    assert_eq!((last.seq, last.records[0].kind), (3, RecordKind::Put));
}

#[test]
fn log_data_survives_reopen_and_is_never_indexed() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        write_log_data(&db, ks);
    }
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    assert_logged(&all_batches(&db));
    assert_unread(&db, ks);
    db.verify().unwrap();
}

#[test]
fn log_data_of_an_empty_key_is_not_that_key_s_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    db.put(ks, b"", b"empty key", &WriteOptions::default())
        .unwrap();
    let mut batch = WriteBatch::new();
    batch.log_data(BLOB);
    db.write(&batch, &WriteOptions::default()).unwrap();
    assert_eq!(db.get_copied(ks, b"").unwrap().unwrap(), b"empty key");
    db.compact().unwrap();
    assert_eq!(db.get_copied(ks, b"").unwrap().unwrap(), b"empty key");
    drop(db);
    let db = common::open(dir.path());
    assert_eq!(db.get_copied(ks, b"").unwrap().unwrap(), b"empty key");
}

fn only_segment(dir: &Path) -> PathBuf {
    let segs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .collect();
    assert_eq!(segs.len(), 1);
    segs[0].clone()
}

#[test]
fn a_damaged_log_data_record_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        write_log_data(&db, ks);
        db.put(ks, b"after", b"x", &WriteOptions::synced()).unwrap();
    }
    let seg = only_segment(dir.path());
    let mut bytes = fs::read(&seg).unwrap();
    let at = bytes
        .windows(BLOB.len())
        .position(|w| w == BLOB)
        .expect("the blob is in the log");
    bytes[at + 3] ^= 0x20;
    fs::write(&seg, &bytes).unwrap();
    // The clean close's index checkpoint covers the record: the open reads
    // nothing below its cut, and `verify` reports the damage.
    let db = Db::open(dir.path(), common::small_options()).unwrap();
    match db.verify() {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, seg),
        Err(other) => panic!("wrong error: {other}"),
        Ok(()) => panic!("a flipped log-data byte went unnoticed by verify"),
    }
    drop(db);
    // Without the checkpoint, the open reads the segment and reports it.
    fs::remove_file(
        dir.path()
            .join(alexdb_engine::format::index_checkpoint::INDEX_FILE),
    )
    .unwrap();
    match Db::open(dir.path(), common::small_options()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, seg),
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a flipped log-data byte went unnoticed"),
    }
}

#[test]
fn trailing_log_data_keeps_the_number_an_empty_range_delete_took_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        let mut batch = WriteBatch::new();
        batch.put(ks, b"a", b"1");
        batch.delete_range(ks, b"z", b"a"); // empty: no record, one number
        batch.log_data(BLOB);
        db.write(&batch, &WriteOptions::default()).unwrap();
        assert_eq!(db.latest_sequence_number(), 2);
    }
    let db = common::open(dir.path());
    assert_eq!(db.latest_sequence_number(), 2);
}
