//! Writes that only reached the WAL (the database dropped before any
//! flush) are replayed, including from recycled log files.

mod common;

use common::{FAMILIES, Layout, assert_same, key, open, value, write_wal_round};

#[test]
fn wal_only_database_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    {
        let db = open(dir.path(), &layout);
        for i in 0..3000 {
            db.put(key(i), value(i, 0)).unwrap();
        }
        write_wal_round(&db, 3000);
    }
    assert!(
        !std::fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "sst")),
        "nothing was flushed"
    );
    assert!(assert_same(dir.path(), &layout) > 2000);
}

#[test]
fn recycled_logs_use_recyclable_records() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout {
        recycle_logs: true,
        ..Layout::default()
    };
    for round in 0..4 {
        let db = open(dir.path(), &layout);
        for i in 0..800 {
            db.put(key(i), value(i, round)).unwrap();
        }
        if round % 2 == 0 {
            for name in FAMILIES {
                db.flush_cf(db.cf_handle(name).unwrap()).unwrap();
            }
        }
        write_wal_round(&db, 800);
    }
    assert!(assert_same(dir.path(), &layout) > 500);
}

#[test]
fn reopened_database_replays_only_unflushed_logs() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    for round in 0..3 {
        let db = open(dir.path(), &layout);
        for i in (round * 100)..(round * 100 + 1000) {
            db.put(key(i), value(i, round)).unwrap();
        }
        db.flush_cf(db.cf_handle("second").unwrap()).unwrap();
        db.put_cf(db.cf_handle("second").unwrap(), key(1), b"after flush")
            .unwrap();
    }
    assert!(assert_same(dir.path(), &layout) > 1000);
}
