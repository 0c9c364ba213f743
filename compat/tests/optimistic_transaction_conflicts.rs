//! Optimistic transactions: write-write and read-write (`get_for_update`)
//! conflicts, with and without `set_snapshot`, fail the commit with
//! `Resource busy` and apply nothing; non-conflicting commits apply whole.

use alexdb::{
    ErrorKind, OptimisticTransactionDB, OptimisticTransactionOptions, Options, WriteOptions,
};

fn open() -> (tempfile::TempDir, OptimisticTransactionDB) {
    let dir = tempfile::tempdir().unwrap();
    let db = OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    (dir, db)
}

fn with_snapshot() -> OptimisticTransactionOptions {
    let mut opts = OptimisticTransactionOptions::default();
    opts.set_snapshot(true);
    opts
}

#[test]
fn write_write_conflict_is_busy_and_applies_nothing() {
    let (_dir, db) = open();
    let txn = db.transaction();
    txn.put(b"k", b"mine").unwrap();
    txn.put(b"side", b"effect").unwrap();
    db.put(b"k", b"theirs").unwrap();
    let err = txn.commit().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert_eq!(err.to_string(), "Resource busy: ");
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"theirs");
    assert_eq!(db.get(b"side").unwrap(), None);
}

#[test]
fn a_delete_by_another_writer_is_a_conflict_too() {
    let (_dir, db) = open();
    db.put(b"k", b"v").unwrap();
    let txn = db.transaction();
    txn.put(b"k", b"mine").unwrap();
    db.delete(b"k").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get(b"k").unwrap(), None);
}

#[test]
fn read_write_conflict_through_get_for_update() {
    let (_dir, db) = open();
    db.put(b"balance", b"10").unwrap();
    let txn = db.transaction();
    assert_eq!(
        txn.get_for_update(b"balance", true).unwrap().unwrap(),
        b"10"
    );
    txn.put(b"audit", b"read 10").unwrap();
    db.put(b"balance", b"0").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get(b"audit").unwrap(), None);
}

#[test]
fn a_plain_get_does_not_track_the_key() {
    let (_dir, db) = open();
    let txn = db.transaction();
    assert_eq!(txn.get(b"k").unwrap(), None);
    txn.put(b"other", b"v").unwrap();
    db.put(b"k", b"theirs").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"other").unwrap().unwrap(), b"v");
}

#[test]
fn without_a_snapshot_writes_before_the_first_touch_do_not_conflict() {
    let (_dir, db) = open();
    let txn = db.transaction();
    db.put(b"k", b"before").unwrap();
    txn.put(b"k", b"mine").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"mine");
}

#[test]
fn with_a_snapshot_writes_after_it_conflict_even_before_the_first_touch() {
    let (_dir, db) = open();
    let txn = db.transaction_opt(&WriteOptions::default(), &with_snapshot());
    db.put(b"k", b"after the snapshot").unwrap();
    txn.put(b"k", b"mine").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"after the snapshot");
}

#[test]
fn a_snapshot_transaction_still_reads_the_latest_value_with_get() {
    let (_dir, db) = open();
    let txn = db.transaction_opt(&WriteOptions::default(), &with_snapshot());
    db.put(b"k", b"new").unwrap();
    assert_eq!(txn.get(b"k").unwrap().unwrap(), b"new");
    assert_eq!(txn.snapshot().get(b"k").unwrap(), None);
}

#[test]
fn of_two_conflicting_transactions_the_first_to_commit_wins() {
    let (_dir, db) = open();
    let first = db.transaction();
    let second = db.transaction();
    first.put(b"k", b"first").unwrap();
    second.put(b"k", b"second").unwrap();
    first.commit().unwrap();
    assert_eq!(second.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"first");
}

#[test]
fn a_read_only_conflict_fails_an_empty_commit() {
    let (_dir, db) = open();
    let txn = db.transaction();
    txn.get_for_update(b"k", false).unwrap();
    db.put(b"k", b"v").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
}

#[test]
fn a_conflict_is_seen_after_compaction_removed_old_versions() {
    let (_dir, db) = open();
    for i in 0..200u32 {
        db.put(i.to_be_bytes(), b"v").unwrap();
    }
    let txn = db.transaction();
    txn.put(7u32.to_be_bytes(), b"mine").unwrap();
    db.delete(7u32.to_be_bytes()).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
}

#[test]
fn rollback_forgets_tracked_keys() {
    let (_dir, db) = open();
    let txn = db.transaction();
    txn.put(b"k", b"mine").unwrap();
    db.put(b"k", b"theirs").unwrap();
    txn.rollback().unwrap();
    txn.put(b"other", b"v").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"theirs");
    assert_eq!(db.get(b"other").unwrap().unwrap(), b"v");
}

#[test]
fn a_committed_transaction_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db: OptimisticTransactionDB = OptimisticTransactionDB::open_default(&path).unwrap();
        let txn = db.transaction();
        txn.put(b"a", b"1").unwrap();
        txn.delete(b"b").unwrap();
        txn.commit().unwrap();
        let abandoned = db.transaction();
        abandoned.put(b"c", b"never").unwrap();
    }
    let mut opts = Options::default();
    opts.create_if_missing(false);
    let db: OptimisticTransactionDB = OptimisticTransactionDB::open(&opts, &path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"c").unwrap(), None);
}

#[test]
fn merges_in_a_transaction_are_read_back_and_committed() {
    let (_dir, db) = open();
    let txn = db.transaction();
    txn.merge(b"k", b"operand").unwrap();
    // Without a merge operator the commit fails as a RocksDB batch does.
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.get(b"k").unwrap(), None);

    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_merge_operator_associative("concat", |_, existing, operands| {
        let mut v = existing.unwrap_or_default().to_vec();
        operands.iter().for_each(|op| v.extend_from_slice(op));
        Some(v)
    });
    let db: OptimisticTransactionDB = OptimisticTransactionDB::open(&opts, dir.path()).unwrap();
    db.put(b"k", b"a").unwrap();
    let txn = db.transaction();
    txn.merge(b"k", b"b").unwrap();
    // The transaction reads its own merges, in gets and iterators.
    assert_eq!(txn.get(b"k").unwrap().as_deref(), Some(&b"ab"[..]));
    txn.merge(b"k", b"c").unwrap();
    txn.merge(b"new", b"x").unwrap();
    let seen: Vec<_> = txn
        .iterator(alexdb::IteratorMode::Start)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (b"k".to_vec(), b"abc".to_vec()),
            (b"new".to_vec(), b"x".to_vec())
        ]
    );
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"a"[..]));
    txn.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abc"[..]));
    assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"x"[..]));
}

/// AlexDB checks conflicts against the whole history: a transaction held
/// open while others write far more than RocksDB's retained write buffers
/// (`max_write_buffer_size_to_maintain`, 4 MiB here) still commits when
/// nothing it touched changed, where RocksDB fails it with `TryAgain`
/// (docs/compatibility.md, "Differs, and why"; fedimint-rocksdb's suite expects RocksDB's
/// failure); and a key it touched, written by another even that long ago,
/// is still a conflict.
#[test]
fn a_long_lived_transaction_is_checked_against_the_whole_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(1 << 20);
    opts.set_max_write_buffer_size_to_maintain(4 << 20);
    let db: OptimisticTransactionDB = OptimisticTransactionDB::open(&opts, dir.path()).unwrap();
    let untouched = db.transaction_opt(&WriteOptions::default(), &with_snapshot());
    untouched.put(b"mine", b"v").unwrap();
    let touched = db.transaction_opt(&WriteOptions::default(), &with_snapshot());
    touched.put(b"shared", b"mine").unwrap();
    db.put(b"shared", b"theirs").unwrap();
    let value = vec![0xab_u8; 64 << 10];
    for i in 0u32..128 {
        db.put(i.to_be_bytes(), &value).unwrap();
    }
    untouched.commit().unwrap();
    assert_eq!(db.get(b"mine").unwrap(), Some(b"v".to_vec()));
    assert_eq!(touched.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get(b"shared").unwrap(), Some(b"theirs".to_vec()));
}
