//! Zero-copy reads (`get_pinned*`, `batched_multi_get_cf`) and `multi_get*`.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{DBPinnableSlice, ReadOptions};

#[test]
fn get_pinned_derefs_to_the_value() {
    let (_dir, db) = open_with_cf();
    db.put(b"k", b"value").unwrap();
    let pinned: DBPinnableSlice<'_> = db.get_pinned(b"k").unwrap().unwrap();
    assert_eq!(&*pinned, b"value");
    assert_eq!(pinned.as_ref(), b"value");
    assert_eq!(pinned.len(), 5);
    assert!(db.get_pinned(b"missing").unwrap().is_none());
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"k", b"in cf").unwrap();
    assert_eq!(&*db.get_pinned_cf(&cf, b"k").unwrap().unwrap(), b"in cf");
    let opts = ReadOptions::default();
    assert_eq!(
        &*db.get_pinned_cf_opt(&cf, b"k", &opts).unwrap().unwrap(),
        b"in cf"
    );
    assert_eq!(&*db.get_pinned_opt(b"k", &opts).unwrap().unwrap(), b"value");
}

#[test]
fn a_pinned_value_stays_readable_after_overwrite_and_compaction() {
    let (_dir, db) = open_with_cf();
    db.put(b"k", b"first").unwrap();
    let pinned = db.get_pinned(b"k").unwrap().unwrap();
    for i in 0..100u32 {
        db.put(b"k", i.to_be_bytes()).unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(&*pinned, b"first");
}

#[test]
fn multi_get_answers_each_key_in_order() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"c", b"3").unwrap();
    let values: Vec<_> = db
        .multi_get([&b"c"[..], b"b", b"a"])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(values, [Some(b"3".to_vec()), None, Some(b"1".to_vec())]);
    assert!(db.multi_get(Vec::<Vec<u8>>::new()).is_empty());
}

#[test]
fn multi_get_cf_reads_each_key_from_its_family() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"k", b"cf").unwrap();
    db.put(b"k", b"default").unwrap();
    let values: Vec<_> = db
        .multi_get_cf([(&cf, b"k"), (&cf, b"x")])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(values, [Some(b"cf".to_vec()), None]);
}

#[test]
fn batched_multi_get_cf_returns_pinned_values() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"a", b"1").unwrap();
    db.put_cf(&cf, b"b", b"2").unwrap();
    let values = db.batched_multi_get_cf(&cf, [b"b", b"z", b"a"], false);
    let values: Vec<Option<Vec<u8>>> = values
        .into_iter()
        .map(|v| v.unwrap().map(|p| p.to_vec()))
        .collect();
    assert_eq!(values, [Some(b"2".to_vec()), None, Some(b"1".to_vec())]);
}

#[test]
fn key_may_exist_never_denies_a_present_key() {
    let (_dir, db) = open_with_cf();
    db.put(b"k", b"v").unwrap();
    assert!(db.key_may_exist(b"k"));
    assert!(!db.key_may_exist(b"absent"));
}
