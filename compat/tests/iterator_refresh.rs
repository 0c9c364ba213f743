//! Iterator `refresh` and tailing iterators (`ReadOptions::set_tailing`).

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{IteratorMode, ReadOptions};

#[test]
fn refresh_reads_the_latest_state_and_drops_the_snapshot() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"1").unwrap();
    let snapshot = db.snapshot();
    let mut opts = ReadOptions::default();
    opts.set_snapshot(&snapshot);
    let mut raw = db.raw_iterator_opt(opts);
    db.put(b"b", b"2").unwrap();
    raw.seek_to_last();
    assert_eq!(raw.key(), Some(&b"a"[..]));
    raw.refresh().unwrap();
    assert!(!raw.valid(), "a refreshed iterator must be sought again");
    raw.seek_to_last();
    assert_eq!(raw.key(), Some(&b"b"[..]));
    assert_eq!(raw.timestamp(), Some(&[][..]));

    let mut iter = db.iterator(IteratorMode::Start);
    db.put(b"c", b"3").unwrap();
    iter.refresh(IteratorMode::End).unwrap();
    assert_eq!(&*iter.next().unwrap().unwrap().0, b"c");
}

#[test]
fn a_tailing_iterator_sees_later_writes() {
    let (_dir, db) = open_with_cf();
    db.put(b"k0", b"v").unwrap();
    let mut opts = ReadOptions::default();
    opts.set_tailing(true);
    let iter = db.iterator_opt(IteratorMode::Start, opts);
    for i in 1..5 {
        db.put(format!("k{i}"), b"v").unwrap();
    }
    let keys: Vec<_> = iter.map(|item| item.unwrap().0.to_vec()).collect();
    assert_eq!(keys.len(), 5);

    let plain = db.iterator(IteratorMode::Start);
    db.put(b"k9", b"v").unwrap();
    assert_eq!(plain.count(), 5, "a plain iterator keeps its moment");
}

#[test]
fn set_options_checks_names_and_values() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.set_options(&[("disable_auto_compactions", "true")])
        .unwrap();
    db.set_options_cf(&cf, &[("write_buffer_size", "4194304")])
        .unwrap();
    for bad in [
        &[("disable_auto_compactions", "maybe")][..],
        &[("no_such_option", "1")],
        &[],
    ] {
        let err = db.set_options(bad).unwrap_err();
        assert_eq!(err.kind(), rocksdb::ErrorKind::InvalidArgument);
    }
}
