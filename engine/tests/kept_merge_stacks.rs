//! Merge stacks of a keyspace without a merge function (a column family
//! opened without its merge operator, as RocksDB allows): compaction copies
//! them as they are instead of failing the pass, so other keyspaces'
//! space is reclaimed, and each stack folds to the value it had once the
//! function is set again.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use alexdb_engine::{Db, Error, KeyspaceId, MergeFunction, WriteOptions};

fn append() -> Arc<dyn MergeFunction> {
    Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
        Some([old.unwrap_or_default(), operand].concat())
    })
}

fn w() -> WriteOptions {
    WriteOptions::default()
}

/// A value long enough that merges over it stack (see `write/stacking.rs`).
const BASE: &[u8] = &[b'_'; 256];

/// Writes merges into keyspace "log" of `db` (merge function set): keys
/// over a put of [`BASE`], stacked up to the limit and resolved there, and
/// keys whose stacks of long operands lie over no value. Returns each key's
/// value.
fn write_log(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let log = db.create_keyspace("log").unwrap();
    db.set_merge_function(log, Some(append())).unwrap();
    let mut expected: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for k in 0..20u32 {
        let key = format!("based{k:02}").into_bytes();
        db.put(log, &key, BASE, &w()).unwrap();
        expected.insert(key, BASE.to_vec());
    }
    for i in 0..2_000u32 {
        let key = format!("based{:02}", i % 20).into_bytes();
        let operand = format!("<{i}>").into_bytes();
        db.merge(log, &key, &operand, &w()).unwrap();
        expected.get_mut(&key).unwrap().extend_from_slice(&operand);
    }
    for k in 0..5u8 {
        let key = format!("bare{k}").into_bytes();
        for part in 0..3u8 {
            let operand = vec![b'a' + k + part; 300];
            db.merge(log, &key, &operand, &w()).unwrap();
            expected.entry(key.clone()).or_default().extend(operand);
        }
    }
    expected
}

/// Whether every key of `expected` in keyspace `log` reads as the failed
/// merge of a keyspace without a merge function.
fn all_fail_without_function(db: &Db, log: KeyspaceId, expected: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for key in expected.keys() {
        let got = db.get_copied(log, key);
        assert!(
            matches!(
                got,
                Err(Error::MergeFailed {
                    no_function: true,
                    ..
                })
            ),
            "{}: {got:?}",
            String::from_utf8_lossy(key)
        );
    }
}

/// Every key of `expected` in keyspace `log` reads its value.
fn all_read(db: &Db, log: KeyspaceId, expected: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (key, value) in expected {
        let got = db.get_copied(log, key).unwrap();
        assert_eq!(
            got.as_ref(),
            Some(value),
            "{}",
            String::from_utf8_lossy(key)
        );
    }
}

/// The case, scaled down: merges in keyspace "log", reopened
/// without its merge function, then 20,000 keys of 100 bytes overwritten
/// five times in "default". Compaction used to fail every pass with
/// `TryAgain` (the directory stayed at about 5.5x the live data); now it
/// reclaims the overwritten versions and keeps the operands.
#[test]
fn a_keyspace_without_its_merge_function_stops_no_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let options = common::manual_compaction_options;
    let expected = {
        let db = Db::open(dir.path(), options()).unwrap();
        write_log(&db)
    };
    let db = Db::open(dir.path(), options()).unwrap();
    let (log, default) = (db.keyspace("log").unwrap(), KeyspaceId(0));
    all_fail_without_function(&db, log, &expected);
    const KEYS: u64 = 20_000;
    for round in 0..5u8 {
        for i in 0..KEYS {
            db.put(default, &i.to_be_bytes(), &[round; 100], &w())
                .unwrap();
        }
    }
    let before = common::disk_bytes(dir.path());
    db.compact()
        .expect("compaction copies the operands it cannot fold");
    let after = common::disk_bytes(dir.path());
    let live = KEYS * (8 + 100);
    eprintln!(
        "disk before compaction {before} B ({:.2}x live), after {after} B ({:.2}x live)",
        before as f64 / live as f64,
        after as f64 / live as f64
    );
    assert!(after * 3 < before, "{before} -> {after}");
    assert!(after < 2 * live, "{after} bytes for {live} of live data");
    assert_eq!(
        db.get_copied(default, &7u64.to_be_bytes()).unwrap(),
        Some(vec![4; 100])
    );
    all_fail_without_function(&db, log, &expected);
    db.verify().unwrap();
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    let log = db.keyspace("log").unwrap();
    all_fail_without_function(&db, log, &expected);
    db.set_merge_function(log, Some(append())).unwrap();
    all_read(&db, log, &expected);
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = common::scan_all(&db, log).into_iter().collect();
    assert_eq!(scanned, expected);
    db.verify().unwrap();
}

/// Stacks copied as they are survive a second compaction (from a compacted
/// segment this time), a reopen, and snapshots taken between operands or
/// before a put replaced the stack; once the function is set, a compaction
/// folds them as it always did.
#[test]
fn kept_stacks_fold_to_their_values_through_compactions_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let options = common::manual_compaction_options;
    let db = Db::open(dir.path(), options()).unwrap();
    let log = db.create_keyspace("log").unwrap();
    db.set_merge_function(log, Some(append())).unwrap();
    db.put(log, b"k", BASE, &w()).unwrap();
    let mut snaps = Vec::new();
    let mut value = BASE.to_vec();
    for c in b'a'..=b'e' {
        db.merge(log, b"k", &[c], &w()).unwrap();
        value.push(c);
        snaps.push((db.snapshot(), value.clone()));
    }
    db.put(log, b"p", BASE, &w()).unwrap();
    db.merge(log, b"p", b"x", &w()).unwrap();
    db.merge(log, b"p", b"y", &w()).unwrap();
    let before_put = db.snapshot();
    db.put(log, b"p", b"new", &w()).unwrap();
    db.set_merge_function(log, None).unwrap();
    db.put(KeyspaceId(0), b"other", b"v", &w()).unwrap();
    db.compact().unwrap();
    db.compact().unwrap();
    db.set_merge_function(log, Some(append())).unwrap();
    for (snap, seen) in &snaps {
        assert_eq!(snap.get(log, b"k").unwrap().as_deref(), Some(&seen[..]));
    }
    let p = before_put.get(log, b"p").unwrap();
    assert_eq!(p.as_deref(), Some(&[BASE, b"xy"].concat()[..]));
    assert_eq!(
        db.get_copied(log, b"p").unwrap().as_deref(),
        Some(&b"new"[..])
    );
    assert_eq!(db.get_copied(log, b"k").unwrap(), Some(value.clone()));
    db.verify().unwrap();
    drop((snaps, before_put));
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    let log = db.keyspace("log").unwrap();
    db.compact().unwrap();
    assert!(db.get_copied(log, b"k").is_err());
    db.set_merge_function(log, Some(append())).unwrap();
    assert_eq!(db.get_copied(log, b"k").unwrap(), Some(value.clone()));
    db.compact().unwrap();
    db.set_merge_function(log, None).unwrap();
    assert_eq!(
        db.get_copied(log, b"k").unwrap(),
        Some(value),
        "folded into a put by the compaction with the function"
    );
    db.verify().unwrap();
}

/// A key overwritten after its stack was kept reads its new value, and the
/// stack's bytes go at the next compaction.
#[test]
fn an_overwritten_kept_stack_goes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    let ks = KeyspaceId(0);
    db.set_merge_function(ks, Some(append())).unwrap();
    for k in 0..50u32 {
        db.put(ks, &k.to_be_bytes(), BASE, &w()).unwrap();
        for c in b'a'..=b'j' {
            db.merge(ks, &k.to_be_bytes(), &[c; 100], &w()).unwrap();
        }
    }
    db.set_merge_function(ks, None).unwrap();
    db.compact().unwrap();
    let kept = db.stats().data_bytes;
    for k in 0..50u32 {
        db.put(ks, &k.to_be_bytes(), b"new", &w()).unwrap();
    }
    db.compact().unwrap();
    let stats = db.stats();
    assert!(
        stats.data_bytes * 10 < kept,
        "{kept} -> {}",
        stats.data_bytes
    );
    assert_eq!(
        db.get_copied(ks, &3u32.to_be_bytes()).unwrap().as_deref(),
        Some(&b"new"[..])
    );
    db.verify().unwrap();
}
