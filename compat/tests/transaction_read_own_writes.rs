//! A transaction reads its own writes over the database: point reads,
//! multi-reads, and iterators in both directions, with bounds, checked
//! against a `BTreeMap` model over many random states.

use std::collections::BTreeMap;
use std::ops::Bound;

use alexdb::{Direction, IteratorMode, OptimisticTransactionDB, ReadOptions, TransactionDB};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn key(&mut self) -> Vec<u8> {
        format!("k{:02}", self.below(40)).into_bytes()
    }
}

fn bounded(
    model: &Model,
    lower: &Option<Vec<u8>>,
    upper: &Option<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    if let (Some(lower), Some(upper)) = (lower, upper)
        && lower >= upper
    {
        return Vec::new();
    }
    let lo = lower.clone().map_or(Bound::Unbounded, Bound::Included);
    let hi = upper.clone().map_or(Bound::Unbounded, Bound::Excluded);
    model
        .range((lo, hi))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn collect(
    iter: impl Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), alexdb::Error>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    iter.map(|item| {
        let (k, v) = item.unwrap();
        (k.to_vec(), v.to_vec())
    })
    .collect()
}

fn read_options(lower: &Option<Vec<u8>>, upper: &Option<Vec<u8>>) -> ReadOptions {
    let mut opts = ReadOptions::default();
    if let Some(lower) = lower {
        opts.set_iterate_lower_bound(lower.clone());
    }
    if let Some(upper) = upper {
        opts.set_iterate_upper_bound(upper.clone());
    }
    opts
}

#[test]
fn iterators_and_reads_match_the_model_over_random_states() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut committed = Model::new();
    for round in 0..120 {
        for _ in 0..rng.below(8) {
            let key = rng.key();
            if rng.below(3) == 0 {
                db.delete(&key).unwrap();
                committed.remove(&key);
            } else {
                let value = format!("db{round}").into_bytes();
                db.put(&key, &value).unwrap();
                committed.insert(key, value);
            }
        }
        let txn = db.transaction();
        let mut seen = committed.clone();
        for _ in 0..rng.below(12) {
            let key = rng.key();
            if rng.below(3) == 0 {
                txn.delete(&key).unwrap();
                seen.remove(&key);
            } else {
                let value = format!("txn{round}").into_bytes();
                txn.put(&key, &value).unwrap();
                seen.insert(key, value);
            }
        }
        let lower = (rng.below(3) == 0).then(|| rng.key());
        let upper = (rng.below(3) == 0).then(|| rng.key());
        let want = bounded(&seen, &lower, &upper);
        let forward = txn.iterator_opt(IteratorMode::Start, read_options(&lower, &upper));
        assert_eq!(collect(forward), want, "round {round}: forward");
        let mut reverse =
            collect(txn.iterator_opt(IteratorMode::End, read_options(&lower, &upper)));
        reverse.reverse();
        assert_eq!(reverse, want, "round {round}: reverse");
        let probe = rng.key();
        let from: Vec<_> = want.iter().filter(|(k, _)| *k >= probe).cloned().collect();
        let mode = IteratorMode::From(&probe, Direction::Forward);
        assert_eq!(
            collect(txn.iterator_opt(mode, read_options(&lower, &upper))),
            from,
            "round {round}: from"
        );
        let mut back: Vec<_> = want.iter().filter(|(k, _)| *k <= probe).cloned().collect();
        back.reverse();
        let mode = IteratorMode::From(&probe, Direction::Reverse);
        assert_eq!(
            collect(txn.iterator_opt(mode, read_options(&lower, &upper))),
            back,
            "round {round}: back"
        );
        let key = rng.key();
        assert_eq!(
            txn.get(&key).unwrap(),
            seen.get(&key).cloned(),
            "round {round}: get"
        );
        let pinned = txn.get_pinned(&key).unwrap().map(|v| v.to_vec());
        assert_eq!(pinned, seen.get(&key).cloned(), "round {round}: get_pinned");
        if rng.below(2) == 0 {
            txn.commit().unwrap();
            committed = seen;
        }
    }
}

#[test]
fn a_raw_iterator_turns_around_across_pending_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db: TransactionDB = TransactionDB::open_default(dir.path().join("db")).unwrap();
    for key in [b"a", b"c", b"e"] {
        db.put(key, b"db").unwrap();
    }
    let txn = db.transaction();
    txn.put(b"b", b"txn").unwrap();
    txn.delete(b"c").unwrap();
    txn.put(b"e", b"txn").unwrap();
    let mut it = txn.raw_iterator();
    it.seek(b"b");
    assert_eq!(it.item(), Some((&b"b"[..], &b"txn"[..])));
    it.next();
    assert_eq!(it.item(), Some((&b"e"[..], &b"txn"[..])));
    it.prev();
    assert_eq!(it.item(), Some((&b"b"[..], &b"txn"[..])));
    it.prev();
    assert_eq!(it.item(), Some((&b"a"[..], &b"db"[..])));
    it.prev();
    assert!(!it.valid());
    it.seek_for_prev(b"d");
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.seek_to_last();
    assert_eq!(it.item(), Some((&b"e"[..], &b"txn"[..])));
    it.status().unwrap();
}

#[test]
fn multi_get_and_the_transaction_snapshot_see_pending_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    db.put(b"a", b"db").unwrap();
    db.put(b"b", b"db").unwrap();
    db.put(b"d", b"db-d").unwrap();
    let txn = db.transaction();
    txn.put(b"a", b"txn").unwrap();
    txn.delete(b"b").unwrap();
    txn.put(b"c", b"txn").unwrap();
    // Own writes and database reads interleaved keep the keys' order.
    let got: Vec<_> = txn
        .multi_get([b"a", b"d", b"b", b"e", b"c"])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let (txn_value, db_value) = (Some(b"txn".to_vec()), Some(b"db-d".to_vec()));
    assert_eq!(got, [txn_value.clone(), db_value, None, None, txn_value]);
    let snapshot = txn.snapshot();
    assert_eq!(snapshot.get(b"a").unwrap().unwrap(), b"txn");
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"db");
    assert_eq!(db.get(b"c").unwrap(), None);
}

#[test]
fn an_iterator_over_a_pending_merge_without_a_merge_operator_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB =
        OptimisticTransactionDB::open_default(dir.path().join("db")).unwrap();
    let txn = db.transaction();
    txn.put(b"a", b"v").unwrap();
    txn.merge(b"b", b"operand").unwrap();
    let items: Vec<_> = txn.iterator(IteratorMode::Start).collect();
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    let err = items[1].as_ref().unwrap_err();
    assert_eq!(err.kind(), alexdb::ErrorKind::NotSupported);
}
