//! `DB::repair` runs AlexDB's recovery: a healthy or torn database comes
//! back, a missing one or one that is open is refused.

use alexdb as rocksdb;

use rocksdb::{DB, Options};

#[test]
fn repair_recovers_a_database_and_refuses_an_open_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open_default(&path).unwrap();
        db.put(b"k", b"v").unwrap();
        assert!(
            DB::repair(&Options::default(), &path).is_err(),
            "the database is open"
        );
    }
    DB::repair(&Options::default(), &path).unwrap();
    let db = DB::open_default(&path).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn repairing_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    assert!(DB::repair(&Options::default(), dir.path().join("missing")).is_err());
}
