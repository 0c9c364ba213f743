//! Custom comparators: iterators of a column family with a comparator
//! follow its order (bounds and seeks included), checked against a sorted
//! model; other column families stay bytewise.

use std::cmp::Ordering;

use alexdb as rocksdb;

use rocksdb::{ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, ReadOptions};

fn reverse(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

/// Options that create a database with family "rev" in reverse order.
fn reversed_family() -> (Options, Vec<ColumnFamilyDescriptor>) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut reversed = Options::default();
    reversed.set_comparator("reverse", Box::new(reverse));
    (opts, vec![ColumnFamilyDescriptor::new("rev", reversed)])
}

fn open(dir: &std::path::Path) -> DB {
    let (opts, cfs) = reversed_family();
    DB::open_cf_descriptors(&opts, dir, cfs).unwrap()
}

fn keys(iter: impl Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), rocksdb::Error>>) -> Vec<u8> {
    iter.map(|item| item.unwrap().0[0]).collect()
}

#[test]
fn iteration_follows_the_comparator() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("rev").unwrap();
    for k in [b'b', b'd', b'a', b'c'] {
        db.put_cf(&cf, [k], [k]).unwrap();
        db.put([k], [k]).unwrap();
    }
    assert_eq!(keys(db.iterator_cf(&cf, IteratorMode::Start)), b"dcba");
    assert_eq!(keys(db.iterator_cf(&cf, IteratorMode::End)), b"abcd");
    assert_eq!(
        keys(db.iterator_cf(&cf, IteratorMode::From(b"c", Direction::Forward))),
        b"cba"
    );
    assert_eq!(
        keys(db.iterator_cf(&cf, IteratorMode::From(b"bb", Direction::Reverse))),
        b"cd",
        "seek_for_prev finds the last key not after bb in reverse order"
    );
    assert_eq!(
        keys(db.iterator(IteratorMode::Start)),
        b"abcd",
        "default stays bytewise"
    );

    let mut opts = ReadOptions::default();
    opts.set_iterate_lower_bound(b"c".to_vec());
    opts.set_iterate_upper_bound(b"a".to_vec());
    assert_eq!(
        keys(db.iterator_cf_opt(&cf, opts, IteratorMode::Start)),
        b"cb",
        "bounds are in the comparator's order"
    );
}

#[test]
fn a_snapshot_iterator_keeps_its_moment_in_comparator_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("rev").unwrap();
    db.put_cf(&cf, b"a", b"1").unwrap();
    db.put_cf(&cf, b"b", b"1").unwrap();
    let snapshot = db.snapshot();
    db.put_cf(&cf, b"c", b"1").unwrap();
    db.delete_cf(&cf, b"a").unwrap();
    assert_eq!(keys(snapshot.iterator_cf(&cf, IteratorMode::Start)), b"ba");
    assert_eq!(keys(db.iterator_cf(&cf, IteratorMode::Start)), b"cb");
    let mut raw = db.raw_iterator_cf(&cf);
    raw.seek_to_first();
    raw.next();
    raw.prev();
    assert_eq!(raw.key(), Some(&b"c"[..]));
}

/// A column family with a comparator created after the open (iterators of
/// a database whose families are all bytewise take a shorter path) is
/// iterated in its comparator's order from then on.
#[test]
fn a_family_created_with_a_comparator_after_the_open_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = DB::open(&opts, dir.path()).unwrap();
    for k in [b'b', b'a', b'c'] {
        db.put([k], [k]).unwrap();
    }
    assert_eq!(keys(db.iterator(IteratorMode::Start)), b"abc");
    let mut reversed = Options::default();
    reversed.set_comparator("reverse", Box::new(reverse));
    db.create_cf("rev", &reversed).unwrap();
    let cf = db.cf_handle("rev").unwrap();
    for k in [b'b', b'a', b'c'] {
        db.put_cf(&cf, [k], [k]).unwrap();
    }
    assert_eq!(keys(db.iterator_cf(&cf, IteratorMode::Start)), b"cba");
    assert_eq!(keys(db.iterator(IteratorMode::Start)), b"abc");
}

#[test]
fn reopening_with_another_comparator_is_refused_as_in_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let opts = Options::default();
    let mut other = Options::default();
    other.set_comparator("other", Box::new(reverse));
    let cfs = vec![ColumnFamilyDescriptor::new("rev", other)];
    let err = DB::open_cf_descriptors(&opts, dir.path(), cfs)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "Invalid argument: other: does not match existing comparator reverse"
    );

    let cfs = vec![ColumnFamilyDescriptor::new("rev", Options::default())];
    let err = DB::open_cf_descriptors(&opts, dir.path(), cfs)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "Invalid argument: leveldb.BytewiseComparator: does not match existing comparator reverse"
    );

    let reversed = || {
        let mut reversed = Options::default();
        reversed.set_comparator("reverse", Box::new(reverse));
        reversed
    };
    let cfs = vec![
        ColumnFamilyDescriptor::new("default", reversed()),
        ColumnFamilyDescriptor::new("rev", reversed()),
    ];
    let err = DB::open_cf_descriptors(&opts, dir.path(), cfs)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "Invalid argument: reverse: does not match existing comparator leveldb.BytewiseComparator",
        "the default column family was created bytewise"
    );

    drop(open(dir.path()));
}

#[test]
fn a_dropped_column_family_may_come_back_with_another_comparator() {
    let dir = tempfile::tempdir().unwrap();
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = open(dir.path());
    db.drop_cf("rev").unwrap();
    db.create_cf("rev", &Options::default()).unwrap();
    drop(db);
    let opts = Options::default();
    let cfs = vec![ColumnFamilyDescriptor::new("rev", Options::default())];
    DB::open_cf_descriptors(&opts, dir.path(), cfs).unwrap();
}

/// A range delete in a column family with a comparator is one record and
/// one sequence number, as in RocksDB, whatever the number of keys it
/// covers in the comparator's order; it holds after a reopen.
#[test]
fn a_range_delete_is_one_record_whatever_it_covers() {
    let dir = tempfile::tempdir().unwrap();
    let key = |i: u32| format!("k{i:06}").into_bytes();
    {
        let db = open(dir.path());
        let cf = db.cf_handle("rev").unwrap();
        for chunk in (0..50_000u32).collect::<Vec<_>>().chunks(1_000) {
            let mut batch = rocksdb::WriteBatch::default();
            for &i in chunk {
                batch.put_cf(&cf, key(i), [7u8; 20]);
            }
            db.write(batch).unwrap();
        }
        let size = |db: &DB| {
            db.property_int_value("rocksdb.total-sst-files-size")
                .unwrap()
                .unwrap()
        };
        let (bytes, seq) = (size(&db), db.latest_sequence_number());
        // In reverse order the range runs from the larger key down.
        db.delete_range_cf(&cf, key(45_000), key(5_000)).unwrap();
        assert_eq!(db.latest_sequence_number(), seq + 1);
        let logged = size(&db) - bytes;
        assert!(
            logged < 200,
            "a range delete of 40,000 keys logged {logged} bytes"
        );
        assert_eq!(db.get_cf(&cf, key(45_000)).unwrap(), None);
        assert_eq!(db.get_cf(&cf, key(5_001)).unwrap(), None);
        assert!(db.get_cf(&cf, key(5_000)).unwrap().is_some());
        assert!(db.get_cf(&cf, key(45_001)).unwrap().is_some());
    }
    let db = open(dir.path());
    let cf = db.cf_handle("rev").unwrap();
    let left: Vec<u32> = db
        .iterator_cf(&cf, IteratorMode::Start)
        .map(|item| {
            let key = item.unwrap().0;
            std::str::from_utf8(&key[1..]).unwrap().parse().unwrap()
        })
        .collect();
    let expected: Vec<u32> = (0..=5_000).chain(45_001..50_000).rev().collect();
    assert_eq!(left, expected);
}

/// A transaction's iterator lays its own writes over the database's keys
/// in the comparator's order (it once laid them bytewise).
#[test]
fn a_transaction_iterates_its_own_writes_in_comparator_order() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, cfs) = reversed_family();
    let db: rocksdb::TransactionDB = rocksdb::TransactionDB::open_cf_descriptors(
        &opts,
        &rocksdb::TransactionDBOptions::default(),
        dir.path(),
        cfs,
    )
    .unwrap();
    let cf = db.cf_handle("rev").unwrap();
    db.put_cf(&cf, "a", "a").unwrap();
    db.put_cf(&cf, "c", "c").unwrap();
    let txn = db.transaction();
    txn.put_cf(&cf, "b", "b").unwrap();
    txn.put_cf(&cf, "d", "d").unwrap();
    txn.delete_cf(&cf, "c").unwrap();
    assert_eq!(keys(txn.iterator_cf(&cf, IteratorMode::Start)), b"dba");
    assert_eq!(keys(txn.iterator_cf(&cf, IteratorMode::End)), b"abd");
    assert_eq!(
        keys(txn.iterator_cf(&cf, IteratorMode::From(b"c", Direction::Forward))),
        b"ba"
    );
}

/// Every kind of handle reads a comparator family's range deletes in its
/// order: a checkpoint opened with the family's comparator, a secondary
/// instance (also after catching up with a later one), a read-only open.
#[test]
fn checkpoints_secondaries_and_readers_see_range_deletes_in_comparator_order() {
    let dir = tempfile::tempdir().unwrap();
    let (primary, copy, secondary) = (
        dir.path().join("db"),
        dir.path().join("checkpoint"),
        dir.path().join("secondary"),
    );
    let db = open(&primary);
    let cf = db.cf_handle("rev").unwrap();
    for k in b'a'..=b'z' {
        db.put_cf(&cf, [k], [k]).unwrap();
    }
    // In reverse order the range runs from "x" down to, not including, "c".
    db.delete_range_cf(&cf, b"x", b"c").unwrap();
    let expected: Vec<u8> = [b"zy".as_slice(), b"cba"].concat();
    assert_eq!(keys(db.iterator_cf(&cf, IteratorMode::Start)), expected);
    rocksdb::checkpoint::Checkpoint::new(&db)
        .unwrap()
        .create_checkpoint(&copy)
        .unwrap();
    {
        let checkpoint = open(&copy);
        let cf = checkpoint.cf_handle("rev").unwrap();
        assert_eq!(
            keys(checkpoint.iterator_cf(&cf, IteratorMode::Start)),
            expected
        );
    }
    let (opts, cfs) = reversed_family();
    let reader = DB::open_cf_descriptors_read_only(&opts, &primary, cfs, false).unwrap();
    let rcf = reader.cf_handle("rev").unwrap();
    assert_eq!(
        keys(reader.iterator_cf(&rcf, IteratorMode::Start)),
        expected
    );
    let (opts, cfs) = reversed_family();
    let follower = DB::open_cf_descriptors_as_secondary(&opts, &primary, &secondary, cfs).unwrap();
    let fcf = follower.cf_handle("rev").unwrap();
    assert_eq!(
        keys(follower.iterator_cf(&fcf, IteratorMode::Start)),
        expected
    );
    db.delete_range_cf(&cf, b"z", b"b").unwrap();
    follower.try_catch_up_with_primary().unwrap();
    assert_eq!(keys(follower.iterator_cf(&fcf, IteratorMode::Start)), b"ba");
}

/// Writers to comparator families while new comparator families are
/// created and deletes make sweeps run: no key a write added is lost from
/// its family's ordered key set (issue 60, item 2: the write gate is
/// decided from the families a write translates with).
#[test]
fn writes_while_comparator_families_are_created_lose_no_key() {
    use std::sync::{Arc, Barrier};

    type MtDb = rocksdb::DBWithThreadMode<rocksdb::MultiThreaded>;
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db: Arc<MtDb> = Arc::new(MtDb::open(&opts, dir.path()).unwrap());
    const FAMILIES: usize = 3;
    const WRITES: u32 = 1_600;
    let start = Arc::new(Barrier::new(3));
    let creator = {
        let (db, start) = (Arc::clone(&db), Arc::clone(&start));
        std::thread::spawn(move || {
            start.wait();
            for f in 0..FAMILIES {
                let mut reversed = Options::default();
                reversed.set_comparator("reverse", Box::new(reverse));
                db.create_cf(format!("f{f}"), &reversed).unwrap();
                std::thread::yield_now();
            }
        })
    };
    let writers: Vec<_> = (0..2u8)
        .map(|w| {
            let (db, start) = (Arc::clone(&db), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let mut written: Vec<(usize, Vec<u8>)> = Vec::new();
                let mut i = 0;
                while i < WRITES {
                    let f = i as usize % FAMILIES;
                    // A family not created yet is waited for.
                    let Some(cf) = db.cf_handle(&format!("f{f}")) else {
                        std::thread::yield_now();
                        continue;
                    };
                    let key = format!("w{w}-{i:05}").into_bytes();
                    let temp = format!("t{w}-{i:05}").into_bytes();
                    let mut batch = rocksdb::WriteBatch::default();
                    batch.put_cf(&cf, &key, b"v");
                    batch.put_cf(&cf, &temp, b"t");
                    db.write(batch).unwrap();
                    db.delete_cf(&cf, &temp).unwrap();
                    written.push((f, key));
                    i += 1;
                }
                written
            })
        })
        .collect();
    creator.join().unwrap();
    let mut expected: Vec<Vec<Vec<u8>>> = vec![Vec::new(); FAMILIES];
    for writer in writers {
        for (f, key) in writer.join().unwrap() {
            expected[f].push(key);
        }
    }
    assert_eq!(
        expected.iter().map(Vec::len).sum::<usize>(),
        2 * WRITES as usize
    );
    for (f, keys) in expected.iter_mut().enumerate() {
        keys.sort_by(|a, b| reverse(a, b));
        let cf = db.cf_handle(&format!("f{f}")).unwrap();
        let seen: Vec<Vec<u8>> = db
            .iterator_cf(&cf, IteratorMode::Start)
            .map(|item| item.unwrap().0.to_vec())
            .collect();
        assert_eq!(&seen, keys, "family f{f}");
    }
}
