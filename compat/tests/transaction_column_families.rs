//! Transactions across column families, in both thread modes: a commit
//! applies its writes to every family at once, and an abandoned or
//! conflicting transaction leaves every family untouched.

use alexdb::{
    ErrorKind, MultiThreaded, OptimisticTransactionDB, Options, SingleThreaded, ThreadMode,
    TransactionDB, TransactionDBOptions,
};

fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

fn optimistic_commit_spans_families<T: ThreadMode>(
    db: &OptimisticTransactionDB<T>,
    cf: &impl alexdb::AsColumnFamilyRef,
) {
    let txn = db.transaction();
    txn.put(b"k", b"default").unwrap();
    txn.put_cf(cf, b"k", b"cf").unwrap();
    assert_eq!(txn.get_cf(cf, b"k").unwrap().unwrap(), b"cf");
    assert_eq!(db.get_cf(cf, b"k").unwrap(), None);
    txn.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"default");
    assert_eq!(db.get_cf(cf, b"k").unwrap().unwrap(), b"cf");

    let txn = db.transaction();
    txn.put(b"k2", b"default").unwrap();
    txn.put_cf(cf, b"k2", b"cf").unwrap();
    db.put_cf(cf, b"k2", b"theirs").unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(
        db.get(b"k2").unwrap(),
        None,
        "no family is touched on conflict"
    );
    assert_eq!(db.get_cf(cf, b"k2").unwrap().unwrap(), b"theirs");
}

#[test]
fn optimistic_single_threaded() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB<SingleThreaded> =
        OptimisticTransactionDB::open_cf(&options(), dir.path().join("db"), ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    optimistic_commit_spans_families(&db, &cf);
}

#[test]
fn optimistic_multi_threaded_shared_between_threads() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB<MultiThreaded> =
        OptimisticTransactionDB::open_cf(&options(), dir.path().join("db"), ["cf"]).unwrap();
    optimistic_commit_spans_families(&db, &db.cf_handle("cf").unwrap());
    db.create_cf("later", &Options::default()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            let later = db.cf_handle("later").unwrap();
            let txn = db.transaction();
            txn.put_cf(&later, b"k", b"from a thread").unwrap();
            txn.commit().unwrap();
        });
    });
    let later = db.cf_handle("later").unwrap();
    assert_eq!(db.get_cf(&later, b"k").unwrap().unwrap(), b"from a thread");
}

#[test]
fn pessimistic_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let txn_opts = TransactionDBOptions::default();
    {
        let db: TransactionDB<SingleThreaded> =
            TransactionDB::open_cf(&options(), &txn_opts, dir.path().join("a"), ["cf"]).unwrap();
        let cf = db.cf_handle("cf").unwrap();
        let txn = db.transaction();
        txn.put_cf(cf, b"k", b"v").unwrap();
        txn.delete(b"gone").unwrap();
        txn.commit().unwrap();
        assert_eq!(db.get_cf(cf, b"k").unwrap().unwrap(), b"v");
    }
    let db: TransactionDB<MultiThreaded> =
        TransactionDB::open_cf(&options(), &txn_opts, dir.path().join("b"), ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    let txn = db.transaction();
    txn.put_cf(&cf, b"k", b"v").unwrap();
    txn.put(b"k", b"d").unwrap();
    let abandoned = db.transaction();
    abandoned.put(b"other", b"never").unwrap();
    drop(abandoned);
    txn.commit().unwrap();
    assert_eq!(db.get_cf(&cf, b"k").unwrap().unwrap(), b"v");
    assert_eq!(db.get(b"other").unwrap(), None);
}

#[test]
fn a_transaction_into_a_dropped_family_fails_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut db: OptimisticTransactionDB<SingleThreaded> =
        OptimisticTransactionDB::open_cf(&options(), dir.path().join("db"), ["cf"]).unwrap();
    let batch = {
        let cf = db.cf_handle("cf").unwrap();
        let txn = db.transaction();
        txn.put(b"k", b"v").unwrap();
        txn.put_cf(cf, b"k", b"v").unwrap();
        txn.get_writebatch()
    };
    db.drop_cf("cf").unwrap();
    let txn = db.transaction();
    txn.rebuild_from_writebatch(&batch).unwrap();
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.get(b"k").unwrap(), None);
}
