//! Merge operands are folded by the caller's merge function, in the same
//! order RocksDB folds them; without a function, reading fails clearly.

mod common;

use alexdb_rocksdb_format::{FormatError, RocksDir};
use common::{Layout, assert_same, key, open};

fn merge_heavy(path: &std::path::Path, layout: &Layout) {
    let db = open(path, layout);
    let counts = db.cf_handle("counts").unwrap();
    for round in 0..4u32 {
        for i in 0..600 {
            db.merge_cf(counts, key(i % 120), format!("r{round}i{i}"))
                .unwrap();
        }
        if round == 1 {
            for i in (0..120).step_by(9) {
                db.put_cf(counts, key(i), b"reset").unwrap();
            }
            for i in (1..120).step_by(11) {
                db.delete_cf(counts, key(i)).unwrap();
            }
        }
        if round < 3 {
            db.flush_cf(counts).unwrap();
        }
        if round == 2 {
            db.compact_range_cf(counts, None::<&[u8]>, Some(key(40)));
        }
    }
}

#[test]
fn merges_across_levels_and_the_wal_match_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    merge_heavy(dir.path(), &layout);
    assert!(assert_same(dir.path(), &layout) >= 120);
}

#[test]
fn merges_without_a_merge_function_are_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::default();
    merge_heavy(dir.path(), &layout);
    let db = RocksDir::open(dir.path()).unwrap();
    let family = db.family("counts").unwrap();
    assert_eq!(family.merge_operator.as_deref(), Some(common::MERGE_NAME));
    match db.entries("counts", None) {
        Err(FormatError::MergeOperatorRequired { family, operator }) => {
            assert_eq!(
                (family.as_str(), operator.as_str()),
                ("counts", common::MERGE_NAME)
            );
        }
        other => panic!("expected MergeOperatorRequired, got {other:?}"),
    }
    // A family without merges needs no function.
    assert!(db.entries("default", None).is_ok());
}

#[test]
fn a_failed_merge_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    merge_heavy(dir.path(), &Layout::default());
    let db = RocksDir::open(dir.path()).unwrap();
    let fail = |_: &[u8], _: Option<&[u8]>, _: &[&[u8]]| None;
    assert!(matches!(
        db.entries("counts", Some(&fail)),
        Err(FormatError::MergeFailed { .. })
    ));
}
