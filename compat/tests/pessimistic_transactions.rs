//! Pessimistic transactions: key locks taken by writes, `get_for_update`
//! and plain writes; lock timeouts (`Operation timed out`), deadlock
//! detection (`Resource busy: Deadlock`), the lock cap, snapshot
//! validation, names and prepare.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use alexdb::{
    ErrorKind, Options, TransactionDB, TransactionDBOptions, TransactionOptions,
    WriteBatchWithTransaction, WriteOptions,
};

fn open(txn_db_opts: &TransactionDBOptions) -> (tempfile::TempDir, TransactionDB) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = TransactionDB::open(&opts, txn_db_opts, dir.path().join("db")).unwrap();
    (dir, db)
}

fn short_timeouts() -> TransactionDBOptions {
    let mut opts = TransactionDBOptions::default();
    opts.set_txn_lock_timeout(20);
    opts.set_default_lock_timeout(20);
    opts
}

#[test]
fn a_held_key_times_out_other_transactions_and_plain_writes() {
    let (_dir, db) = open(&short_timeouts());
    let holder = db.transaction();
    holder.put(b"k", b"mine").unwrap();
    let other = db.transaction();
    let started = Instant::now();
    let err = other.put(b"k", b"theirs").unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(20));
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert_eq!(
        err.to_string(),
        "Operation timed out: Timeout waiting to lock key"
    );
    assert_eq!(
        db.put(b"k", b"plain").unwrap_err().kind(),
        ErrorKind::TimedOut
    );
    assert_eq!(db.delete(b"k").unwrap_err().kind(), ErrorKind::TimedOut);
    let mut batch = WriteBatchWithTransaction::<true>::default();
    batch.put(b"free", b"1");
    batch.put(b"k", b"2");
    assert_eq!(db.write(batch).unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(
        db.get(b"free").unwrap(),
        None,
        "a timed-out batch writes nothing"
    );
    holder.commit().unwrap();
    other.put(b"k", b"theirs").unwrap();
    other.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"theirs");
}

#[test]
fn a_waiting_writer_proceeds_when_the_holder_commits() {
    let mut opts = TransactionDBOptions::default();
    opts.set_default_lock_timeout(5_000);
    let (_dir, db) = open(&opts);
    let db = Arc::new(db);
    let holder = db.transaction();
    holder.put(b"k", b"first").unwrap();
    let writer = {
        let db = db.clone();
        thread::spawn(move || db.put(b"k", b"second"))
    };
    thread::sleep(Duration::from_millis(50));
    holder.commit().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"second");
}

#[test]
fn rollback_and_drop_release_locks() {
    let (_dir, db) = open(&short_timeouts());
    let txn = db.transaction();
    txn.put(b"a", b"1").unwrap();
    txn.rollback().unwrap();
    db.put(b"a", b"plain").unwrap();
    {
        let dropped = db.transaction();
        dropped.get_for_update(b"b", true).unwrap();
        assert_eq!(db.put(b"b", b"x").unwrap_err().kind(), ErrorKind::TimedOut);
    }
    db.put(b"b", b"x").unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"plain");
}

#[test]
fn shared_locks_admit_other_readers_but_not_writers() {
    let (_dir, db) = open(&short_timeouts());
    let reader1 = db.transaction();
    let reader2 = db.transaction();
    reader1.get_for_update(b"k", false).unwrap();
    reader2.get_for_update(b"k", false).unwrap();
    assert_eq!(
        reader2.put(b"k", b"v").unwrap_err().kind(),
        ErrorKind::TimedOut
    );
    drop(reader1);
    reader2.put(b"k", b"v").unwrap();
    reader2.commit().unwrap();
}

#[test]
fn deadlock_detection_fails_the_closing_wait_with_busy() {
    let (_dir, db) = open(&TransactionDBOptions::default());
    let db = Arc::new(db);
    let mut detect = TransactionOptions::default();
    detect.set_deadlock_detect(true);
    detect.set_lock_timeout(5_000);
    let barrier = Arc::new(Barrier::new(2));
    let first = {
        let (db, barrier, detect) = (db.clone(), barrier.clone(), detect.clone());
        thread::spawn(move || {
            let txn = db.transaction_opt(&WriteOptions::default(), &detect);
            txn.put(b"x", b"first").unwrap();
            barrier.wait();
            barrier.wait();
            // Waits for "y", held by the second transaction.
            let result = txn.put(b"y", b"first");
            result.and_then(|()| txn.commit())
        })
    };
    let second = db.transaction_opt(&WriteOptions::default(), &detect);
    second.put(b"y", b"second").unwrap();
    barrier.wait();
    barrier.wait();
    thread::sleep(Duration::from_millis(100));
    let err = second.put(b"x", b"second").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert_eq!(err.to_string(), "Resource busy: Deadlock");
    second.rollback().unwrap();
    first.join().unwrap().unwrap();
    assert_eq!(db.get(b"y").unwrap().unwrap(), b"first");
}

#[test]
fn the_lock_cap_is_busy() {
    let mut opts = TransactionDBOptions::default();
    opts.set_max_num_locks(2);
    let (_dir, db) = open(&opts);
    let txn = db.transaction();
    txn.put(b"a", b"1").unwrap();
    txn.put(b"b", b"1").unwrap();
    let err = txn.put(b"c", b"1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains("max_num_locks"), "{err}");
    txn.commit().unwrap();
}

#[test]
fn with_a_snapshot_a_key_written_since_fails_at_lock_time() {
    let (_dir, db) = open(&short_timeouts());
    let mut opts = TransactionOptions::default();
    opts.set_snapshot(true);
    let txn = db.transaction_opt(&WriteOptions::default(), &opts);
    db.put(b"k", b"after").unwrap();
    assert_eq!(txn.put(b"k", b"mine").unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(
        txn.get_for_update(b"k", true).unwrap_err().kind(),
        ErrorKind::Busy
    );
    // The failed attempt left no lock behind.
    db.put(b"k", b"again").unwrap();
    txn.put(b"other", b"fine").unwrap();
    txn.commit().unwrap();
}

#[test]
fn names_are_unique_and_prepare_needs_one() {
    let (_dir, db) = open(&TransactionDBOptions::default());
    let unnamed = db.transaction();
    unnamed.put(b"a", b"1").unwrap();
    assert_eq!(
        unnamed.prepare().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let named = db.transaction();
    named.set_name(b"t1").unwrap();
    assert_eq!(named.get_name().unwrap(), b"t1");
    assert_eq!(
        named.set_name(b"t2").unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let clash = db.transaction();
    assert_eq!(
        clash.set_name(b"t1").unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    named.put(b"b", b"2").unwrap();
    named.prepare().unwrap();
    named.commit().unwrap();
    clash.set_name(b"t1").unwrap();
    assert_eq!(db.get(b"b").unwrap().unwrap(), b"2");
}

#[test]
fn an_expired_transaction_fails_to_commit() {
    let (_dir, db) = open(&TransactionDBOptions::default());
    let mut opts = TransactionOptions::default();
    opts.set_expiration(10);
    let txn = db.transaction_opt(&WriteOptions::default(), &opts);
    txn.put(b"k", b"late").unwrap();
    thread::sleep(Duration::from_millis(30));
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Expired);
    assert_eq!(db.get(b"k").unwrap(), None);
}

#[test]
fn a_batch_past_its_size_limit_is_refused_whole() {
    let (_dir, db) = open(&TransactionDBOptions::default());
    let mut opts = TransactionOptions::default();
    opts.set_max_write_batch_size(64);
    let txn = db.transaction_opt(&WriteOptions::default(), &opts);
    txn.put(b"small", b"v").unwrap();
    let err = txn.put(b"big", [0u8; 100]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert_eq!(txn.get(b"big").unwrap(), None);
    txn.commit().unwrap();
    assert_eq!(db.get(b"small").unwrap().unwrap(), b"v");
}
