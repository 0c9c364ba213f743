//! Savepoints: `rollback_to_savepoint` undoes the writes since the last
//! savepoint, savepoints nest, a missing one is `NotFound`, and a
//! pessimistic transaction releases the locks it took after the savepoint.

use alexdb::{ErrorKind, OptimisticTransactionDB, Options, TransactionDB, TransactionDBOptions};

#[test]
fn savepoints_nest_and_undo_writes_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    db.put(b"x", b"db").unwrap();
    let txn = db.transaction();
    txn.put(b"a", b"1").unwrap();
    txn.set_savepoint();
    txn.put(b"a", b"2").unwrap();
    txn.delete(b"x").unwrap();
    txn.set_savepoint();
    txn.put(b"b", b"3").unwrap();
    txn.rollback_to_savepoint().unwrap();
    assert_eq!(txn.get(b"b").unwrap(), None);
    assert_eq!(txn.get(b"a").unwrap().unwrap(), b"2");
    assert_eq!(txn.get(b"x").unwrap(), None);
    txn.rollback_to_savepoint().unwrap();
    assert_eq!(txn.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(txn.get(b"x").unwrap().unwrap(), b"db");
    let err = txn.rollback_to_savepoint().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(txn.get_writebatch().len(), 1);
    txn.commit().unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"x").unwrap().unwrap(), b"db");
}

#[test]
fn keys_first_touched_after_a_savepoint_stop_conflicting_once_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    let txn = db.transaction();
    txn.set_savepoint();
    txn.put(b"k", b"mine").unwrap();
    txn.rollback_to_savepoint().unwrap();
    db.put(b"k", b"theirs").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"theirs");
}

#[test]
fn a_pessimistic_rollback_to_savepoint_releases_the_later_locks() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut txn_db_opts = TransactionDBOptions::default();
    txn_db_opts.set_default_lock_timeout(0);
    let db: TransactionDB =
        TransactionDB::open(&opts, &txn_db_opts, dir.path().join("db")).unwrap();
    let txn = db.transaction();
    txn.put(b"early", b"1").unwrap();
    txn.set_savepoint();
    txn.put(b"late", b"2").unwrap();
    assert_eq!(
        db.put(b"late", b"x").unwrap_err().kind(),
        ErrorKind::TimedOut
    );
    txn.rollback_to_savepoint().unwrap();
    db.put(b"late", b"x").unwrap();
    assert_eq!(
        db.put(b"early", b"x").unwrap_err().kind(),
        ErrorKind::TimedOut
    );
    txn.commit().unwrap();
    db.put(b"early", b"x").unwrap();
}
