//! Bad input gets a clear error and changes nothing: a file instead of a
//! directory, a directory that is not a database, a database already open,
//! a missing database without create_if_missing, oversized keys and values.

use alexdb_engine::{Db, Error, MAX_KEY_BYTES, MAX_VALUE_BYTES, Options, WriteBatch, WriteOptions};

#[test]
fn a_file_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"hello").unwrap();
    let err = Db::open(&file, Options::default()).unwrap_err();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"hello");
}

fn names_in(dir: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    names
}

/// Regression from a real project's suite (ethrex-storage writes its
/// `metadata.json` into the directory before opening the database): as in
/// RocksDB, a database is created beside other files, which stay as they
/// were; without `create_if_missing` the directory is left untouched.
#[test]
fn a_database_is_created_beside_other_files_and_leaves_them_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata.json"), b"{\"v\":1}").unwrap();
    let absent = Options {
        create_if_missing: false,
        ..Options::default()
    };
    let err = Db::open(dir.path(), absent).unwrap_err();
    assert!(matches!(err, Error::NotFound(_)), "{err}");
    assert_eq!(names_in(dir.path()), ["metadata.json"]);
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"k", b"v", &Default::default()).unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("default").unwrap();
    assert_eq!(db.get_copied(ks, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    let json = std::fs::read(dir.path().join("metadata.json")).unwrap();
    assert_eq!(json, b"{\"v\":1}");
}

/// A database that lost its MANIFEST is never taken for an empty directory:
/// a new database there would reuse its segments' names.
#[test]
fn database_files_without_a_manifest_are_corruption_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"k", b"v", &Default::default()).unwrap();
    }
    std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
    let before = names_in(dir.path());
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    match &err {
        Error::Corruption { file, .. } => assert!(file.ends_with("MANIFEST"), "{err}"),
        other => panic!("{other}"),
    }
    assert_eq!(names_in(dir.path()), before);
}

#[test]
fn second_open_is_refused_with_the_lock_path() {
    let dir = tempfile::tempdir().unwrap();
    let _db = Db::open(dir.path(), Options::default()).unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    match &err {
        Error::LockedHere { path, .. } => assert!(path.ends_with("LOCK")),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains(&dir.path().display().to_string()));
}

#[test]
fn missing_database_without_create_if_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent");
    let opts = Options {
        create_if_missing: false,
        ..Options::default()
    };
    assert!(matches!(Db::open(&path, opts), Err(Error::NotFound(_))));
    assert!(!path.exists());
    drop(Db::open(&path, Options::default()).unwrap());
    let opts = Options {
        error_if_exists: true,
        ..Options::default()
    };
    assert!(matches!(
        Db::open(&path, opts),
        Err(Error::AlreadyExists(_))
    ));
}

#[test]
fn oversized_keys_and_values_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let big_key = vec![0u8; MAX_KEY_BYTES + 1];
    let err = db
        .put(ks, &big_key, b"v", &WriteOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(matches!(
        db.get(ks, &big_key),
        Err(Error::InvalidArgument(_))
    ));
    let mut batch = WriteBatch::new();
    batch.put(ks, b"fine", b"v");
    batch.put(ks, b"k", &vec![0u8; MAX_VALUE_BYTES + 1]);
    assert!(matches!(
        db.write(&batch, &WriteOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        db.get_copied(ks, b"fine").unwrap(),
        None,
        "a rejected batch must leave nothing behind"
    );
    assert_eq!(db.latest_sequence_number(), 0);
    db.put(ks, b"", b"", &WriteOptions::default()).unwrap();
    assert_eq!(db.get_copied(ks, b"").unwrap().as_deref(), Some(&b""[..]));
}

#[test]
fn unknown_and_dropped_keyspaces_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.create_keyspace("temp").unwrap();
    db.put(ks, b"k", b"v", &WriteOptions::default()).unwrap();
    db.drop_keyspace("temp").unwrap();
    assert!(matches!(
        db.put(ks, b"k", b"v", &WriteOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.drop_keyspace("default"),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(db.keyspace_names(), vec!["default".to_string()]);
}

/// Regression: a segment size below a segment's header made creating the
/// first segment panic (a clamp with its bounds inverted). Every size
/// works: a segment is at least its header, and a record that does not fit
/// gets a segment of its own.
#[test]
fn a_tiny_segment_size_still_opens_and_writes() {
    for segment_bytes in [0, 1, 63, 4096] {
        let dir = tempfile::tempdir().unwrap();
        let options = || Options {
            segment_bytes,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        for i in 0u32..20 {
            let mut batch = WriteBatch::new();
            batch.put(ks, &i.to_be_bytes(), &[7u8; 300]);
            db.write(&batch, &WriteOptions::default()).unwrap();
        }
        drop(db);
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        for i in 0u32..20 {
            assert_eq!(
                db.get(ks, &i.to_be_bytes()).unwrap().as_deref(),
                Some(&[7u8; 300][..]),
                "segment_bytes {segment_bytes}"
            );
        }
    }
}

/// Dropping the handle releases the directory even if a snapshot and a
/// cursor were leaked: the database reopens, and what was leaked refuses
/// writes' side effects (it can only read).
#[test]
fn a_leaked_snapshot_does_not_keep_the_directory_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("default").unwrap();
    db.put(ks, b"k", b"v", &WriteOptions::default()).unwrap();
    let leaked = db.snapshot();
    std::mem::forget(db.snapshot());
    std::mem::forget(db.cursor(ks, Default::default()).unwrap());
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get_copied(ks, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    // The snapshot that outlived its handle still reads its view.
    assert_eq!(leaked.get(ks, b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// A segment file longer than any the engine writes (16 GiB: an index
/// entry could not point into its end) is corruption naming the file, not a
/// panic while locations are packed.
#[test]
fn a_segment_longer_than_a_location_can_address_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"k", b"v", &WriteOptions::default()).unwrap();
    }
    let segment = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "seg"))
        .unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .unwrap();
    // Sparse: no disk space is taken.
    file.set_len((1 << 34) + 4096).unwrap();
    drop(file);
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    match &err {
        Error::Corruption { file, .. } => assert_eq!(file, &segment, "{err}"),
        other => panic!("{other}"),
    }
}

/// A snapshot taken before a keyspace was dropped cannot read that
/// keyspace (the drop frees its index and records at once): a clear
/// error, while the snapshot's other keyspaces read as of the snapshot.
#[test]
fn a_snapshot_does_not_keep_a_dropped_keyspace_readable() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let default = db.keyspace("default").unwrap();
    let doomed = db.create_keyspace("doomed").unwrap();
    db.put(doomed, b"k", b"v", &WriteOptions::default())
        .unwrap();
    db.put(default, b"k", b"old", &WriteOptions::default())
        .unwrap();
    let snapshot = db.snapshot();
    db.drop_keyspace("doomed").unwrap();
    db.put(default, b"k", b"new", &WriteOptions::default())
        .unwrap();
    let err = snapshot.get(doomed, b"k").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert_eq!(
        snapshot.get(default, b"k").unwrap().as_deref(),
        Some(&b"old"[..])
    );
}
