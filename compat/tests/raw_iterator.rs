//! `DBRawIterator`: seeks, steps in both directions, direction changes,
//! no-op steps when not valid, bounds, and use through a `D: DBAccess` bound.

use alexdb as rocksdb;

use rocksdb::{DB, DBAccess, DBRawIteratorWithThreadMode, ReadOptions};

fn open_with(keys: &[&str]) -> (tempfile::TempDir, DB) {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path().join("db")).unwrap();
    for key in keys {
        db.put(key, key.to_uppercase()).unwrap();
    }
    (dir, db)
}

fn at<D: DBAccess>(iter: &DBRawIteratorWithThreadMode<'_, D>) -> Option<String> {
    iter.key().map(|k| String::from_utf8(k.to_vec()).unwrap())
}

#[test]
fn a_new_raw_iterator_is_not_positioned() {
    let (_dir, db) = open_with(&["a"]);
    let iter = db.raw_iterator();
    assert!(!iter.valid());
    assert_eq!(iter.key(), None);
    assert_eq!(iter.value(), None);
    assert_eq!(iter.item(), None);
    iter.status().unwrap();
}

#[test]
fn seeks_land_where_rocksdb_lands() {
    let (_dir, db) = open_with(&["k1", "k2", "k4"]);
    let mut iter = db.raw_iterator();
    iter.seek_to_first();
    assert_eq!(at(&iter).as_deref(), Some("k1"));
    assert_eq!(iter.value(), Some(&b"K1"[..]));
    iter.seek_to_last();
    assert_eq!(at(&iter).as_deref(), Some("k4"));
    iter.seek(b"k3");
    assert_eq!(at(&iter).as_deref(), Some("k4"));
    iter.seek(b"k2");
    assert_eq!(at(&iter).as_deref(), Some("k2"));
    iter.seek_for_prev(b"k3");
    assert_eq!(at(&iter).as_deref(), Some("k2"));
    iter.seek_for_prev(b"k4");
    assert_eq!(at(&iter).as_deref(), Some("k4"));
    iter.seek(b"k5");
    assert!(!iter.valid());
    iter.seek_for_prev(b"k0");
    assert!(!iter.valid());
    assert_eq!(iter.item(), None);
}

#[test]
fn next_and_prev_walk_and_turn_around() {
    let (_dir, db) = open_with(&["a", "b", "c", "d"]);
    let mut iter = db.raw_iterator();
    iter.seek(b"b");
    iter.next();
    assert_eq!(at(&iter).as_deref(), Some("c"));
    iter.prev();
    assert_eq!(at(&iter).as_deref(), Some("b"));
    iter.prev();
    assert_eq!(at(&iter).as_deref(), Some("a"));
    iter.next();
    iter.next();
    iter.next();
    assert_eq!(at(&iter).as_deref(), Some("d"));
    assert_eq!(iter.item(), Some((&b"d"[..], &b"D"[..])));
}

#[test]
fn stepping_an_invalid_iterator_does_nothing() {
    let (_dir, db) = open_with(&["a", "b"]);
    let mut iter = db.raw_iterator();
    iter.next();
    iter.prev();
    assert!(!iter.valid());
    iter.seek_to_last();
    iter.next();
    assert!(!iter.valid());
    iter.prev();
    assert!(
        !iter.valid(),
        "prev after running off the end stays invalid"
    );
    iter.seek_to_first();
    iter.prev();
    assert!(!iter.valid());
    iter.next();
    assert!(!iter.valid());
    iter.status().unwrap();
}

#[test]
fn bounds_limit_seeks_and_steps() {
    let (_dir, db) = open_with(&["a", "b", "c", "d", "e"]);
    let mut opts = ReadOptions::default();
    opts.set_iterate_lower_bound(b"b".to_vec());
    opts.set_iterate_upper_bound(b"d".to_vec());
    let mut iter = db.raw_iterator_opt(opts);
    iter.seek_to_first();
    assert_eq!(at(&iter).as_deref(), Some("b"));
    iter.prev();
    assert!(!iter.valid());
    iter.seek_to_last();
    assert_eq!(at(&iter).as_deref(), Some("c"));
    iter.next();
    assert!(!iter.valid());
    iter.seek(b"a");
    assert_eq!(at(&iter).as_deref(), Some("b"));
    iter.seek_for_prev(b"e");
    assert_eq!(at(&iter).as_deref(), Some("c"));
    iter.seek(b"d");
    assert!(!iter.valid());
}

#[test]
fn an_empty_database_is_never_valid() {
    let (_dir, db) = open_with(&[]);
    let mut iter = db.raw_iterator();
    iter.seek_to_first();
    assert!(!iter.valid());
    iter.seek_to_last();
    assert!(!iter.valid());
    iter.seek(b"");
    assert!(!iter.valid());
}

#[test]
fn an_iterator_converts_into_its_raw_iterator() {
    let (_dir, db) = open_with(&["a", "b"]);
    let mut iter = db.iterator(rocksdb::IteratorMode::Start);
    assert!(iter.next().is_some());
    let raw: rocksdb::DBRawIterator<'_> = iter.into();
    assert_eq!(at(&raw).as_deref(), Some("b"));
}

/// User code generic over the database type, as in the rocksdb docs.
fn count_keys<D: DBAccess>(mut iter: DBRawIteratorWithThreadMode<'_, D>) -> usize {
    let mut n = 0;
    iter.seek_to_first();
    while iter.valid() {
        n += 1;
        iter.next();
    }
    n
}

#[test]
fn raw_iterators_work_through_a_generic_bound() {
    let (_dir, db) = open_with(&["a", "b", "c"]);
    assert_eq!(count_keys(db.raw_iterator()), 3);
    let snapshot = db.snapshot();
    db.put(b"d", b"D").unwrap();
    assert_eq!(count_keys(snapshot.raw_iterator()), 3);
    assert_eq!(count_keys(db.raw_iterator()), 4);
}
