//! Merge operands: served merged on every read path, kept by snapshots,
//! compaction and reopen; a failed or function-less merge makes reads of
//! that version fail until the key is written again. (How operands are
//! stored and folded: `merge_stacks.rs`.)

mod common;

use std::sync::Arc;

use alexdb_engine::{Db, Error, KeyRange, KeyspaceId, WriteBatch, WriteOptions};

fn add_u64() -> Arc<dyn alexdb_engine::MergeFunction> {
    Arc::new(|_: &[u8], existing: Option<&[u8]>, operand: &[u8]| {
        let old = existing.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        let add = u64::from_le_bytes(operand.try_into().ok()?);
        Some((old + add).to_le_bytes().to_vec())
    })
}

fn counter(db: &Db, ks: KeyspaceId, key: &[u8]) -> Option<u64> {
    db.get_copied(ks, key)
        .unwrap()
        .map(|v| u64::from_le_bytes(v.try_into().unwrap()))
}

fn setup() -> (tempfile::TempDir, Db, KeyspaceId) {
    let dir = tempfile::tempdir().unwrap();
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    db.set_merge_function(ks, Some(add_u64())).unwrap();
    (dir, db, ks)
}

#[test]
fn merges_build_on_puts_deletes_and_each_other() {
    let (_dir, db, ks) = setup();
    let w = WriteOptions::default();
    db.merge(ks, b"c", &5u64.to_le_bytes(), &w).unwrap();
    db.merge(ks, b"c", &7u64.to_le_bytes(), &w).unwrap();
    assert_eq!(counter(&db, ks, b"c"), Some(12));
    db.put(ks, b"c", &100u64.to_le_bytes(), &w).unwrap();
    db.merge(ks, b"c", &1u64.to_le_bytes(), &w).unwrap();
    assert_eq!(counter(&db, ks, b"c"), Some(101));
    db.delete(ks, b"c", &w).unwrap();
    db.merge(ks, b"c", &3u64.to_le_bytes(), &w).unwrap();
    assert_eq!(counter(&db, ks, b"c"), Some(3));
    assert_eq!(db.live_keys(ks).unwrap(), 1);
}

#[test]
fn a_batch_merges_over_its_own_earlier_writes() {
    let (_dir, db, ks) = setup();
    let mut b = WriteBatch::new();
    b.put(ks, b"a", &10u64.to_le_bytes());
    b.merge(ks, b"a", &1u64.to_le_bytes());
    b.merge(ks, b"a", &1u64.to_le_bytes());
    b.delete_range(ks, b"b", b"z");
    b.put(ks, b"m", &50u64.to_le_bytes());
    b.delete_range(ks, b"m", b"n");
    b.merge(ks, b"m", &2u64.to_le_bytes());
    db.write(&b, &WriteOptions::default()).unwrap();
    assert_eq!(counter(&db, ks, b"a"), Some(12));
    assert_eq!(counter(&db, ks, b"m"), Some(2));
    assert_eq!(db.latest_sequence_number(), 7);
}

#[test]
fn snapshots_compaction_and_reopen_keep_merged_values() {
    let (dir, db, ks) = setup();
    let w = WriteOptions::default();
    for i in 0..2000u64 {
        db.merge(ks, &(i % 50).to_be_bytes(), &1u64.to_le_bytes(), &w)
            .unwrap();
    }
    let snap = db.snapshot();
    for i in 0..2000u64 {
        db.merge(ks, &(i % 50).to_be_bytes(), &1u64.to_le_bytes(), &w)
            .unwrap();
    }
    db.compact().unwrap();
    let at_snap = snap
        .get(ks, &7u64.to_be_bytes())
        .unwrap()
        .map(|v| u64::from_le_bytes((&*v).try_into().unwrap()));
    assert_eq!(at_snap, Some(40));
    assert_eq!(counter(&db, ks, &7u64.to_be_bytes()), Some(80));
    drop(snap);
    drop(db);
    let db = common::open(dir.path());
    db.set_merge_function(ks, Some(add_u64())).unwrap();
    let all = common::scan_all(&db, ks);
    assert_eq!(all.len(), 50);
    assert!(
        all.iter()
            .all(|(_, v)| u64::from_le_bytes(v.as_slice().try_into().unwrap()) == 80)
    );
    db.verify().unwrap();
}

#[test]
fn a_refused_operand_fails_reads_until_the_key_is_written() {
    let (_dir, db, ks) = setup();
    let w = WriteOptions::default();
    db.put(ks, b"k", &1u64.to_le_bytes(), &w).unwrap();
    let snap = db.snapshot();
    // Not eight bytes: the function refuses it.
    db.merge(ks, b"k", b"bad", &w).unwrap();
    let err = db.get_copied(ks, b"k").unwrap_err();
    assert!(
        matches!(
            err,
            Error::MergeFailed {
                no_function: false,
                ..
            }
        ),
        "{err:?}"
    );
    // Later merges stay failed; the snapshot still reads the old value.
    db.merge(ks, b"k", &1u64.to_le_bytes(), &w).unwrap();
    assert!(db.get_copied(ks, b"k").is_err());
    assert_eq!(
        snap.get(ks, b"k").unwrap().as_deref(),
        Some(&1u64.to_le_bytes()[..])
    );
    let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
    cursor.seek_to_first();
    assert!(!cursor.valid());
    assert!(cursor.status().is_err());
    db.put(ks, b"k", &9u64.to_le_bytes(), &w).unwrap();
    assert_eq!(counter(&db, ks, b"k"), Some(9));
}

#[test]
fn a_merge_without_a_function_fails_reads_and_survives_reopen_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    db.merge(ks, b"k", b"x", &WriteOptions::default()).unwrap();
    let err = db.get_copied(ks, b"k").unwrap_err();
    assert!(
        matches!(
            err,
            Error::MergeFailed {
                no_function: true,
                ..
            }
        ),
        "{err:?}"
    );
    drop(db);
    let db = common::open(dir.path());
    db.set_merge_function(ks, Some(add_u64())).unwrap();
    assert!(db.get_copied(ks, b"k").is_err());
    db.delete(ks, b"k", &WriteOptions::default()).unwrap();
    assert_eq!(db.get_copied(ks, b"k").unwrap(), None);
}
