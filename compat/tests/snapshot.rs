//! Snapshots: frozen reads and iterators, `ReadOptions::set_snapshot`, and
//! release on drop.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{IteratorMode, ReadOptions};

#[test]
fn a_snapshot_reads_the_state_when_it_was_taken() {
    let (_dir, db) = open_with_cf();
    db.put(b"k", b"old").unwrap();
    db.put(b"gone", b"here").unwrap();
    let snapshot = db.snapshot();
    db.put(b"k", b"new").unwrap();
    db.delete(b"gone").unwrap();
    db.put(b"added", b"x").unwrap();

    assert_eq!(snapshot.get(b"k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(snapshot.get(b"gone").unwrap(), Some(b"here".to_vec()));
    assert_eq!(snapshot.get(b"added").unwrap(), None);
    assert_eq!(&*snapshot.get_pinned(b"k").unwrap().unwrap(), b"old");
    assert_eq!(
        snapshot.get_opt(b"k", ReadOptions::default()).unwrap(),
        Some(b"old".to_vec())
    );
    let keys: Vec<_> = snapshot
        .iterator(IteratorMode::Start)
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(keys, [b"gone".to_vec().into(), b"k".to_vec().into()]);
    assert_eq!(db.get(b"k").unwrap(), Some(b"new".to_vec()));
}

#[test]
fn a_snapshot_covers_every_column_family() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"k", b"1").unwrap();
    let snapshot = db.snapshot();
    db.put_cf(&cf, b"k", b"2").unwrap();
    db.put_cf(&cf, b"j", b"3").unwrap();
    assert_eq!(snapshot.get_cf(&cf, b"k").unwrap(), Some(b"1".to_vec()));
    assert_eq!(snapshot.iterator_cf(&cf, IteratorMode::End).count(), 1);
    let mut raw = snapshot.raw_iterator_cf(&cf);
    raw.seek_to_first();
    assert_eq!(raw.item(), Some((&b"k"[..], &b"1"[..])));
    let values = snapshot.multi_get_cf([(&cf, b"k"), (&cf, b"j")]);
    assert_eq!(values[0].as_ref().unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(values[1].as_ref().unwrap(), &None);
}

#[test]
fn set_snapshot_makes_plain_reads_and_iterators_read_the_snapshot() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"1").unwrap();
    let snapshot = db.snapshot();
    db.put(b"a", b"2").unwrap();
    db.put(b"b", b"2").unwrap();

    let mut opts = ReadOptions::default();
    opts.set_snapshot(&snapshot);
    assert_eq!(db.get_opt(b"a", &opts).unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get_opt(b"b", &opts).unwrap(), None);
    assert_eq!(db.iterator_opt(IteratorMode::Start, opts).count(), 1);
}

#[test]
fn many_snapshots_each_keep_their_own_version() {
    let (_dir, db) = open_with_cf();
    let snapshots: Vec<_> = (0..5u8)
        .map(|i| {
            db.put(b"k", [i]).unwrap();
            db.snapshot()
        })
        .collect();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for (i, snapshot) in snapshots.iter().enumerate() {
        assert_eq!(snapshot.get(b"k").unwrap(), Some(vec![i as u8]));
    }
}

#[test]
fn an_iterator_from_a_snapshot_outlives_the_snapshot_value() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"1").unwrap();
    let iter = {
        let snapshot = db.snapshot();
        snapshot.iterator(IteratorMode::Start)
    };
    db.put(b"b", b"2").unwrap();
    assert_eq!(iter.count(), 1);
}

/// RocksDB releases its lock when the `DB` is dropped, whatever snapshots
/// leaked: a client that turns a snapshot into a `'static` one and forgets
/// it can still reopen and destroy the database.
#[test]
fn a_leaked_snapshot_does_not_keep_the_database_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = rocksdb::DB::open_default(&path).unwrap();
        db.put(b"k", b"v").unwrap();
        std::mem::forget(db.snapshot());
    }
    {
        let db = rocksdb::DB::open_default(&path).unwrap();
        assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
        std::mem::forget(db.snapshot());
    }
    rocksdb::DB::destroy(&rocksdb::Options::default(), &path).unwrap();
    assert!(!path.exists());
}
