//! Keys a column family's comparator calls equal are one key, as in
//! RocksDB: under a case-insensitive comparator a put of `"user"`
//! overwrites `"User"`, reads of any case find it, a delete of any case
//! removes it, and iteration shows it once, as its newest write spelled it.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use alexdb as rocksdb;

use rocksdb::{
    ColumnFamilyDescriptor, DB, IteratorMode, MergeOperands, Options, ReadOptions, TransactionDB,
    TransactionDBOptions, WriteBatch,
};

fn case_folding(a: &[u8], b: &[u8]) -> Ordering {
    a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
}

fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut value = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands {
        value.extend_from_slice(operand);
    }
    Some(value)
}

fn names_options() -> Options {
    let mut opts = Options::default();
    opts.set_comparator("case_folding", Box::new(case_folding));
    opts.set_merge_operator_associative("concat", concat);
    opts
}

fn db_options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

fn open(path: &Path) -> DB {
    let cfs = vec![ColumnFamilyDescriptor::new("names", names_options())];
    DB::open_cf_descriptors(&db_options(), path, cfs).unwrap()
}

/// The family's entries as `key=value` text, forward or backward.
fn scan(db: &DB, mode: IteratorMode<'_>, readopts: ReadOptions) -> Vec<String> {
    let cf = db.cf_handle("names").unwrap();
    db.iterator_cf_opt(&cf, readopts, mode)
        .map(|item| {
            let (k, v) = item.unwrap();
            format!(
                "{}={}",
                String::from_utf8_lossy(&k),
                String::from_utf8_lossy(&v)
            )
        })
        .collect()
}

fn get(db: &DB, key: &str) -> Option<String> {
    let cf = db.cf_handle("names").unwrap();
    let value = db.get_cf(&cf, key).unwrap();
    value.map(|v| String::from_utf8(v).unwrap())
}

#[test]
fn a_second_spelling_overwrites_the_first_and_a_delete_of_any_spelling_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("names").unwrap();
    db.put_cf(&cf, "User", "1").unwrap();
    db.put_cf(&cf, "user", "2").unwrap();
    db.put_cf(&cf, "Zed", "3").unwrap();
    assert_eq!(get(&db, "USER").as_deref(), Some("2"));
    assert_eq!(
        scan(&db, IteratorMode::Start, ReadOptions::default()),
        ["user=2", "Zed=3"]
    );
    assert_eq!(
        scan(&db, IteratorMode::End, ReadOptions::default()),
        ["Zed=3", "user=2"]
    );
    let many = db.multi_get_cf([(&cf, "uSER"), (&cf, "zED"), (&cf, "none")]);
    let many: Vec<Option<Vec<u8>>> = many.into_iter().map(Result::unwrap).collect();
    assert_eq!(many, [Some(b"2".to_vec()), Some(b"3".to_vec()), None]);
    assert!(db.key_may_exist_cf(&cf, "USER"));

    db.delete_cf(&cf, "uSeR").unwrap();
    assert_eq!(get(&db, "user"), None);
    assert_eq!(get(&db, "User"), None);
    assert_eq!(
        scan(&db, IteratorMode::Start, ReadOptions::default()),
        ["Zed=3"]
    );
}

#[test]
fn a_merge_folds_into_the_value_of_another_spelling_and_takes_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("names").unwrap();
    db.put_cf(&cf, "User", "a").unwrap();
    let before = db.snapshot();
    db.merge_cf(&cf, "USER", "b").unwrap();
    assert_eq!(get(&db, "user").as_deref(), Some("ab"));
    assert_eq!(
        scan(&db, IteratorMode::Start, ReadOptions::default()),
        ["USER=ab"]
    );
    // A snapshot from before the merge still sees the first spelling.
    let mut at_before = ReadOptions::default();
    at_before.set_snapshot(&before);
    assert_eq!(scan(&db, IteratorMode::Start, at_before), ["User=a"]);
    assert_eq!(before.get_cf(&cf, "uSeR").unwrap(), Some(b"a".to_vec()));
}

#[test]
fn one_batch_may_write_several_spellings_of_a_key() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let cf = db.cf_handle("names").unwrap();
        db.put_cf(&cf, "Ann", "0").unwrap();
        let mut batch = WriteBatch::default();
        batch.put_cf(&cf, "User", "a");
        batch.merge_cf(&cf, "user", "b");
        batch.merge_cf(&cf, "USER", "c");
        batch.merge_cf(&cf, "ANN", "1");
        batch.merge_cf(&cf, "ann", "2");
        batch.put_cf(&cf, "Bob", "x");
        batch.delete_cf(&cf, "BOB");
        batch.merge_cf(&cf, "bob", "y");
        db.write(batch).unwrap();
        assert_eq!(
            scan(&db, IteratorMode::Start, ReadOptions::default()),
            ["ann=012", "bob=y", "USER=abc"]
        );
    }
    let db = open(dir.path());
    assert_eq!(
        scan(&db, IteratorMode::Start, ReadOptions::default()),
        ["ann=012", "bob=y", "USER=abc"]
    );
    assert_eq!(get(&db, "Ann").as_deref(), Some("012"));
}

#[test]
fn a_range_delete_removes_every_spelling_in_its_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.cf_handle("names").unwrap();
    for key in ["a1", "B1", "c1", "D1"] {
        db.put_cf(&cf, key, "v").unwrap();
    }
    db.put_cf(&cf, "b1", "w").unwrap();
    let mut batch = WriteBatch::default();
    batch.delete_range_cf(&cf, "A1", "C1");
    db.write(batch).unwrap();
    assert_eq!(
        scan(&db, IteratorMode::Start, ReadOptions::default()),
        ["c1=v", "D1=v"]
    );
    assert_eq!(get(&db, "b1"), None);
}

/// A transaction database with the "names" family.
fn open_transaction_db(path: &Path) -> TransactionDB {
    let cfs = vec![ColumnFamilyDescriptor::new("names", names_options())];
    TransactionDB::open_cf_descriptors(&db_options(), &TransactionDBOptions::default(), path, cfs)
        .unwrap()
}

#[test]
fn a_transaction_writes_one_key_whatever_its_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_transaction_db(dir.path());
    let cf = db.cf_handle("names").unwrap();
    db.put_cf(&cf, "User", "1").unwrap();
    let txn = db.transaction();
    txn.put_cf(&cf, "user", "2").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get_cf(&cf, "USER").unwrap(), Some(b"2".to_vec()));
    let keys: Vec<Box<[u8]>> = db
        .iterator_cf(&cf, IteratorMode::Start)
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(keys, [b"user".to_vec().into_boxed_slice()]);
}

/// A transaction reads its own writes by the comparator too, as RocksDB's
/// indexed batch orders them: a write of one spelling answers a read of
/// another, shadows the database's spelling in the transaction's
/// iterators, and the newest spelling written wins.
#[test]
fn a_transaction_reads_its_own_writes_under_any_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_transaction_db(dir.path());
    let cf = db.cf_handle("names").unwrap();
    db.put_cf(&cf, "Alice", "a").unwrap();
    db.put_cf(&cf, "User", "0").unwrap();
    let txn = db.transaction();
    let scan = |txn: &rocksdb::Transaction<'_, TransactionDB>| -> Vec<String> {
        txn.iterator_cf(&cf, IteratorMode::Start)
            .map(|item| {
                let (k, v) = item.unwrap();
                format!(
                    "{}={}",
                    String::from_utf8_lossy(&k),
                    String::from_utf8_lossy(&v)
                )
            })
            .collect()
    };
    txn.put_cf(&cf, "user", "1").unwrap();
    assert_eq!(txn.get_cf(&cf, "USER").unwrap(), Some(b"1".to_vec()));
    assert_eq!(scan(&txn), ["Alice=a", "user=1"]);
    txn.put_cf(&cf, "uSeR", "2").unwrap();
    assert_eq!(txn.get_cf(&cf, "user").unwrap(), Some(b"2".to_vec()));
    assert_eq!(scan(&txn), ["Alice=a", "uSeR=2"]);
    let reverse: Vec<Box<[u8]>> = txn
        .iterator_cf(&cf, IteratorMode::End)
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(
        reverse,
        [
            b"uSeR".to_vec().into_boxed_slice(),
            b"Alice".to_vec().into_boxed_slice()
        ]
    );
    txn.delete_cf(&cf, "USER").unwrap();
    assert_eq!(txn.get_cf(&cf, "uSeR").unwrap(), None);
    assert_eq!(scan(&txn), ["Alice=a"]);
    txn.put_cf(&cf, "alice", "b").unwrap();
    assert_eq!(scan(&txn), ["alice=b"]);
    txn.commit().unwrap();
    assert_eq!(db.get_cf(&cf, "USER").unwrap(), None);
    assert_eq!(db.get_cf(&cf, "ALICE").unwrap(), Some(b"b".to_vec()));
}

#[test]
fn writers_of_different_spellings_at_once_leave_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open(dir.path()));
    let spellings = ["key", "KEY", "Key", "kEY"];
    std::thread::scope(|scope| {
        for (t, spelling) in spellings.iter().enumerate() {
            let db = Arc::clone(&db);
            scope.spawn(move || {
                let cf = db.cf_handle("names").unwrap();
                for i in 0..400 {
                    let key = format!("{spelling}{}", i % 8);
                    db.put_cf(&cf, &key, format!("{t}-{i}")).unwrap();
                }
            });
        }
    });
    let entries = scan(&db, IteratorMode::Start, ReadOptions::default());
    assert_eq!(entries.len(), 8, "{entries:?}");
    for entry in &entries {
        let (key, value) = entry.split_once('=').unwrap();
        assert_eq!(get(&db, &key.to_ascii_uppercase()).as_deref(), Some(value));
    }
}
