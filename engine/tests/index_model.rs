//! Model test: random operation sequences against `BTreeMap<Vec<u8>, u64>`
//! over each key shape the index must handle. Batched upserts are checked
//! against sequential inserts into the map. Leaves are packed now and then
//! (`pack_leaves`), so every operation also meets packed leaves, and
//! payloads spread over many high halves and low halves of every width, so
//! that some fit a packed leaf's words and some do not.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use alexdb_engine::index::{AlexIndex, KeyResolver, LeafForm, ScanDirection};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

/// Size of each shape's key universe.
const UNIVERSE: u32 = 3000;
/// Sequences per shape (6 shapes).
const TESTS_PER_SHAPE: u64 = 200;

#[derive(Clone, Copy, Debug)]
enum Shape {
    Sequential,
    Uniform,
    Lognormal,
    Prefixed,
    Outliers,
    Ties,
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Key `i` of a shape's universe (distinct for distinct `i`).
fn key_of(shape: Shape, i: u32) -> Vec<u8> {
    let i64 = u64::from(i);
    match shape {
        Shape::Sequential => (i64 * 5).to_be_bytes().to_vec(),
        Shape::Uniform => mix(i64).to_be_bytes().to_vec(),
        Shape::Lognormal => {
            // exp(N(0, 2)) via Box-Muller, scaled; the low bits keep keys distinct.
            let u1 = (mix(i64) >> 11) as f64 / (1u64 << 53) as f64 + 1e-12;
            let u2 = (mix(i64 + 7919) >> 11) as f64 / (1u64 << 53) as f64;
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            let v = ((2.0 * z).exp() * 1e9) as u64;
            ((v << 12) | i64).to_be_bytes().to_vec()
        }
        Shape::Prefixed => format!("user:profile:{:06}:{}", mix(i64) % 1_000_000, i).into_bytes(),
        Shape::Outliers => {
            if i.is_multiple_of(97) {
                (u64::MAX - i64).to_be_bytes().to_vec()
            } else if i.is_multiple_of(89) {
                format!("~outlier~{i}").into_bytes()
            } else {
                (i64 * 3).to_be_bytes()[4..].to_vec()
            }
        }
        Shape::Ties => {
            // Groups of 8 keys equal up to trailing zeros ("a", "a\0", ...), and the empty key.
            if i == 0 {
                return Vec::new();
            }
            let mut k = ((i / 8) as u16).to_be_bytes().to_vec();
            k.extend(std::iter::repeat_n(0, (i % 8) as usize));
            k
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Upsert(u32),
    Remove(u32),
    Get(u32),
    Candidate(u32),
    Scan {
        from: Option<(u32, bool)>,
        reverse: bool,
        limit: usize,
    },
    Fill {
        start: u32,
        len: u32,
        down: bool,
    },
    RemoveRange {
        start: u32,
        len: u32,
    },
    /// `upsert_batch` of keys `start + offsets[j]` (mod the universe):
    /// clustered, so several land in one data node, and with duplicates.
    Batch {
        start: u32,
        offsets: Vec<u16>,
    },
    BulkLoad,
    /// `pack_leaves`.
    Pack,
    /// `replace_if` of a key's payload with a new one (as compaction moves
    /// a record), and once with a stale expected payload.
    Repoint(u32),
    /// `remove_if` with the payload the key holds.
    RemoveIf(u32),
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let key = |g: &mut Gen| u32::arbitrary(g) % UNIVERSE;
        match u8::arbitrary(g) % 28 {
            0..=5 => Op::Upsert(key(g)),
            6..=8 => Op::Remove(key(g)),
            9..=10 => Op::Get(key(g)),
            11..=12 => Op::Candidate(key(g)),
            13..=15 => Op::Scan {
                from: bool::arbitrary(g).then(|| (key(g), bool::arbitrary(g))),
                reverse: bool::arbitrary(g),
                limit: usize::arbitrary(g) % 700,
            },
            16..=17 => Op::Fill {
                start: key(g),
                len: u32::arbitrary(g) % 800,
                down: bool::arbitrary(g),
            },
            18 => Op::RemoveRange {
                start: key(g),
                len: u32::arbitrary(g) % 500,
            },
            19..=21 => {
                let (len, spread) = (usize::arbitrary(g) % 700, 1 + u16::arbitrary(g) % 1500);
                Op::Batch {
                    start: key(g),
                    offsets: (0..len).map(|_| u16::arbitrary(g) % spread).collect(),
                }
            }
            22 => Op::BulkLoad,
            23..=24 => Op::Pack,
            25..=26 => Op::Repoint(key(g)),
            _ => Op::RemoveIf(key(g)),
        }
    }
}

/// Every key ever inserted, and its payload (see [`payload_of`]).
#[derive(Default)]
struct Keys(Vec<Vec<u8>>, HashMap<u64, usize>);

impl Keys {
    /// Records `key` under a fresh payload, and returns it.
    fn push(&mut self, key: Vec<u8>) -> u64 {
        let payload = payload_of(self.0.len());
        self.1.insert(payload, self.0.len());
        self.0.push(key);
        payload
    }
}

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[self.1[&payload]]
    }
}

/// The payload of the `i`-th key ever inserted: distinct for distinct `i`,
/// with high halves that change every 64 keys (up to 40 of them), the low
/// half's top bit set for one in 5, and for one in 151 a low half too wide
/// for a packed leaf's word.
fn payload_of(i: usize) -> u64 {
    let i = i as u64;
    let high = (i / 64) % 40;
    let mut low = i * 8;
    if i.is_multiple_of(5) {
        low |= 1 << 31;
    }
    if i.is_multiple_of(151) {
        low |= 1 << 30;
    }
    (high << 32) | low
}

struct Harness {
    shape: Shape,
    keys: Keys,
    model: BTreeMap<Vec<u8>, u64>,
    index: AlexIndex,
}

impl Harness {
    fn upsert(&mut self, i: u32) -> Result<(), String> {
        let key = key_of(self.shape, i);
        let payload = self.keys.push(key.clone());
        let got = self.index.upsert(&key, payload, &self.keys);
        let want = self.model.insert(key.clone(), payload);
        check(got == want, || {
            format!("upsert {key:?}: {got:?} != {want:?}")
        })
    }

    /// One `upsert_batch` call against the same entries inserted into the
    /// model one by one, in input order.
    fn batch(&mut self, keys: &[u32]) -> Result<(), String> {
        let first = self.keys.0.len();
        for &i in keys {
            self.keys.push(key_of(self.shape, i));
        }
        let entries: Vec<(&[u8], u64)> = (first..self.keys.0.len())
            .map(|j| (self.keys.0[j].as_slice(), payload_of(j)))
            .collect();
        let got = self.index.upsert_batch(&entries, &self.keys);
        let want: Vec<Option<u64>> = entries
            .iter()
            .map(|&(k, p)| self.model.insert(k.to_vec(), p))
            .collect();
        check(got == want, || {
            let bad = (0..want.len()).find(|&j| got.get(j) != Some(&want[j]));
            format!("batch of {}: first mismatch at {bad:?}", want.len())
        })
    }

    fn remove(&mut self, i: u32) -> Result<(), String> {
        let key = key_of(self.shape, i);
        let got = self.index.remove(&key, &self.keys);
        let want = self.model.remove(&key);
        check(got == want, || {
            format!("remove {key:?}: {got:?} != {want:?}")
        })
    }

    /// Moves key `i`'s entry to a new payload with `replace_if`; a stale
    /// expected payload changes nothing.
    fn repoint(&mut self, i: u32) -> Result<(), String> {
        let key = key_of(self.shape, i);
        let Some(&old) = self.model.get(&key) else {
            let stale = self
                .index
                .replace_if(&key, payload_of(0) ^ 1, 7, &self.keys);
            return check(!stale, || format!("repoint of absent {key:?} succeeded"));
        };
        let new = self.keys.push(key.clone());
        let stale = self.index.replace_if(&key, new, old, &self.keys);
        check(!stale, || format!("repoint {key:?} from a stale payload"))?;
        let done = self.index.replace_if(&key, old, new, &self.keys);
        self.model.insert(key.clone(), new);
        check(done, || format!("repoint {key:?} {old} -> {new} failed"))
    }

    /// Removes key `i` with `remove_if` and the payload it holds, after a
    /// stale attempt that must change nothing.
    fn remove_if(&mut self, i: u32) -> Result<(), String> {
        let key = key_of(self.shape, i);
        let held = self.model.get(&key).copied();
        let stale = held.map_or(payload_of(0) ^ 1, |p| p | 1);
        let removed = self.index.remove_if(&key, stale, &self.keys);
        check(!removed, || {
            format!("remove_if {key:?} with a stale payload")
        })?;
        let Some(held) = held else {
            return Ok(());
        };
        let removed = self.index.remove_if(&key, held, &self.keys);
        self.model.remove(&key);
        check(removed, || format!("remove_if {key:?} {held} failed"))
    }

    fn get(&self, i: u32, candidate: bool) -> Result<(), String> {
        let key = key_of(self.shape, i);
        let guard = crossbeam_epoch::pin();
        let want = self.model.get(&key).copied();
        if candidate {
            let got = self.index.get_candidate(&key, &self.keys, &guard);
            let confirmed = got.filter(|&p| self.keys.key(p) == key);
            check(confirmed == want, || {
                format!("candidate {key:?}: {got:?} vs {want:?}")
            })
        } else {
            let got = self.index.get(&key, &self.keys, &guard);
            check(got == want, || format!("get {key:?}: {got:?} != {want:?}"))
        }
    }

    fn scan(&self, from: Option<(u32, bool)>, reverse: bool, limit: usize) -> Result<(), String> {
        let from_key = from.map(|(i, inc)| (key_of(self.shape, i), inc));
        let bound = match &from_key {
            None => Bound::Unbounded,
            Some((k, true)) => Bound::Included(k.as_slice()),
            Some((k, false)) => Bound::Excluded(k.as_slice()),
        };
        let want: Vec<u64> = if reverse {
            let range = self.model.range::<[u8], _>((Bound::Unbounded, bound));
            range.rev().take(limit).map(|(_, &p)| p).collect()
        } else {
            let range = self.model.range::<[u8], _>((bound, Bound::Unbounded));
            range.take(limit).map(|(_, &p)| p).collect()
        };
        let dir = if reverse {
            ScanDirection::Reverse
        } else {
            ScanDirection::Forward
        };
        let guard = crossbeam_epoch::pin();
        let mut got = Vec::new();
        self.index
            .collect(bound, dir, limit, &self.keys, &guard, &mut got);
        check(got == want, || {
            format!(
                "scan {from_key:?} rev={reverse} limit={limit}: {} vs {} entries",
                got.len(),
                want.len()
            )
        })
    }

    fn apply(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Upsert(i) => self.upsert(i),
            Op::Remove(i) => self.remove(i),
            Op::Get(i) => self.get(i, false),
            Op::Candidate(i) => self.get(i, true),
            Op::Scan {
                from,
                reverse,
                limit,
            } => self.scan(from, reverse, limit),
            Op::Fill { start, len, down } => (0..len).try_for_each(|d| {
                let i = if down { start + len - d } else { start + d };
                self.upsert(i % UNIVERSE)
            }),
            Op::RemoveRange { start, len } => {
                (start..start + len).try_for_each(|i| self.remove(i % UNIVERSE))
            }
            Op::Batch { start, ref offsets } => {
                let keys: Vec<u32> = offsets
                    .iter()
                    .map(|&o| (start + u32::from(o)) % UNIVERSE)
                    .collect();
                self.batch(&keys)
            }
            Op::BulkLoad => {
                // Packed leaves for one load in two, as an open builds them.
                let payloads: Vec<u64> = self.model.values().copied().collect();
                let form = match payloads.len() % 2 {
                    0 => LeafForm::Packed,
                    _ => LeafForm::Dense,
                };
                self.index = AlexIndex::bulk_load_as(&payloads, &self.keys, form);
                Ok(())
            }
            Op::Pack => {
                self.index.pack_leaves();
                self.check_all()
            }
            Op::Repoint(i) => self.repoint(i),
            Op::RemoveIf(i) => self.remove_if(i),
        }
    }

    fn check_all(&self) -> Result<(), String> {
        check(self.index.len() == self.model.len(), || {
            format!("len {} != {}", self.index.len(), self.model.len())
        })?;
        let stats = self.index.stats();
        check(stats.num_keys == self.model.len(), || {
            format!("stats {stats:?}")
        })?;
        self.scan(None, false, usize::MAX)?;
        self.scan(None, true, usize::MAX)?;
        self.get_many()
    }

    /// Batched lookups of every key ever inserted (removed ones included)
    /// find what the model holds once confirmed, as single lookups do.
    fn get_many(&self) -> Result<(), String> {
        let probes: Vec<&[u8]> = self.keys.0.iter().map(Vec::as_slice).collect();
        let guard = crossbeam_epoch::pin();
        let mut got = Vec::new();
        self.index
            .get_candidates(&probes, &self.keys, &guard, &mut got);
        for (key, candidate) in probes.iter().zip(got) {
            let confirmed = candidate.filter(|&p| self.keys.key(p) == *key);
            let want = self.model.get(*key).copied();
            check(confirmed == want, || {
                format!("batched candidate {key:?}: {candidate:?} vs {want:?}")
            })?;
        }
        Ok(())
    }
}

fn check(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(msg()) }
}

fn run(shape: Shape, ops: Vec<Op>) -> TestResult {
    let mut h = Harness {
        shape,
        keys: Keys::default(),
        model: BTreeMap::new(),
        index: AlexIndex::new(),
    };
    for (n, op) in ops.iter().enumerate() {
        if let Err(e) = h.apply(op) {
            return TestResult::error(format!("op {n} {op:?}: {e}"));
        }
    }
    match h.check_all() {
        Ok(()) => TestResult::passed(),
        Err(e) => TestResult::error(format!("final check: {e}")),
    }
}

fn quickcheck_shape(prop: fn(Vec<Op>) -> TestResult) {
    QuickCheck::new()
        .tests(TESTS_PER_SHAPE)
        .max_tests(TESTS_PER_SHAPE * 2)
        .rng(Gen::new(60))
        .quickcheck(prop);
}

macro_rules! shape_tests {
    ($($name:ident => $shape:ident,)*) => {$(
        #[test]
        fn $name() {
            fn prop(ops: Vec<Op>) -> TestResult {
                run(Shape::$shape, ops)
            }
            quickcheck_shape(prop);
        }
    )*};
}

shape_tests! {
    sequential_keys_match_btreemap => Sequential,
    uniform_keys_match_btreemap => Uniform,
    lognormal_keys_match_btreemap => Lognormal,
    prefixed_string_keys_match_btreemap => Prefixed,
    outlier_keys_match_btreemap => Outliers,
    tied_model_keys_match_btreemap => Ties,
}

/// The model must be able to fail: a wrong payload is caught.
#[test]
fn harness_detects_a_wrong_answer() {
    let mut h = Harness {
        shape: Shape::Uniform,
        keys: Keys::default(),
        model: BTreeMap::new(),
        index: AlexIndex::new(),
    };
    h.upsert(1).unwrap();
    h.model.insert(key_of(Shape::Uniform, 1), payload_of(99));
    assert!(h.get(1, false).is_err());
    assert!(h.check_all().is_err());
}

/// Batches with duplicates return what sequential upserts would, in input
/// order, and the last duplicate wins.
#[test]
fn batch_duplicates_follow_input_order() {
    let mut h = Harness {
        shape: Shape::Uniform,
        keys: Keys::default(),
        model: BTreeMap::new(),
        index: AlexIndex::new(),
    };
    h.upsert(5).unwrap();
    h.batch(&[7, 5, 7, 9, 5, 7]).unwrap();
    let guard = crossbeam_epoch::pin();
    let k7 = key_of(Shape::Uniform, 7);
    assert_eq!(h.index.get(&k7, &h.keys, &guard), Some(payload_of(6)));
    assert_eq!(h.index.len(), 3);
    assert!(h.index.upsert_batch(&[], &h.keys).is_empty());
    // Large clustered batches force expansions and splits mid-batch.
    for round in 0..4u32 {
        let keys: Vec<u32> = (0..2500).map(|j| (j * 7 + round) % UNIVERSE).collect();
        h.batch(&keys).unwrap();
    }
    h.check_all().unwrap();
}
