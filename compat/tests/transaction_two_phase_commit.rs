//! Two-phase commit: a prepared transaction that is neither committed nor
//! rolled back is recovered, with its locks, when the database is opened
//! again; committing it applies its writes, rolling it back discards them,
//! and either way it is not recovered a second time.

use alexdb::{ErrorKind, Options, TransactionDB, TransactionDBOptions};

fn open(path: &std::path::Path) -> TransactionDB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut txn_db_opts = TransactionDBOptions::default();
    txn_db_opts.set_default_lock_timeout(10);
    TransactionDB::open(&opts, &txn_db_opts, path).unwrap()
}

#[test]
fn prepared_transactions_survive_reopen_with_their_locks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = open(&path);
        for (name, key) in [(&b"keep"[..], &b"k1"[..]), (b"drop", b"k2")] {
            let txn = db.transaction();
            txn.put(key, b"prepared").unwrap();
            txn.set_name(name).unwrap();
            txn.prepare().unwrap();
        }
        let finished = db.transaction();
        finished.set_name(b"done").unwrap();
        finished.put(b"k3", b"committed").unwrap();
        finished.prepare().unwrap();
        finished.commit().unwrap();
    }
    {
        let db = open(&path);
        assert_eq!(db.put(b"k1", b"x").unwrap_err().kind(), ErrorKind::TimedOut);
        let clash = db.transaction();
        assert_eq!(
            clash.set_name(b"keep").unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let mut recovered = db.prepared_transactions();
        assert!(db.prepared_transactions().is_empty());
        recovered.sort_by_key(|txn| txn.get_name());
        let names: Vec<_> = recovered.iter().map(|t| t.get_name().unwrap()).collect();
        assert_eq!(names, [b"drop".to_vec(), b"keep".to_vec()]);
        let keep = recovered.pop().unwrap();
        let drop_it = recovered.pop().unwrap();
        assert_eq!(keep.get(b"k1").unwrap().unwrap(), b"prepared");
        keep.commit().unwrap();
        drop_it.rollback().unwrap();
        assert_eq!(db.get(b"k1").unwrap().unwrap(), b"prepared");
        assert_eq!(db.get(b"k2").unwrap(), None);
        assert_eq!(db.get(b"k3").unwrap().unwrap(), b"committed");
        db.put(b"k1", b"free again").unwrap();
    }
    let db = open(&path);
    assert!(db.prepared_transactions().is_empty());
    assert_eq!(db.get(b"k1").unwrap().unwrap(), b"free again");
}

#[test]
fn destroy_removes_prepared_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = open(&path);
        let txn = db.transaction();
        txn.put(b"k", b"v").unwrap();
        txn.set_name(b"t").unwrap();
        txn.prepare().unwrap();
    }
    TransactionDB::<alexdb::SingleThreaded>::destroy(&Options::default(), &path).unwrap();
    assert!(!path.exists());
    let db = open(&path);
    assert!(db.prepared_transactions().is_empty());
}

#[test]
fn optimistic_transactions_cannot_prepare() {
    let dir = tempfile::tempdir().unwrap();
    let db: alexdb::OptimisticTransactionDB =
        alexdb::OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    let txn = db.transaction();
    txn.set_name(b"t").unwrap();
    assert_eq!(
        txn.prepare().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}
