//! User-defined timestamps against a model: a `BTreeMap<(key, ts),
//! Option<value>>` (`None` a delete at that timestamp). Random writes at
//! random timestamps, with reopens, then every read at every timestamp
//! (point reads, multi-gets, iterators both ways, seeks, bounds) must see
//! each key's newest version not after the read timestamp.

use std::collections::BTreeMap;
use std::path::Path;

#[path = "common/u64_timestamps.rs"]
mod u64_timestamps;

use alexdb as rocksdb;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksdb::{ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, ReadOptions};
use u64_timestamps::{read_at, set_u64_comparator, ts};

fn open(path: &Path) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut cf = Options::default();
    set_u64_comparator(&mut cf, <[u8]>::cmp);
    DB::open_cf_descriptors(&opts, path, vec![ColumnFamilyDescriptor::new("ts", cf)]).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    Put(u8, u64, u8),
    Delete(u8, u64),
    Reopen,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        // Keys with a zero byte and an empty key exercise the escaping.
        let key = *g.choose(&[0u8, 1, 2, 3, 4, 5]).unwrap();
        let at = u64::from(u8::arbitrary(g) % 8);
        match u8::arbitrary(g) % 10 {
            0..=5 => Op::Put(key, at, u8::arbitrary(g)),
            6..=8 => Op::Delete(key, at),
            _ => Op::Reopen,
        }
    }
}

/// The user key of model key `k`.
fn user_key(k: u8) -> Vec<u8> {
    match k {
        0 => Vec::new(),
        1 => vec![0],
        2 => vec![0, 0],
        3 => vec![0, 1],
        n => vec![b'k', n],
    }
}

type Model = BTreeMap<(Vec<u8>, u64), Option<Vec<u8>>>;

/// What a read at `at` sees, in key order.
fn visible(model: &Model, at: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut newest: BTreeMap<Vec<u8>, (u64, Option<Vec<u8>>)> = BTreeMap::new();
    for ((key, t), value) in model {
        if *t <= at && newest.get(key).is_none_or(|(best, _)| t > best) {
            newest.insert(key.clone(), (*t, value.clone()));
        }
    }
    newest
        .into_iter()
        .filter_map(|(k, (_, v))| v.map(|v| (k, v)))
        .collect()
}

fn check_reads(db: &DB, model: &Model) {
    let cf = db.cf_handle("ts").unwrap();
    for at in 0..9u64 {
        let want = visible(model, at);
        let opts = read_at(at);
        for k in 0..6 {
            let key = user_key(k);
            assert_eq!(
                db.get_cf_opt(&cf, &key, &opts).unwrap(),
                want.get(&key).cloned()
            );
            let pinned = db.get_pinned_cf_opt(&cf, &key, &opts).unwrap();
            assert_eq!(pinned.as_deref(), want.get(&key).map(Vec::as_slice));
        }
        let keys: Vec<Vec<u8>> = (0..6).map(user_key).collect();
        let got: Vec<Option<Vec<u8>>> = db
            .multi_get_cf_opt(keys.iter().map(|k| (&cf, k)), &opts)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let expected: Vec<Option<Vec<u8>>> = keys.iter().map(|k| want.get(k).cloned()).collect();
        assert_eq!(got, expected);
        let batched: Vec<Option<Vec<u8>>> = db
            .batched_multi_get_cf_opt(&cf, &keys, false, &opts)
            .into_iter()
            .map(|r| r.unwrap().map(|v| v.to_vec()))
            .collect();
        assert_eq!(batched, expected);
        check_iterators(db, &opts, &want);
    }
}

fn check_iterators(db: &DB, opts: &ReadOptions, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let cf = db.cf_handle("ts").unwrap();
    let pairs = |mode| -> Vec<(Vec<u8>, Vec<u8>)> {
        db.iterator_cf_opt(&cf, opts.clone(), mode)
            .map(|item| {
                let (k, v) = item.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect()
    };
    let forward: Vec<_> = want.clone().into_iter().collect();
    assert_eq!(pairs(IteratorMode::Start), forward);
    let mut backward = forward.clone();
    backward.reverse();
    assert_eq!(pairs(IteratorMode::End), backward);
    let from = user_key(2);
    let seeked: Vec<_> = want
        .range(from.clone()..)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(pairs(IteratorMode::From(&from, Direction::Forward)), seeked);
    let mut bounded = opts.clone();
    bounded.set_iterate_lower_bound(user_key(1));
    bounded.set_iterate_upper_bound(user_key(4));
    let got: Vec<Vec<u8>> = db
        .iterator_cf_opt(&cf, bounded, IteratorMode::End)
        .map(|item| item.unwrap().0.to_vec())
        .collect();
    let expected: Vec<Vec<u8>> = want
        .range(user_key(1)..user_key(4))
        .rev()
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(got, expected);
}

fn run(ops: Vec<Op>) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut db = open(&path);
    let mut model = Model::new();
    for op in ops {
        let cf = db.cf_handle("ts").unwrap();
        match op {
            Op::Put(k, at, v) => {
                db.put_cf_with_ts(&cf, user_key(k), ts(at), [v]).unwrap();
                model.insert((user_key(k), at), Some(vec![v]));
            }
            Op::Delete(k, at) => {
                db.delete_cf_with_ts(&cf, user_key(k), ts(at)).unwrap();
                model.insert((user_key(k), at), None);
            }
            Op::Reopen => {
                drop(db);
                db = open(&path);
            }
        }
    }
    check_reads(&db, &model);
    db.compact_range_cf(&db.cf_handle("ts").unwrap(), None::<&[u8]>, None::<&[u8]>);
    check_reads(&db, &model);
    true
}

#[test]
fn reads_at_every_timestamp_match_the_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}

#[test]
fn a_delete_at_the_same_timestamp_replaces_the_put() {
    assert!(run(vec![
        Op::Put(4, 3, 7),
        Op::Delete(4, 3),
        Op::Put(1, 3, 1)
    ]));
}
