//! User-defined timestamps: RocksDB's refusals (plain writes and reads
//! without a timestamp on a timestamped column family, timestamps on a
//! plain one, wrong sizes, reads below `full_history_ts_low`), the
//! comparator's user-key order, snapshots, write batches,
//! `get_updates_since` and `full_history_ts_low` across reopen.

use std::cmp::Ordering;
use std::path::Path;

#[path = "common/u64_timestamps.rs"]
mod u64_timestamps;

use alexdb as rocksdb;

use rocksdb::{
    ColumnFamilyDescriptor, CompactOptions, DB, ErrorKind, IteratorMode, Options, ReadOptions,
    WriteBatch,
};
use u64_timestamps::{read_at, set_u64_comparator, ts};

/// User keys in *reverse* bytewise order, to see that iterators follow
/// the comparator's user-key order.
fn reverse(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

fn open(path: &Path) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut cf = Options::default();
    set_u64_comparator(&mut cf, reverse);
    let cfs = vec![
        ColumnFamilyDescriptor::new("ts", cf),
        ColumnFamilyDescriptor::new("plain", Options::default()),
    ];
    DB::open_cf_descriptors(&opts, path, cfs).unwrap()
}

fn kind<T: std::fmt::Debug>(result: Result<T, rocksdb::Error>) -> ErrorKind {
    result.unwrap_err().kind()
}

#[test]
fn plain_calls_on_a_timestamped_family_and_timestamps_on_a_plain_one_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let (cf, plain) = (db.cf_handle("ts").unwrap(), db.cf_handle("plain").unwrap());
    let invalid = ErrorKind::InvalidArgument;
    assert_eq!(kind(db.put_cf(&cf, b"k", b"v")), invalid);
    assert_eq!(kind(db.delete_cf(&cf, b"k")), invalid);
    assert_eq!(kind(db.delete_range_cf(&cf, b"a", b"z")), invalid);
    assert_eq!(kind(db.get_cf(&cf, b"k")), invalid);
    assert_eq!(kind(db.put_cf_with_ts(&cf, b"k", [1u8; 4], b"v")), invalid);
    assert_eq!(
        kind(db.get_cf_opt(&cf, b"k", &{
            let mut o = ReadOptions::default();
            o.set_timestamp([1u8; 4]);
            o
        })),
        invalid
    );
    assert_eq!(kind(db.put_cf_with_ts(&plain, b"k", ts(1), b"v")), invalid);
    assert_eq!(kind(db.get_cf_opt(&plain, b"k", &read_at(1))), invalid);
    assert_eq!(kind(db.get_full_history_ts_low(&plain)), invalid);
    let mut iter = db.raw_iterator_cf(&cf);
    iter.seek_to_first();
    assert!(!iter.valid());
    assert_eq!(iter.status().unwrap_err().kind(), invalid);
    let mut batch = WriteBatch::default();
    batch.put_cf(&cf, b"a key of more than eight bytes", b"v");
    assert_eq!(kind(db.write(batch)), invalid);
    let mut batch = WriteBatch::default();
    batch.put_cf_with_ts(&cf, b"k", ts(1), b"v");
    batch.put_cf(&plain, b"k", b"v");
    batch.delete_cf(&cf, b"no timestamp");
    assert_eq!(kind(db.write(batch)), invalid);
    // Nothing was written.
    let mut iter = db.raw_iterator_cf_opt(&cf, read_at(u64::MAX));
    iter.seek_to_first();
    assert!(!iter.valid());
    iter.status().unwrap();
}

#[test]
fn iterators_follow_the_comparator_s_user_key_order_and_report_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("ts").unwrap();
    for (key, t) in [(b"a", 1), (b"b", 2), (b"c", 3), (b"a", 4)] {
        db.put_cf_with_ts(&cf, key, ts(t), [t as u8]).unwrap();
    }
    let keys = |n: u64| -> Vec<Vec<u8>> {
        db.iterator_cf_opt(&cf, read_at(n), IteratorMode::Start)
            .map(|item| item.unwrap().0.to_vec())
            .collect()
    };
    assert_eq!(keys(9), [b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    assert_eq!(keys(2), [b"b".to_vec(), b"a".to_vec()]);
    let mut iter = db.raw_iterator_cf_opt(&cf, read_at(9));
    assert_eq!(iter.timestamp(), None);
    iter.seek(b"b");
    assert_eq!(
        (iter.key(), iter.timestamp()),
        (Some(&b"b"[..]), Some(&ts(2)[..]))
    );
    iter.next();
    assert_eq!(
        (iter.key(), iter.value()),
        (Some(&b"a"[..]), Some(&[4u8][..]))
    );
    assert_eq!(iter.timestamp(), Some(&ts(4)[..]));
    iter.seek_for_prev(b"bb");
    assert_eq!(iter.key(), Some(&b"c"[..]));
    iter.next();
    iter.next();
    iter.next();
    assert_eq!(iter.timestamp(), None);
}

#[test]
fn a_snapshot_read_at_a_timestamp_sees_the_versions_of_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("ts").unwrap();
    db.put_cf_with_ts(&cf, b"k", ts(5), b"old").unwrap();
    let snapshot = db.snapshot();
    db.put_cf_with_ts(&cf, b"k", ts(3), b"older ts, newer write")
        .unwrap();
    db.delete_cf_with_ts(&cf, b"k", ts(7)).unwrap();
    let mut opts = read_at(9);
    assert_eq!(db.get_cf_opt(&cf, b"k", &opts).unwrap(), None);
    assert_eq!(
        snapshot
            .get_cf_opt(&cf, b"k", opts.clone())
            .unwrap()
            .unwrap(),
        b"old"
    );
    opts.set_timestamp(ts(4));
    assert_eq!(snapshot.get_cf_opt(&cf, b"k", opts.clone()).unwrap(), None);
    assert_eq!(
        db.get_cf_opt(&cf, b"k", &opts).unwrap().unwrap(),
        b"older ts, newer write"
    );
}

#[test]
fn batches_write_versions_and_get_updates_since_logs_them_as_rocksdb_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("ts").unwrap();
    let mut batch = WriteBatch::default();
    batch.put_cf_with_ts(&cf, b"k", ts(1), b"v1");
    batch.delete_cf_with_ts(&cf, b"k", ts(2));
    let written = batch.data().to_vec();
    db.write(batch).unwrap();
    assert_eq!(
        db.get_cf_opt(&cf, b"k", &read_at(1)).unwrap().unwrap(),
        b"v1"
    );
    assert_eq!(db.get_cf_opt(&cf, b"k", &read_at(2)).unwrap(), None);
    let (seq, logged) = db.get_updates_since(0).unwrap().next().unwrap().unwrap();
    assert_eq!(seq, 1);
    assert_eq!(logged.data()[12..], written[12..]);
}

#[test]
fn full_history_ts_low_only_rises_survives_reopen_and_fences_reads() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let cf = db.cf_handle("ts").unwrap();
        assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), Vec::<u8>::new());
        db.put_cf_with_ts(&cf, b"k", ts(1), b"v1").unwrap();
        db.put_cf_with_ts(&cf, b"k", ts(5), b"v5").unwrap();
        db.increase_full_history_ts_low(&cf, ts(3)).unwrap();
        let lower = db.increase_full_history_ts_low(&cf, ts(2));
        assert_eq!(kind(lower), ErrorKind::InvalidArgument);
        // A compaction over a key range may not raise it: nothing happens.
        let mut raise = CompactOptions::default();
        raise.set_full_history_ts_low(ts(9));
        db.compact_range_cf_opt(&cf, Some(b"a"), None::<&[u8]>, &raise);
        assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), ts(3));
    }
    let db = open(dir.path());
    let cf = db.cf_handle("ts").unwrap();
    assert_eq!(db.get_full_history_ts_low(&cf).unwrap(), ts(3));
    assert_eq!(
        kind(db.get_cf_opt(&cf, b"k", &read_at(2))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        db.get_cf_opt(&cf, b"k", &read_at(3)).unwrap().unwrap(),
        b"v1"
    );
    assert_eq!(
        db.get_cf_opt(&cf, b"k", &read_at(5)).unwrap().unwrap(),
        b"v5"
    );
    // Its bookkeeping is no user key.
    let all: Vec<_> = db
        .iterator_cf_opt(&cf, read_at(9), IteratorMode::Start)
        .map(|item| item.unwrap().0.to_vec())
        .collect();
    assert_eq!(all, [b"k".to_vec()]);
}

#[test]
fn compaction_filters_on_a_timestamped_family_are_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    set_u64_comparator(&mut opts, reverse);
    opts.set_compaction_filter("keep", |_, _, _| rocksdb::compaction_filter::Decision::Keep);
    let err = DB::open(&opts, dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
}

#[test]
fn transactions_writing_a_timestamped_family_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut cf_opts = Options::default();
    set_u64_comparator(&mut cf_opts, reverse);
    let cfs = vec![ColumnFamilyDescriptor::new("ts", cf_opts)];
    let db: rocksdb::TransactionDB = rocksdb::TransactionDB::open_cf_descriptors(
        &opts,
        &rocksdb::TransactionDBOptions::default(),
        dir.path(),
        cfs,
    )
    .unwrap();
    let cf = db.cf_handle("ts").unwrap();
    let txn = db.transaction();
    txn.put_cf(&cf, b"key and ts", b"v").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::NotSupported);
    assert_eq!(
        db.get_cf(&cf, b"key and ts").unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn log_data_in_a_database_whose_default_family_has_timestamps_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    set_u64_comparator(&mut opts, reverse);
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut batch = WriteBatch::default();
    batch.put_log_data(b"the blob");
    // Without a handle, the key's last bytes are its timestamp (RocksDB's
    // batch does not know the default family's timestamp size).
    batch.put([&b"k"[..], &ts(1)].concat(), b"v");
    let written = batch.data().to_vec();
    db.write(batch).unwrap();
    let (_, logged) = db.get_updates_since(0).unwrap().next().unwrap().unwrap();
    assert_eq!(logged.data()[12..], written[12..]);
    assert_eq!(db.get_opt(b"k", &read_at(1)).unwrap().unwrap(), b"v");
}
