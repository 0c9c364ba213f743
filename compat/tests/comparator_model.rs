//! Model test of column families with a custom comparator: seeded random
//! sequences of puts, deletes, range deletes and merges, with snapshots
//! taken mid-sequence and iterated later (seeks, steps both ways, bounds),
//! checked against a `BTreeMap` in the comparator's order, for several
//! comparators. Enough deletes run for the key set's sweep to run, with
//! and without older snapshots alive. Under a comparator that calls keys
//! of different bytes equal, they are one key, as in RocksDB: a put or
//! merge leaves the class under its own key's bytes.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::Path;

use alexdb as rocksdb;

use rocksdb::{DB, DBRawIterator, MergeOperands, Options, ReadOptions, Snapshot, WriteBatch};

/// A comparator the test runs under.
type Compare = fn(&[u8], &[u8]) -> Ordering;

/// Reverse bytewise order.
fn reverse(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

/// By the number the key ends with (no digits: 0), then bytewise.
fn numeric_suffix(a: &[u8], b: &[u8]) -> Ordering {
    fn number(key: &[u8]) -> u64 {
        let digits = key.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let tail = &key[key.len() - digits..];
        tail.iter()
            .fold(0u64, |n, d| n.wrapping_mul(10) + u64::from(d - b'0'))
    }
    number(a).cmp(&number(b)).then_with(|| a.cmp(b))
}

/// Case-insensitive, with bytewise order between keys equal but for case
/// (a total order).
fn case_insensitive(a: &[u8], b: &[u8]) -> Ordering {
    let lower = |k: &[u8]| k.to_ascii_lowercase();
    lower(a).cmp(&lower(b)).then_with(|| a.cmp(b))
}

/// Case-insensitive without a tie-break: keys equal but for case are one
/// key.
fn case_folding(a: &[u8], b: &[u8]) -> Ordering {
    a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
}

/// Concatenates the operands onto the existing value.
fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut value = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands {
        value.extend_from_slice(operand);
    }
    Some(value)
}

/// A key of the model, ordered by the comparator under test.
#[derive(Clone, Debug)]
struct Key(Vec<u8>, Compare);

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.1)(&self.0, &other.0)
    }
}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Key {}

type Model = BTreeMap<Key, Vec<u8>>;

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A key from a small space, so that keys repeat and differ by case.
    fn key(&mut self) -> Vec<u8> {
        // The last stem makes keys longer than the key set holds inline.
        const STEMS: [&str; 7] = [
            "a",
            "A",
            "b",
            "B",
            "ab",
            "aB",
            "a-key-longer-than-thirty-two-bytes-",
        ];
        let stem = STEMS[self.below(STEMS.len() as u64) as usize];
        format!("{stem}{}", self.below(40)).into_bytes()
    }
}

fn open(path: &Path, name: &str, compare: Compare) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_comparator(name, Box::new(compare));
    opts.set_merge_operator_associative("concat", concat);
    DB::open(&opts, path).unwrap()
}

/// Checks a raw iterator against the model's entries within the bounds,
/// through a random walk of seeks and steps.
fn check_walk(
    iter: &mut DBRawIterator<'_>,
    entries: &[(Vec<u8>, Vec<u8>)],
    compare: Compare,
    rng: &mut Rng,
) {
    let mut at: Option<usize> = None;
    for _ in 0..12 {
        match rng.below(6) {
            0 => {
                iter.seek_to_first();
                at = (!entries.is_empty()).then_some(0);
            }
            1 => {
                iter.seek_to_last();
                at = entries.len().checked_sub(1);
            }
            2 => {
                let target = rng.key();
                iter.seek(&target);
                let i = entries.partition_point(|(k, _)| compare(k, &target) == Ordering::Less);
                at = (i < entries.len()).then_some(i);
            }
            3 => {
                let target = rng.key();
                iter.seek_for_prev(&target);
                let i = entries.partition_point(|(k, _)| compare(k, &target) != Ordering::Greater);
                at = i.checked_sub(1);
            }
            4 if at.is_some() => {
                iter.next();
                at = at.map(|i| i + 1).filter(|&i| i < entries.len());
            }
            5 if at.is_some() => {
                iter.prev();
                at = at.and_then(|i| i.checked_sub(1));
            }
            _ => continue,
        }
        iter.status().unwrap();
        let expected = at.map(|i| (entries[i].0.as_slice(), entries[i].1.as_slice()));
        let got = iter.item();
        assert_eq!(got, expected);
    }
}

/// The model's entries within `[lower, upper)`.
fn bounded(
    model: &Model,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    compare: Compare,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| lower.is_none_or(|l| compare(&k.0, l) != Ordering::Less))
        .filter(|(k, _)| upper.is_none_or(|u| compare(&k.0, u) == Ordering::Less))
        .map(|(k, v)| (k.0.clone(), v.clone()))
        .collect()
}

/// Iterates `db` (at `snapshot` if given) with random bounds, against
/// `model`.
fn check_iteration(
    db: &DB,
    snapshot: Option<&Snapshot<'_>>,
    model: &Model,
    compare: Compare,
    rng: &mut Rng,
) {
    let mut readopts = ReadOptions::default();
    let lower = (rng.below(3) == 0).then(|| rng.key());
    let upper = (rng.below(3) == 0).then(|| rng.key());
    if let Some(l) = &lower {
        readopts.set_iterate_lower_bound(l.clone());
    }
    if let Some(u) = &upper {
        readopts.set_iterate_upper_bound(u.clone());
    }
    if let Some(snapshot) = snapshot {
        readopts.set_snapshot(snapshot);
    }
    let entries = bounded(model, lower.as_deref(), upper.as_deref(), compare);
    let mut iter = db.raw_iterator_opt(readopts);
    check_walk(&mut iter, &entries, compare, rng);
    check_gets(db, snapshot, model, compare, rng);
}

/// Reads random keys from `db` (at `snapshot` if given) one by one and in
/// one multi-get, against `model`.
fn check_gets(
    db: &DB,
    snapshot: Option<&Snapshot<'_>>,
    model: &Model,
    compare: Compare,
    rng: &mut Rng,
) {
    let keys: Vec<Vec<u8>> = (0..4).map(|_| rng.key()).collect();
    let expected: Vec<Option<Vec<u8>>> = keys
        .iter()
        .map(|k| model.get(&Key(k.clone(), compare)).cloned())
        .collect();
    let got: Vec<Option<Vec<u8>>> = match snapshot {
        Some(snapshot) => keys.iter().map(|k| snapshot.get(k).unwrap()).collect(),
        None => keys.iter().map(|k| db.get(k).unwrap()).collect(),
    };
    assert_eq!(got, expected, "gets of {keys:?}");
    let mut readopts = ReadOptions::default();
    if let Some(snapshot) = snapshot {
        readopts.set_snapshot(snapshot);
    }
    let many: Vec<Option<Vec<u8>>> = db
        .multi_get_opt(&keys, &readopts)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(many, expected, "multi-get of {keys:?}");
}

/// Applies one random write to `db` and `model`.
fn random_write(db: &DB, model: &mut Model, compare: Compare, rng: &mut Rng) {
    let key = rng.key();
    match rng.below(10) {
        0..=3 => {
            let value = format!("v{}", rng.below(1000)).into_bytes();
            db.put(&key, &value).unwrap();
            model.remove(&Key(key.clone(), compare));
            model.insert(Key(key, compare), value);
        }
        4..=6 => {
            db.delete(&key).unwrap();
            model.remove(&Key(key, compare));
        }
        7 => {
            let other = rng.key();
            let (begin, end) = match compare(&key, &other) {
                Ordering::Greater => (other, key),
                _ => (key, other),
            };
            let mut batch = WriteBatch::default();
            batch.delete_range(&begin, &end);
            db.write(batch).unwrap();
            model.retain(|k, _| {
                !(compare(&k.0, &begin) != Ordering::Less && compare(&k.0, &end) == Ordering::Less)
            });
        }
        _ => {
            let operand = format!("+{}", rng.below(10)).into_bytes();
            db.merge(&key, &operand).unwrap();
            let mut value = model.remove(&Key(key.clone(), compare)).unwrap_or_default();
            value.extend_from_slice(&operand);
            model.insert(Key(key, compare), value);
        }
    }
}

/// Runs `ops` random writes under `compare`, taking, iterating and
/// dropping snapshots along the way, then reopens and checks again.
fn run_model(name: &str, compare: Compare, seed: u64, ops: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut model = Model::new();
    {
        let db = open(dir.path(), name, compare);
        let mut snapshots: Vec<(Snapshot<'_>, Model)> = Vec::new();
        for step in 0..ops {
            random_write(&db, &mut model, compare, &mut rng);
            match rng.below(50) {
                0 if snapshots.len() < 4 => snapshots.push((db.snapshot(), model.clone())),
                1 if !snapshots.is_empty() => {
                    let i = rng.below(snapshots.len() as u64) as usize;
                    snapshots.swap_remove(i);
                }
                _ => {}
            }
            if step % 7 == 0 {
                check_iteration(&db, None, &model, compare, &mut rng);
            }
            if step % 11 == 0 && !snapshots.is_empty() {
                let i = rng.below(snapshots.len() as u64) as usize;
                let (snapshot, frozen) = &snapshots[i];
                check_iteration(&db, Some(snapshot), frozen, compare, &mut rng);
            }
        }
        for (snapshot, frozen) in &snapshots {
            check_iteration(&db, Some(snapshot), frozen, compare, &mut rng);
        }
    }
    let db = open(dir.path(), name, compare);
    for _ in 0..20 {
        check_iteration(&db, None, &model, compare, &mut rng);
    }
}

#[test]
fn reverse_bytewise_matches_the_model() {
    for seed in 1..=3 {
        run_model("reverse", reverse, seed, 4000);
    }
}

#[test]
fn numeric_suffix_order_matches_the_model() {
    for seed in 11..=13 {
        run_model("numeric_suffix", numeric_suffix, seed, 4000);
    }
}

#[test]
fn case_insensitive_order_matches_the_model() {
    for seed in 21..=23 {
        run_model("case_insensitive", case_insensitive, seed, 4000);
    }
}

#[test]
fn case_folding_keys_are_one_key_as_in_the_model() {
    for seed in 31..=33 {
        run_model("case_folding", case_folding, seed, 4000);
    }
}
