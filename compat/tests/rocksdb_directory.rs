//! Opening a directory that holds a RocksDB database: AlexDB cannot read
//! RocksDB's format, so every open says what the directory is and how to
//! convert it (`alexdb-migrate`), and leaves it untouched.
//! Found by a real project's suite (rocksdb-utils-lookup) that opened a
//! RocksDB directory shipped with its tests.

use alexdb::{DB, ErrorKind, Options};

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
