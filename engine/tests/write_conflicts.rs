//! `Db::write_unless_changed` and `Db::check_unchanged`: a watched key
//! written after the caller's sequence number fails the write, which then
//! applies nothing; compaction and deletes do not hide a conflict.

use alexdb_engine::{Db, Error, Options, WatchedKey, WriteBatch, WriteOptions};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).unwrap()
}

#[test]
fn a_key_written_after_since_seq_fails_the_write_and_applies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let ks = db.keyspace("default").unwrap();
    let w = WriteOptions::default();
    db.put(ks, b"k", b"v0", &w).unwrap();
    let since = db.latest_sequence_number();
    db.put(ks, b"k", b"v1", &w).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(ks, b"k", b"mine");
    batch.put(ks, b"other", b"mine");
    let watched = [WatchedKey {
        keyspace: ks,
        key: b"k",
        since_seq: since,
    }];
    let err = db.write_unless_changed(&batch, &w, &watched).unwrap_err();
    assert!(
        matches!(err, Error::Conflict { newest_seq, .. } if newest_seq == since + 1),
        "{err:?}"
    );
    assert_eq!(db.get_copied(ks, b"k").unwrap().unwrap(), b"v1");
    assert_eq!(db.get_copied(ks, b"other").unwrap(), None);
    let fresh = [WatchedKey {
        since_seq: db.latest_sequence_number(),
        ..watched[0]
    }];
    db.write_unless_changed(&batch, &w, &fresh).unwrap();
    assert_eq!(db.get_copied(ks, b"other").unwrap().unwrap(), b"mine");
}

#[test]
fn deletes_and_absent_keys_are_checked_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let ks = db.keyspace("default").unwrap();
    let w = WriteOptions::default();
    let absent = WatchedKey {
        keyspace: ks,
        key: b"never",
        since_seq: 0,
    };
    db.check_unchanged(&[absent]).unwrap();
    db.put(ks, b"k", b"v", &w).unwrap();
    let since = db.latest_sequence_number();
    let watched = WatchedKey {
        keyspace: ks,
        key: b"k",
        since_seq: since,
    };
    db.check_unchanged(&[watched]).unwrap();
    db.delete(ks, b"k", &w).unwrap();
    assert!(matches!(
        db.check_unchanged(&[watched]),
        Err(Error::Conflict { .. })
    ));
}

#[test]
fn a_conflict_survives_compaction_while_a_snapshot_holds_since_seq() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let ks = db.keyspace("default").unwrap();
    let w = WriteOptions::default();
    for i in 0..100u32 {
        db.put(ks, &i.to_be_bytes(), b"v", &w).unwrap();
    }
    let snapshot = db.snapshot();
    db.delete(ks, &7u32.to_be_bytes(), &w).unwrap();
    db.compact().unwrap();
    let watched = WatchedKey {
        keyspace: ks,
        key: &7u32.to_be_bytes(),
        since_seq: snapshot.seq(),
    };
    assert!(matches!(
        db.check_unchanged(&[watched]),
        Err(Error::Conflict { .. })
    ));
    drop(snapshot);
}

/// Regression: the check read only the index head, and a range delete is
/// not one, so a transaction that read a key could commit over a range
/// delete of it made after its read.
#[test]
fn a_range_delete_covering_a_watched_key_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let ks = db.keyspace("default").unwrap();
    let w = WriteOptions::default();
    db.put(ks, b"k", b"v0", &w).unwrap();
    let since = db.latest_sequence_number();
    let mut range = WriteBatch::new();
    range.delete_range(ks, b"a", b"z");
    db.write(&range, &w).unwrap();
    let watched = [WatchedKey {
        keyspace: ks,
        key: b"k",
        since_seq: since,
    }];
    let err = db.check_unchanged(&watched).unwrap_err();
    assert!(
        matches!(err, Error::Conflict { newest_seq, .. } if newest_seq == since + 1),
        "{err:?}"
    );
    let untouched = [WatchedKey {
        key: b"zz",
        ..watched[0]
    }];
    db.check_unchanged(&untouched).unwrap();
}
