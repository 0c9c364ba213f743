//! Column families: create, drop, list, open rules and their RocksDB error
//! messages, handles passed as `cf` and `&cf`, and range deletes.

use alexdb as rocksdb;

use rocksdb::{
    ColumnFamilyDescriptor, DBWithThreadMode, DEFAULT_COLUMN_FAMILY_NAME, ErrorKind, IteratorMode,
    MultiThreaded, Options, SingleThreaded, WriteBatch,
};

/// The default `DB` type (the `multi-threaded-cf` feature switches it).
type DB = DBWithThreadMode<SingleThreaded>;

fn create_opts() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

fn fresh() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    (dir, path)
}

#[test]
fn created_families_are_listed_and_must_be_named_to_reopen() {
    let (_dir, path) = fresh();
    {
        let mut db: DBWithThreadMode<SingleThreaded> =
            DBWithThreadMode::open_default(&path).unwrap();
        db.create_cf("cf1", &Options::default()).unwrap();
        db.create_cf("cf2", &Options::default()).unwrap();
        assert!(db.cf_handle("cf1").is_some());
    }
    assert_eq!(
        DB::list_cf(&Options::default(), &path).unwrap(),
        [DEFAULT_COLUMN_FAMILY_NAME, "cf1", "cf2"]
    );
    let err = DB::open(&Options::default(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        // Newest first, as RocksDB lists them (found by differential.rs).
        "Invalid argument: Column families not opened: cf2, cf1"
    );
    let err = DB::open_cf(&Options::default(), &path, ["cf2"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: Column families not opened: cf1"
    );

    let names = DB::list_cf(&Options::default(), &path).unwrap();
    let db = DB::open_cf(&Options::default(), &path, &names).unwrap();
    assert!(db.cf_handle("cf1").is_some());
    assert!(db.cf_handle("default").is_some());
}

#[test]
fn open_leaves_no_handle_for_the_default_family() {
    let (_dir, path) = fresh();
    let db = DB::open_default(&path).unwrap();
    assert!(db.cf_handle(DEFAULT_COLUMN_FAMILY_NAME).is_none());
    drop(db);
    let db = DB::open_cf(&Options::default(), &path, [DEFAULT_COLUMN_FAMILY_NAME]).unwrap();
    let default = db.cf_handle(DEFAULT_COLUMN_FAMILY_NAME).unwrap();
    db.put_cf(&default, b"k", b"v").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_missing_family_is_created_only_when_asked() {
    let (_dir, path) = fresh();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let err = DB::open_cf(&opts, &path, ["cf1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: Column family not found: cf1"
    );
    let db = DB::open_cf(&create_opts(), &path, ["cf1"]).unwrap();
    assert!(db.cf_handle("cf1").is_some());
}

#[test]
fn list_cf_of_a_missing_database_is_an_io_error() {
    let (_dir, path) = fresh();
    let err = DB::list_cf(&Options::default(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError);
    assert!(err.to_string().contains("CURRENT"), "{err}");
}

#[test]
fn families_keep_their_keys_apart() {
    let (_dir, path) = fresh();
    let db = DB::open_cf(&create_opts(), &path, ["a", "b"]).unwrap();
    let a = db.cf_handle("a").unwrap();
    let b = db.cf_handle("b").unwrap();
    db.put_cf(&a, b"k", b"in a").unwrap();
    db.put_cf(&b, b"k", b"in b").unwrap();
    db.put(b"k", b"in default").unwrap();
    assert_eq!(db.get_cf(&a, b"k").unwrap(), Some(b"in a".to_vec()));
    assert_eq!(db.get_cf(&b, b"k").unwrap(), Some(b"in b".to_vec()));
    assert_eq!(db.get(b"k").unwrap(), Some(b"in default".to_vec()));
    db.delete_cf(&a, b"k").unwrap();
    assert_eq!(db.get_cf(&a, b"k").unwrap(), None);
    assert_eq!(db.iterator_cf(&b, IteratorMode::Start).count(), 1);
}

#[test]
fn descriptors_open_families_with_their_own_options() {
    let (_dir, path) = fresh();
    let mut cf_opts = Options::default();
    cf_opts.set_max_write_buffer_number(16);
    let cfs = vec![ColumnFamilyDescriptor::new("cf1", cf_opts)];
    let db = DB::open_cf_descriptors(&create_opts(), &path, cfs).unwrap();
    db.put_cf(db.cf_handle("cf1").unwrap(), b"k", b"v").unwrap();
    drop(db);
    let db =
        DB::open_cf_with_opts(&Options::default(), &path, [("cf1", Options::default())]).unwrap();
    assert_eq!(
        db.get_cf(db.cf_handle("cf1").unwrap(), b"k").unwrap(),
        Some(b"v".to_vec())
    );
}

#[test]
fn creating_an_existing_family_fails() {
    let (_dir, path) = fresh();
    let mut db = DB::open_cf(&create_opts(), &path, ["cf1"]).unwrap();
    let err = db.create_cf("cf1", &Options::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn dropping_a_family_removes_its_keys_and_frees_its_space() {
    let (_dir, path) = fresh();
    let mut db = DB::open_default(&path).unwrap();
    let blob = vec![7u8; 64 * 1024];
    for round in 0..5 {
        let name = format!("cf{round}");
        db.create_cf(&name, &Options::default()).unwrap();
        let cf = db.cf_handle(&name).unwrap();
        let mut batch = WriteBatch::default();
        for i in 0..200u32 {
            batch.put_cf(&cf, i.to_be_bytes(), &blob);
        }
        db.write(batch).unwrap();
        db.flush_cf(&cf).unwrap();
        db.drop_cf(&name).unwrap();
        assert!(db.cf_handle(&name).is_none());
    }
    let live = db
        .property_int_value("rocksdb.estimate-live-data-size")
        .unwrap()
        .unwrap();
    assert!(
        live < 1024 * 1024,
        "{live} live bytes after dropping everything"
    );
    let data = db
        .property_int_value("rocksdb.total-sst-files-size")
        .unwrap()
        .unwrap();
    assert!(
        data < 1024 * 1024,
        "{data} bytes of records kept after dropping everything"
    );
    assert_eq!(
        DB::list_cf(&Options::default(), &path).unwrap(),
        ["default"]
    );
}

#[test]
fn dropping_an_unknown_family_fails_like_rocksdb() {
    let (_dir, path) = fresh();
    let mut db = DB::open_default(&path).unwrap();
    let err = db.drop_cf("nope").unwrap_err();
    assert_eq!(err.to_string(), "Invalid column family: nope");
}

#[test]
fn writes_to_a_dropped_family_fail_unless_ignored() {
    let (_dir, path) = fresh();
    let db: DBWithThreadMode<MultiThreaded> =
        DBWithThreadMode::open_cf(&create_opts(), &path, ["cf1"]).unwrap();
    let cf = db.cf_handle("cf1").unwrap();
    db.drop_cf("cf1").unwrap();
    let err = db.put_cf(&cf, b"k", b"v").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: Invalid column family specified in write batch"
    );
    let mut batch = WriteBatch::default();
    batch.put_cf(&cf, b"k", b"v");
    batch.put(b"k", b"v");
    let mut opts = rocksdb::WriteOptions::default();
    opts.set_ignore_missing_column_families(true);
    db.write_opt(batch, &opts).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn multi_threaded_mode_creates_and_drops_through_shared_references() {
    let (_dir, path) = fresh();
    let db = std::sync::Arc::new(DBWithThreadMode::<MultiThreaded>::open_default(&path).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let name = format!("cf{t}");
                db.create_cf(&name, &Options::default()).unwrap();
                let cf = db.cf_handle(&name).unwrap();
                db.put_cf(&cf, b"k", name.as_bytes()).unwrap();
                assert_eq!(db.get_cf(&cf, b"k").unwrap(), Some(name.into_bytes()));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(DB::list_cf(&Options::default(), &path).unwrap().len(), 5);
    db.drop_cf("cf0").unwrap();
    assert!(db.cf_handle("cf0").is_none());
}

#[test]
fn delete_range_cf_removes_the_half_open_range() {
    let (_dir, path) = fresh();
    let db = DB::open_cf(&create_opts(), &path, ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    for key in ["a", "b", "c", "d"] {
        db.put_cf(&cf, key, key).unwrap();
    }
    db.delete_range_cf(&cf, b"b", b"d").unwrap();
    let left: Vec<_> = db
        .iterator_cf(&cf, IteratorMode::Start)
        .map(|item| item.unwrap().0.into_vec())
        .collect();
    assert_eq!(left, [b"a".to_vec(), b"d".to_vec()]);
}

/// In multi-threaded mode a handle that outlives `drop_cf` still reads the
/// dropped family, as in RocksDB (rust-rocksdb's
/// `test_no_leaked_column_family`); writes through it fail, the name is
/// free at once, a reopen does not see the family, and its space is given
/// back once the last handle goes.
#[test]
fn a_handle_that_outlives_drop_cf_still_reads_the_family() {
    let (_dir, path) = fresh();
    let db = DBWithThreadMode::<MultiThreaded>::open(&create_opts(), &path).unwrap();
    // The default family's share of the data is all of it.
    db.put("anchor", "x").unwrap();
    db.create_cf("cf", &Options::default()).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    let blob = vec![0x20u8; 1 << 20];
    for i in 0..40 {
        db.put_cf(&cf, format!("k{i}"), &blob).unwrap();
    }
    db.drop_cf("cf").unwrap();
    assert!(db.cf_handle("cf").is_none());
    assert_eq!(db.get_cf(&cf, "k0").unwrap().as_deref(), Some(&blob[..]));
    assert_eq!(db.iterator_cf(&cf, IteratorMode::Start).count(), 40);
    assert!(
        db.put_cf(&cf, "new", "v").is_err(),
        "a dropped family takes no writes"
    );
    db.create_cf("cf", &Options::default()).unwrap();
    let again = db.cf_handle("cf").unwrap();
    assert_eq!(db.get_cf(&again, "k0").unwrap(), None);
    assert_eq!(db.get_cf(&cf, "k0").unwrap().as_deref(), Some(&blob[..]));
    let held = db
        .property_int_value("rocksdb.total-sst-files-size")
        .unwrap()
        .unwrap();
    drop(cf);
    db.compact_range::<&[u8], &[u8]>(None, None);
    let freed = db
        .property_int_value("rocksdb.total-sst-files-size")
        .unwrap()
        .unwrap();
    assert!(
        freed < held,
        "{freed} of {held} bytes left after the last handle went"
    );
    drop(again);
    drop(db);
    let db = DBWithThreadMode::<MultiThreaded>::open_cf(&create_opts(), &path, ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    assert_eq!(db.get_cf(&cf, "k0").unwrap(), None);
}

/// `drop_cf` frees the family's space before it returns (no handle
/// outlives it in single-threaded mode).
#[test]
fn drop_cf_frees_the_space_before_returning() {
    let (_dir, path) = fresh();
    let mut db = DB::open(&create_opts(), &path).unwrap();
    db.put("anchor", "x").unwrap();
    db.create_cf("cf", &Options::default()).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    {
        let cf = db.cf_handle("cf").unwrap();
        for i in 0..200u32 {
            let value: Vec<u8> = (0..4096).flat_map(|_| noise().to_le_bytes()).collect();
            db.put_cf(&cf, i.to_be_bytes(), value).unwrap();
        }
    }
    // Each family's share; the shares add up to the whole.
    let size = |db: &DB| {
        let default = db.property_int_value("rocksdb.total-sst-files-size");
        let cf = db
            .cf_handle("cf")
            .map(|cf| db.property_int_value_cf(cf, "rocksdb.total-sst-files-size"));
        default.unwrap().unwrap() + cf.map_or(0, |v| v.unwrap().unwrap())
    };
    let before = size(&db);
    assert!(before > 6 << 20, "{before}");
    db.drop_cf("cf").unwrap();
    let after = size(&db);
    assert!(
        after < 1 << 20,
        "{after} bytes left of {before} once drop_cf returned"
    );
}
