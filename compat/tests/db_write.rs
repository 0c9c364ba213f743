//! Writes through the database: single puts and deletes, batches across
//! column families, malformed batches, sequence numbers, sync options and
//! what survives a reopen.

use alexdb as rocksdb;

use rocksdb::{DB, ErrorKind, IteratorMode, Options, WriteBatch, WriteOptions};

fn open_cf() -> (tempfile::TempDir, std::path::PathBuf, DB) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, &path, ["cf"]).unwrap();
    (dir, path, db)
}

#[test]
fn put_get_delete_and_their_opt_forms() {
    let (_dir, _path, db) = open_cf();
    db.put(b"k", b"v1").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v1".to_vec()));
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.put_opt(b"k", b"v2", &sync).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v2".to_vec()));
    db.delete_opt(b"k", &sync).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
    db.delete(b"never-written").unwrap();
    db.put(b"", b"empty key").unwrap();
    assert_eq!(db.get(b"").unwrap(), Some(b"empty key".to_vec()));
    db.put(b"empty value", b"").unwrap();
    assert_eq!(db.get(b"empty value").unwrap(), Some(Vec::new()));
}

#[test]
fn a_batch_applies_across_families_at_once() {
    let (_dir, _path, db) = open_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put(b"old", b"x").unwrap();
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.put_cf(&cf, b"b", b"2");
    batch.delete(b"old");
    assert_eq!(batch.len(), 3);
    db.write(batch).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get_cf(&cf, b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"old").unwrap(), None);
}

#[test]
fn the_sequence_number_counts_operations() {
    let (_dir, _path, db) = open_cf();
    assert_eq!(db.latest_sequence_number(), 0);
    db.put(b"a", b"1").unwrap();
    assert_eq!(db.latest_sequence_number(), 1);
    let mut batch = WriteBatch::default();
    batch.put(b"b", b"2");
    batch.put(b"c", b"3");
    batch.delete(b"a");
    db.write(batch).unwrap();
    assert_eq!(db.latest_sequence_number(), 4);
    db.write(WriteBatch::default()).unwrap();
    assert_eq!(db.latest_sequence_number(), 4);
}

#[test]
fn a_batch_round_trips_through_its_bytes() {
    let (_dir, _path, db) = open_cf();
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.delete(b"b");
    let copy = WriteBatch::from_data(batch.data());
    db.write(copy).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn a_malformed_batch_is_refused_and_writes_nothing() {
    let (_dir, _path, db) = open_cf();
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.put(b"b", b"2");
    let data = batch.data();
    let err = db
        .write(WriteBatch::from_data(&data[..data.len() - 1]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    let mut wrong_count = data.to_vec();
    wrong_count[8] = 3;
    let err = db.write(WriteBatch::from_data(&wrong_count)).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: WriteBatch has wrong count");
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.latest_sequence_number(), 0);
}

#[test]
fn merges_without_a_merge_operator_fail_as_in_rocksdb() {
    let (_dir, _path, db) = open_cf();
    let err = db.merge(b"k", b"1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.merge(b"k", b"1");
    assert_eq!(
        db.write(batch).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        db.get(b"a").unwrap(),
        None,
        "a refused batch writes nothing"
    );
}

#[test]
fn writes_survive_a_reopen() {
    let (_dir, path, db) = open_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put(b"a", b"1").unwrap();
    db.put_cf(&cf, b"b", b"2").unwrap();
    let mut wo = WriteOptions::default();
    wo.disable_wal(true);
    db.put_opt(b"c", b"3", &wo).unwrap();
    db.flush().unwrap();
    let seq = db.latest_sequence_number();
    drop(db);

    let db = DB::open_cf(&Options::default(), &path, ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"c").unwrap(), Some(b"3".to_vec()));
    assert_eq!(db.get_cf(&cf, b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.latest_sequence_number(), seq);
}

#[test]
fn flush_wal_and_compaction_keep_every_key() {
    let (_dir, _path, db) = open_cf();
    for i in 0..500u32 {
        db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
    }
    for i in (0..500u32).step_by(2) {
        db.delete(i.to_be_bytes()).unwrap();
    }
    db.flush_wal(true).unwrap();
    db.flush_wal(false).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let cf = db.cf_handle("cf").unwrap();
    db.compact_range_cf(&cf, Some(b"a"), Some(b"z"));
    assert_eq!(db.iterator(IteratorMode::Start).count(), 250);
    assert_eq!(
        db.get(1u32.to_be_bytes()).unwrap(),
        Some(1u32.to_le_bytes().to_vec())
    );
}

#[test]
fn delete_range_in_a_batch_covers_keys_put_earlier_in_the_same_batch() {
    // Each record of a batch gets its own sequence number, so a range delete
    // covers every earlier write of the batch, as in RocksDB.
    let (_dir, _path, db) = open_cf();
    let cf = db.cf_handle("cf").unwrap();
    let mut batch = WriteBatch::default();
    batch.put_cf(&cf, b"b", b"1");
    batch.delete_range_cf(&cf, b"a", b"c");
    db.write(batch).unwrap();
    assert_eq!(db.get_cf(&cf, b"b").unwrap(), None);
}
