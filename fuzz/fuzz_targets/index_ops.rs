//! The ALEX index alone against a `BTreeMap`, with adversarial key shapes:
//! long shared prefixes, trailing zero bytes, keys whose model key (first 8
//! bytes) ties, outliers far from the rest, and raw fuzzer bytes; with
//! rebuilds to the side at small thresholds, run between the writes.
#![no_main]

use std::collections::BTreeMap;
use std::ops::Bound;

use alexdb_engine::index::{AlexIndex, KeyResolver, LeafForm, ScanDirection};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

/// A key drawn from one of the shapes the index finds hardest.
#[derive(Arbitrary, Debug, Clone)]
enum KeyShape {
    /// 48 shared bytes, then a short suffix.
    LongPrefix(u16),
    /// A short stem followed by up to 15 zero bytes ("a", "a\0", ...).
    TrailingZeros(u8, u8),
    /// The same first 8 bytes (one model key), differing after them.
    ModelTie(u8, u16),
    /// Far below or far above everything else.
    Outlier(bool, u8),
    /// Whatever the fuzzer says (capped at 64 bytes).
    Raw(Vec<u8>),
}

impl KeyShape {
    fn bytes(&self) -> Vec<u8> {
        match self {
            KeyShape::LongPrefix(s) => {
                let mut k = vec![b'p'; 48];
                k.extend_from_slice(&s.to_be_bytes());
                k
            }
            KeyShape::TrailingZeros(stem, zeros) => {
                let mut k = vec![*stem];
                k.extend(std::iter::repeat_n(0, usize::from(zeros % 16)));
                k
            }
            KeyShape::ModelTie(group, tail) => {
                let mut k = vec![b't', 0, 0, 0, 0, 0, 0, *group % 4];
                k.extend_from_slice(&tail.to_be_bytes());
                k
            }
            KeyShape::Outlier(high, n) => match high {
                true => vec![0xFF; 1 + usize::from(n % 40)],
                false => vec![0; usize::from(n % 3)],
            },
            KeyShape::Raw(b) => b[..b.len().min(64)].to_vec(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Upsert(KeyShape),
    Remove(KeyShape),
    Get(KeyShape),
    /// Batched lookups (`get_candidates`), each candidate then confirmed.
    GetMany(Vec<KeyShape>),
    Batch(Vec<KeyShape>),
    Scan {
        from: Option<(KeyShape, bool)>,
        reverse: bool,
        limit: u8,
    },
    BulkLoad,
    /// A bulk load with packed leaves, as an open builds them.
    BulkLoadPacked,
    /// Packs every data node in place.
    Pack,
    /// Rebuilds of subtrees over this many keys go to the side (0: none).
    SideRebuildsAbove(u8),
    /// Runs the rebuild to the side a writer asked for, if any.
    RebuildToTheSide,
}

/// Payload `p` is the `p`-th key ever inserted.
#[derive(Default)]
struct Keys(Vec<Vec<u8>>);

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[payload as usize]
    }
}

struct Harness {
    keys: Keys,
    model: BTreeMap<Vec<u8>, u64>,
    index: AlexIndex,
    side_above: Option<usize>,
}

impl Harness {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Upsert(k) => {
                let key = k.bytes();
                let payload = self.push(key.clone());
                let got = self.index.upsert(&key, payload, &self.keys);
                assert_eq!(got, self.model.insert(key, payload));
            }
            Op::Remove(k) => {
                let key = k.bytes();
                assert_eq!(self.index.remove(&key, &self.keys), self.model.remove(&key));
            }
            Op::Get(k) => {
                let key = k.bytes();
                let guard = crossbeam_epoch::pin();
                let got = self.index.get(&key, &self.keys, &guard);
                assert_eq!(got, self.model.get(&key).copied());
            }
            Op::GetMany(shapes) => {
                let keys: Vec<Vec<u8>> = shapes.iter().map(KeyShape::bytes).collect();
                let probes: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                let guard = crossbeam_epoch::pin();
                let mut got = Vec::new();
                self.index
                    .get_candidates(&probes, &self.keys, &guard, &mut got);
                let confirmed: Vec<Option<u64>> = got
                    .iter()
                    .zip(&probes)
                    .map(|(c, k)| c.filter(|&p| self.keys.key(p) == *k))
                    .collect();
                let want: Vec<Option<u64>> =
                    probes.iter().map(|k| self.model.get(*k).copied()).collect();
                assert_eq!(confirmed, want);
            }
            Op::Batch(shapes) => {
                let first = self.keys.0.len() as u64;
                for s in shapes {
                    self.push(s.bytes());
                }
                let entries: Vec<(&[u8], u64)> = (first..self.keys.0.len() as u64)
                    .map(|p| (self.keys.key(p), p))
                    .collect();
                let got = self.index.upsert_batch(&entries, &self.keys);
                let want: Vec<Option<u64>> = entries
                    .iter()
                    .map(|&(k, p)| self.model.insert(k.to_vec(), p))
                    .collect();
                assert_eq!(got, want);
            }
            Op::Scan {
                from,
                reverse,
                limit,
            } => self.scan(from.as_ref(), *reverse, usize::from(*limit)),
            Op::BulkLoad | Op::BulkLoadPacked => {
                let payloads: Vec<u64> = self.model.values().copied().collect();
                let form = match op {
                    Op::BulkLoadPacked => LeafForm::Packed,
                    _ => LeafForm::Dense,
                };
                self.index = AlexIndex::bulk_load_as(&payloads, &self.keys, form);
                self.index.set_side_rebuild_above(self.side_above);
            }
            Op::Pack => {
                self.index.pack_leaves();
            }
            Op::SideRebuildsAbove(n) => {
                self.side_above = (*n > 0).then_some(usize::from(*n));
                self.index.set_side_rebuild_above(self.side_above);
            }
            Op::RebuildToTheSide => {
                self.index.rebuild_to_the_side(|| &self.keys);
            }
        }
        assert_eq!(self.index.len(), self.model.len());
    }

    fn push(&mut self, key: Vec<u8>) -> u64 {
        self.keys.0.push(key);
        self.keys.0.len() as u64 - 1
    }

    fn scan(&self, from: Option<&(KeyShape, bool)>, reverse: bool, limit: usize) {
        let key = from.map(|(k, inclusive)| (k.bytes(), *inclusive));
        let bound = match &key {
            None => Bound::Unbounded,
            Some((k, true)) => Bound::Included(&k[..]),
            Some((k, false)) => Bound::Excluded(&k[..]),
        };
        let (direction, range) = match reverse {
            false => (ScanDirection::Forward, (bound, Bound::Unbounded)),
            true => (ScanDirection::Reverse, (Bound::Unbounded, bound)),
        };
        let guard = crossbeam_epoch::pin();
        let mut got = Vec::new();
        self.index
            .collect(bound, direction, limit, &self.keys, &guard, &mut got);
        let matching = self.model.range::<[u8], _>(range).map(|(_, &p)| p);
        let want: Vec<u64> = match reverse {
            false => matching.take(limit).collect(),
            true => matching.rev().take(limit).collect(),
        };
        assert_eq!(
            got, want,
            "scan from {key:?}, reverse {reverse}, limit {limit}"
        );
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut h = Harness {
        keys: Keys::default(),
        model: BTreeMap::new(),
        index: AlexIndex::new(),
        side_above: None,
    };
    for op in &ops {
        h.apply(op);
    }
});
