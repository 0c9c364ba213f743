//! A keyspace dropped with `drop_keyspace_held`: gone at once (its name,
//! the MANIFEST, writes) but readable by id while the hold lives, and its
//! space freed by compaction once the hold is dropped.

use alexdb_engine::{Db, Options, WriteOptions};

fn options() -> Options {
    Options {
        background_compaction: false,
        segment_bytes: 1 << 20,
        ..Options::default()
    }
}

#[test]
fn a_held_dropped_keyspace_reads_until_released() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.create_keyspace("cf").unwrap();
    let w = WriteOptions::default();
    for i in 0..2_000u32 {
        db.put(ks, &i.to_be_bytes(), &[7; 500], &w).unwrap();
    }
    let hold = db.drop_keyspace_held("cf").unwrap();
    assert_eq!(hold.id(), ks);
    assert_eq!(db.keyspace("cf"), None);
    assert!(!db.keyspace_names().contains(&"cf".to_string()));
    assert!(db.put(ks, b"new", b"v", &w).is_err(), "writes are refused");
    // Compaction keeps what the hold reads.
    db.compact().unwrap();
    assert_eq!(
        db.get_copied(ks, &7u32.to_be_bytes()).unwrap(),
        Some(vec![7; 500])
    );
    // The name is free: a new keyspace of that name is another one.
    let again = db.create_keyspace("cf").unwrap();
    assert_ne!(again, ks);
    assert_eq!(db.get_copied(again, &7u32.to_be_bytes()).unwrap(), None);
    assert_eq!(
        db.get_copied(ks, &7u32.to_be_bytes()).unwrap(),
        Some(vec![7; 500])
    );
    let held_bytes = db.stats().data_bytes;
    drop(hold);
    db.compact().unwrap();
    assert!(
        db.get(ks, &7u32.to_be_bytes()).is_err()
            || db.get(ks, &7u32.to_be_bytes()).unwrap().is_none()
    );
    let freed = db.stats().data_bytes;
    assert!(freed * 4 < held_bytes, "{freed} of {held_bytes} bytes left");
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.keyspace("cf"), Some(again));
}

/// A hold dropped after the database closed does nothing harmful, and a
/// reopen does not see the keyspace.
#[test]
fn a_reopen_does_not_see_a_held_dropped_keyspace() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.create_keyspace("cf").unwrap();
    db.put(ks, b"k", b"v", &WriteOptions::default()).unwrap();
    let hold = db.drop_keyspace_held("cf").unwrap();
    drop(db);
    drop(hold);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.keyspace("cf"), None);
}
