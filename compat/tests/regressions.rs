//! Differences from the real `rocksdb` crate found by `differential.rs`,
//! each kept as a named case with the result RocksDB gives.

use alexdb as rocksdb;

use rocksdb::{DBWithThreadMode, ErrorKind, IteratorMode, Options, SingleThreaded, WriteBatch};

type DB = DBWithThreadMode<SingleThreaded>;

fn open_cf() -> (tempfile::TempDir, DB) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, dir.path().join("db"), ["cf1"]).unwrap();
    (dir, db)
}

fn keys(db: &DB) -> Vec<Vec<u8>> {
    let cf = db.cf_handle("cf1").unwrap();
    db.iterator_cf(cf, IteratorMode::Start)
        .map(|item| item.unwrap().0.into_vec())
        .collect()
}

/// RocksDB names the column families left out of an open newest first
/// (alexdb listed them oldest first).
#[test]
fn families_not_opened_are_listed_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    {
        let mut db = DB::open(&opts, &path).unwrap();
        for name in ["cf2", "cf1", "cf3"] {
            db.create_cf(name, &Options::default()).unwrap();
        }
        db.drop_cf("cf2").unwrap();
        db.create_cf("cf2", &Options::default()).unwrap();
    }
    let err = DB::open(&opts, &path).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: Column families not opened: cf2, cf3, cf1"
    );
}

/// RocksDB refuses a range delete whose end comes before its start with
/// `Invalid argument: end key comes before start key` (alexdb deleted
/// nothing and returned `Ok`). An empty range (`from == to`) is fine.
#[test]
fn reversed_delete_range_is_invalid_argument() {
    let (_dir, db) = open_cf();
    let cf = db.cf_handle("cf1").unwrap();
    db.put_cf(cf, b"b", b"1").unwrap();
    let err = db.delete_range_cf(cf, b"c", b"a").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        "Invalid argument: end key comes before start key"
    );
    db.delete_range_cf(cf, b"b", b"b").unwrap();
    assert_eq!(keys(&db), [b"b".to_vec()]);

    // In a batch the whole batch is refused (RocksDB applies the records
    // before the range and then refuses every later write; alexdb writes
    // nothing and stays writable).
    let mut batch = WriteBatch::default();
    batch.put_cf(cf, b"x", b"2");
    batch.delete_range_cf(cf, &b"\xff"[..], &b""[..]);
    let err = db.write(batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(keys(&db), [b"b".to_vec()]);
    db.put_cf(cf, b"y", b"3").unwrap();
}

/// A batch whose last operations log no record (range deletes over ranges
/// with no live key) still consumes their sequence numbers; the engine once
/// recorded nothing of them on disk, so a reopen came back lower. RocksDB
/// keeps `latest_sequence_number` across a reopen; the engine now logs a
/// sequence mark. Found by `differential.rs`.
#[test]
fn sequence_number_of_a_trailing_empty_range_delete_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let before = {
        let db = DB::open_cf(&opts, &path, ["cf1"]).unwrap();
        let cf = db.cf_handle("cf1").unwrap();
        db.put_cf(cf, b"a", b"1").unwrap();
        db.delete_range_cf(cf, b"x", b"y").unwrap();
        assert_eq!(db.latest_sequence_number(), 2);
        db.latest_sequence_number()
    };
    let db = DB::open_cf(&opts, &path, ["cf1"]).unwrap();
    assert_eq!(db.latest_sequence_number(), before);
}
