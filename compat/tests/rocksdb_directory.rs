//! Opening a directory that holds a RocksDB database: without the opt-in,
//! every open says what the directory is and how to convert it, and leaves
//! it untouched (found by a real project's suite, rocksdb-utils-lookup,
//! that opened a RocksDB directory shipped with its tests); with it, a
//! read-write open converts the database in place and gives exactly what
//! the real crate reads. The conversion under `kill -9` is in
//! `convert_kill9.rs`.

// Compares with, or converts from, the real RocksDB: a dev-dependency
// everywhere but Windows and musl (see compat/Cargo.toml).
#![cfg(not(any(windows, target_env = "musl")))]

use std::path::Path;

use alexdb::{ColumnFamilyDescriptor, DB, ErrorKind, Options};

#[path = "common/rocksdb_source.rs"]
mod rocksdb_source;

use rocksdb_source::{
    CONCAT, Contents, alexdb_contents, concat, rocksdb_concat_options, rocksdb_contents,
};

/// A RocksDB database written by the real `rocksdb` crate, with one key.
fn rocksdb_database() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    let db = ::rocksdb::DB::open(&opts, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    dir
}

fn assert_names_rocksdb(err: &alexdb::Error) {
    assert_eq!(err.kind(), ErrorKind::NotSupported, "{err}");
    let message = err.to_string();
    assert!(message.contains("holds a RocksDB database"), "{message}");
    assert!(message.contains("alexdb-migrate copy"), "{message}");
    assert!(message.contains("set_convert_rocksdb(true)"), "{message}");
    assert!(message.contains("ALEXDB_CONVERT_ROCKSDB=1"), "{message}");
}

#[test]
fn every_open_names_a_rocksdb_directory_and_changes_nothing() {
    let dir = rocksdb_database();
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    assert_names_rocksdb(&DB::open(&opts, dir.path()).unwrap_err());
    assert_names_rocksdb(&DB::open_for_read_only(&opts, dir.path(), false).unwrap_err());
    let secondary = tempfile::tempdir().unwrap();
    assert_names_rocksdb(&DB::open_as_secondary(&opts, dir.path(), secondary.path()).unwrap_err());
    let mut after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut before = before;
    before.sort();
    after.sort();
    assert_eq!(before, after);
    let db = ::rocksdb::DB::open_default(dir.path()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

/// As the real crate does, a database is created beside other files.
#[test]
fn a_directory_of_other_files_gets_a_database_beside_them() {
    for real in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"hello").unwrap();
        if real {
            let mut opts = ::rocksdb::Options::default();
            opts.create_if_missing(true);
            let db = ::rocksdb::DB::open(&opts, dir.path()).unwrap();
            db.put(b"k", b"v").unwrap();
        } else {
            let mut opts = Options::default();
            opts.create_if_missing(true);
            let db = DB::open(&opts, dir.path()).unwrap();
            db.put(b"k", b"v").unwrap();
        }
        let notes = std::fs::read(dir.path().join("notes.txt")).unwrap();
        assert_eq!(notes, b"hello", "real rocksdb: {real}");
    }
}

const FAMILIES: [&str; 3] = ["default", "tables", "appends"];

/// A RocksDB database in three column families holding what a real one
/// does: flushed tables (LZ4-compressed) under unflushed WAL writes,
/// overwrites, deletes, a range delete, and merge operands (in the
/// `appends` family, whose operator concatenates). Returns what the real
/// crate reads from it just before it is closed (closing leaves the WAL's
/// writes in the WAL).
fn write_rich_rocksdb(dir: &Path) -> Contents {
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_compression_type(::rocksdb::DBCompressionType::Lz4);
    let db = ::rocksdb::DB::open_cf_descriptors(&opts, dir, rocksdb_families()).unwrap();
    let tables = db.cf_handle("tables").unwrap();
    let merges = db.cf_handle("appends").unwrap();
    for i in 0..3_000u32 {
        let key = format!("key{i:06}");
        db.put(&key, format!("first {i} {}", "x".repeat((i % 50) as usize)))
            .unwrap();
        db.put_cf(tables, &key, i.to_be_bytes()).unwrap();
        db.merge_cf(merges, format!("m{:03}", i % 100), [b'a' + (i % 26) as u8])
            .unwrap();
    }
    db.flush().unwrap();
    db.flush_cf(tables).unwrap();
    db.flush_cf(merges).unwrap();
    for i in (0..3_000u32).step_by(7) {
        db.put(format!("key{i:06}"), format!("second {i}")).unwrap();
        db.delete_cf(tables, format!("key{i:06}")).unwrap();
        db.merge_cf(merges, format!("m{:03}", i % 100), b"!")
            .unwrap();
    }
    db.delete_range_cf(tables, "key001000", "key002000")
        .unwrap();
    db.flush_cf(tables).unwrap();
    // Left in the WAL only.
    db.put(b"wal only", b"unflushed").unwrap();
    db.delete(b"key000001").unwrap();
    db.merge_cf(merges, b"m999", b"tail").unwrap();
    rocksdb_contents(&db, &FAMILIES)
}

/// The real crate's column family descriptors: RocksDB needs the merge
/// operator to replay merges from its WAL.
fn rocksdb_families() -> Vec<::rocksdb::ColumnFamilyDescriptor> {
    vec![
        ::rocksdb::ColumnFamilyDescriptor::new("tables", ::rocksdb::Options::default()),
        ::rocksdb::ColumnFamilyDescriptor::new("appends", rocksdb_concat_options()),
    ]
}

/// The options and descriptors a user switching to AlexDB opens with.
fn converting_open(dir: &Path) -> Result<DB, alexdb::Error> {
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    let mut appends = Options::default();
    appends.set_merge_operator_associative(CONCAT, concat);
    DB::open_cf_descriptors(
        &opts,
        dir,
        vec![
            ColumnFamilyDescriptor::new("tables", Options::default()),
            ColumnFamilyDescriptor::new("appends", appends),
        ],
    )
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_opted_in_open_converts_the_database_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let want = write_rich_rocksdb(dir.path());
    let identity = std::fs::read(dir.path().join("IDENTITY")).unwrap();
    let rocksdb_files = names_in(dir.path());
    let db = converting_open(dir.path()).unwrap();
    assert_eq!(alexdb_contents(&db, &FAMILIES), want);
    assert_eq!(db.get_db_identity().unwrap(), identity);
    db.put(b"after", b"conversion").unwrap();
    drop(db);
    // RocksDB's files, every one, are kept aside; nothing staged is left.
    assert_eq!(
        names_in(&dir.path().join("rocksdb-original")),
        rocksdb_files
    );
    assert!(!dir.path().join("alexdb-conversion").exists());
    // A plain open (no opt-in) now opens the AlexDB database.
    let mut appends = Options::default();
    appends.set_merge_operator_associative(CONCAT, concat);
    let db = DB::open_cf_descriptors(
        &Options::default(),
        dir.path(),
        vec![
            ColumnFamilyDescriptor::new("tables", Options::default()),
            ColumnFamilyDescriptor::new("appends", appends),
        ],
    )
    .unwrap();
    let mut want = want;
    want.get_mut("default")
        .unwrap()
        .insert(b"after".to_vec(), b"conversion".to_vec());
    assert_eq!(alexdb_contents(&db, &FAMILIES), want);
    // Merges go on from the converted values.
    let appends = db.cf_handle("appends").unwrap();
    db.merge_cf(&appends, b"m000", b"+").unwrap();
    let mut m000 = want["appends"][&b"m000".to_vec()].clone();
    m000.push(b'+');
    assert_eq!(db.get_cf(&appends, b"m000").unwrap(), Some(m000));
}

/// A conversion that cannot be done whole is not started: the directory
/// is left exactly as it was, and RocksDB still opens it.
#[test]
fn a_conversion_that_cannot_finish_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let want = write_rich_rocksdb(dir.path());
    let before = names_in(dir.path());
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    // Not every column family named: RocksDB's error.
    let err = DB::open_cf(&opts, dir.path(), ["tables"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.to_string()
            .contains("Column families not opened: appends"),
        "{err}"
    );
    // Merge operands with no merge operator to fold them.
    let err = DB::open_cf(&opts, dir.path(), ["tables", "appends"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("merge operator"), "{err}");
    assert_eq!(names_in(dir.path()), before);
    // A live RocksDB holding the database.
    let live = ::rocksdb::DB::open_cf_descriptors(
        &::rocksdb::Options::default(),
        dir.path(),
        rocksdb_families(),
    )
    .unwrap();
    let err = converting_open(dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError, "{err}");
    assert!(err.to_string().contains("LOCK"), "{err}");
    drop(live);
    assert!(!dir.path().join("alexdb-conversion").exists());
    assert!(!dir.path().join("rocksdb-original").exists());
    let db = converting_open(dir.path()).unwrap();
    assert_eq!(alexdb_contents(&db, &FAMILIES), want);
}

/// What an interrupted, uncommitted conversion left (a partial copy) is
/// not a database: RocksDB's stays the one to open, and the next opted-in
/// open starts over.
#[test]
fn an_uncommitted_conversion_is_started_over() {
    let dir = tempfile::tempdir().unwrap();
    let want = write_rich_rocksdb(dir.path());
    let staging = dir.path().join("alexdb-conversion");
    std::fs::create_dir(&staging).unwrap();
    std::fs::write(staging.join("MANIFEST"), b"partial").unwrap();
    std::fs::write(staging.join("0000000001.seg"), b"partial").unwrap();
    let err = DB::open_cf(&Options::default(), dir.path(), ["tables", "appends"]).unwrap_err();
    assert_names_rocksdb(&err);
    assert!(staging.join("MANIFEST").exists());
    let db = converting_open(dir.path()).unwrap();
    assert_eq!(alexdb_contents(&db, &FAMILIES), want);
}

/// The usual way to open every family: `list_cf`, then `open_cf` with the
/// names. `list_cf` reads RocksDB's MANIFEST (changing nothing), so the
/// same two lines convert a RocksDB directory.
#[test]
fn list_cf_names_a_rocksdb_databases_families() {
    let dir = tempfile::tempdir().unwrap();
    let want = write_rich_rocksdb(dir.path());
    let before = names_in(dir.path());
    let names = DB::list_cf(&Options::default(), dir.path()).unwrap();
    assert_eq!(names, FAMILIES);
    assert_eq!(names_in(dir.path()), before);
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    let descriptors = names.iter().map(|name| {
        let mut cf_opts = Options::default();
        cf_opts.set_merge_operator_associative(CONCAT, concat);
        ColumnFamilyDescriptor::new(name, cf_opts)
    });
    let db = DB::open_cf_descriptors(&opts, dir.path(), descriptors).unwrap();
    assert_eq!(alexdb_contents(&db, &FAMILIES), want);
    drop(db);
    assert_eq!(
        DB::list_cf(&Options::default(), dir.path()).unwrap(),
        FAMILIES
    );
}
