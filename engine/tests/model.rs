//! Model test: random operation sequences against the engine and against a
//! `BTreeMap` per keyspace must agree on every observable result, across
//! batches, range deletes, merges, scans in both directions, snapshots,
//! compaction and close-and-reopen, for every key shape.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::{Compression, Db, KeyRange, KeyspaceId, Snapshot, WriteBatch, WriteOptions};
use quickcheck::{Arbitrary, Gen, QuickCheck};

type Model = Vec<BTreeMap<Vec<u8>, Vec<u8>>>;

#[derive(Clone, Copy, Debug)]
enum Shape {
    Sequential,
    Random,
    Prefixed,
    ShortAndEmpty,
    Outliers,
}

impl Shape {
    fn key(self, id: u16) -> Vec<u8> {
        match self {
            Shape::Sequential => u64::from(id).to_be_bytes().to_vec(),
            Shape::Random => (u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .to_be_bytes()
                .to_vec(),
            Shape::Prefixed => format!("user:profile:{id:06}").into_bytes(),
            Shape::ShortAndEmpty => {
                let b = id.to_be_bytes();
                b[..(id % 3) as usize].to_vec()
            }
            Shape::Outliers => {
                if id.is_multiple_of(7) {
                    vec![0xFF; 9 + (id % 5) as usize]
                } else {
                    vec![b'k', (id >> 8) as u8, id as u8]
                }
            }
        }
    }
}

/// One write of a batch.
#[derive(Clone, Debug)]
enum Item {
    Put(Vec<u8>),
    Delete,
    Merge(Vec<u8>),
}

#[derive(Clone, Debug)]
enum Op {
    Put(usize, u16, Vec<u8>),
    Delete(usize, u16),
    /// Appends the operand to the key's value (the test's merge function).
    Merge(usize, u16, Vec<u8>),
    Batch(Vec<(usize, u16, Item)>),
    /// Puts, then a range delete, then more puts, in one batch.
    BatchWithRange(usize, Vec<u16>, u16, u16, Vec<u16>),
    DeleteRange(usize, u16, u16),
    Get(usize, u16),
    Scan {
        ks: usize,
        from: Option<u16>,
        reverse: bool,
        limit: u8,
    },
    TakeSnapshot,
    CheckSnapshot(usize),
    Reopen,
    /// Closes, removes the index checkpoint and reopens: the open reads
    /// every record, so a version that compaction left on disk behind a
    /// delete it dropped would come back.
    ReopenFromScratch,
    Compact,
    /// Takes a snapshot, overwrites the keys (deleting every other one),
    /// compacts, and checks every snapshot's view: the versions kept for
    /// snapshots are rewritten in key order beside the new heads.
    SnapshotThenCompact(usize, Vec<u16>),
}

#[derive(Clone, Debug)]
struct Case {
    shape: Shape,
    ops: Vec<Op>,
}

const KEYSPACES: usize = 3;

fn small_key(g: &mut Gen) -> u16 {
    u16::arbitrary(g) % 48
}

/// Random bytes, or (half the time) a short pattern repeated: a value
/// that compresses, so that keyspaces with compression on hold compressed
/// values after compaction.
fn value(g: &mut Gen) -> Vec<u8> {
    if bool::arbitrary(g) {
        let len = usize::arbitrary(g) % 40;
        return (0..len).map(|_| u8::arbitrary(g)).collect();
    }
    let pattern: Vec<u8> = (0..1 + usize::arbitrary(g) % 4)
        .map(|_| u8::arbitrary(g))
        .collect();
    let len = 16 + usize::arbitrary(g) % 112;
    pattern.iter().copied().cycle().take(len).collect()
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let ks = usize::arbitrary(g) % KEYSPACES;
        match u8::arbitrary(g) % 100 {
            0..=28 => Op::Put(ks, small_key(g), value(g)),
            29..=34 => Op::Merge(ks, small_key(g), value(g)),
            35..=44 => Op::Delete(ks, small_key(g)),
            45..=54 => {
                let n = usize::arbitrary(g) % 6 + 1;
                Op::Batch(
                    (0..n)
                        .map(|_| {
                            let item = match u8::arbitrary(g) % 3 {
                                0 => Item::Put(value(g)),
                                1 => Item::Delete,
                                _ => Item::Merge(value(g)),
                            };
                            (usize::arbitrary(g) % KEYSPACES, small_key(g), item)
                        })
                        .collect(),
                )
            }
            55..=56 => Op::DeleteRange(ks, small_key(g), small_key(g)),
            57 => Op::BatchWithRange(
                ks,
                (0..usize::arbitrary(g) % 4).map(|_| small_key(g)).collect(),
                small_key(g),
                small_key(g),
                (0..usize::arbitrary(g) % 3).map(|_| small_key(g)).collect(),
            ),
            58..=72 => Op::Get(ks, small_key(g)),
            73..=84 => Op::Scan {
                ks,
                from: bool::arbitrary(g).then(|| small_key(g)),
                reverse: bool::arbitrary(g),
                limit: u8::arbitrary(g) % 20,
            },
            85..=88 => Op::TakeSnapshot,
            89..=92 => Op::CheckSnapshot(usize::arbitrary(g)),
            93..=94 => Op::Reopen,
            95 => Op::ReopenFromScratch,
            96..=97 => Op::Compact,
            _ => Op::SnapshotThenCompact(
                ks,
                (0..usize::arbitrary(g) % 8 + 1)
                    .map(|_| small_key(g))
                    .collect(),
            ),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Op>> {
        match self {
            Op::Batch(items) if items.len() > 1 => Box::new(
                (0..items.len())
                    .map({
                        let items = items.clone();
                        move |i| {
                            let mut v = items.clone();
                            v.remove(i);
                            Op::Batch(v)
                        }
                    })
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
            _ => Box::new(std::iter::empty()),
        }
    }
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let shapes = [
            Shape::Sequential,
            Shape::Random,
            Shape::Prefixed,
            Shape::ShortAndEmpty,
            Shape::Outliers,
        ];
        Case {
            shape: *g.choose(&shapes).unwrap(),
            ops: Vec::<Op>::arbitrary(g),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Case>> {
        let shape = self.shape;
        Box::new(self.ops.shrink().map(move |ops| Case { shape, ops }))
    }
}

struct Harness {
    db: Option<Db>,
    /// After `db`: fields drop in order, and the directory must outlive the
    /// database (its close writes the index checkpoint and the MANIFEST
    /// there; removed first, it was left behind with those two files).
    dir: tempfile::TempDir,
    ids: Vec<KeyspaceId>,
    model: Model,
    snapshots: Vec<(Snapshot, Model)>,
    /// Expected latest sequence number: one per batch operation.
    seq: u64,
    /// A range delete may not be applied to the key count yet (compaction
    /// applies it once no snapshot predates it).
    unapplied_ranges: bool,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let db = common::open(dir.path());
        let mut ids = vec![db.keyspace("default").unwrap()];
        ids.push(db.create_keyspace("one").unwrap());
        ids.push(db.create_keyspace("two").unwrap());
        set_append_merge(&db, &ids);
        Harness {
            dir,
            db: Some(db),
            ids,
            model: vec![BTreeMap::new(); KEYSPACES],
            snapshots: Vec::new(),
            seq: 0,
            unapplied_ranges: false,
        }
    }

    fn db(&self) -> &Db {
        self.db.as_ref().unwrap()
    }

    fn run(&mut self, shape: Shape, op: &Op) -> Result<(), String> {
        self.apply(shape, op)?;
        self.seq += match op {
            Op::Put(..) | Op::Delete(..) | Op::Merge(..) | Op::DeleteRange(..) => 1,
            Op::SnapshotThenCompact(_, keys) => keys.len() as u64,
            Op::Batch(items) => items.len() as u64,
            Op::BatchWithRange(_, before, _, _, after) => (before.len() + 1 + after.len()) as u64,
            _ => 0,
        };
        let got = self.db().latest_sequence_number();
        if matches!(op, Op::Reopen | Op::ReopenFromScratch) {
            // Sequence numbers of trailing operations that logged no record
            // (empty range deletes) are not persisted.
            if got > self.seq {
                return Err(format!(
                    "sequence {got} after reopen, more than {}",
                    self.seq
                ));
            }
            self.seq = got;
        } else if got != self.seq {
            return Err(format!("latest sequence number {got}, want {}", self.seq));
        }
        Ok(())
    }

    fn apply(&mut self, shape: Shape, op: &Op) -> Result<(), String> {
        let w = WriteOptions::default();
        match op {
            Op::DeleteRange(..) | Op::BatchWithRange(..) => self.unapplied_ranges = true,
            Op::Reopen | Op::ReopenFromScratch => self.unapplied_ranges = false,
            Op::Compact if self.snapshots.is_empty() => self.unapplied_ranges = false,
            _ => {}
        }
        match op {
            Op::Put(ks, k, v) => {
                self.db()
                    .put(self.ids[*ks], &shape.key(*k), v, &w)
                    .map_err(|e| e.to_string())?;
                self.model[*ks].insert(shape.key(*k), v.clone());
            }
            Op::Delete(ks, k) => {
                self.db()
                    .delete(self.ids[*ks], &shape.key(*k), &w)
                    .map_err(|e| e.to_string())?;
                self.model[*ks].remove(&shape.key(*k));
            }
            Op::Merge(ks, k, operand) => {
                self.db()
                    .merge(self.ids[*ks], &shape.key(*k), operand, &w)
                    .map_err(|e| e.to_string())?;
                append(&mut self.model[*ks], shape.key(*k), operand);
            }
            Op::Batch(items) => {
                let mut b = WriteBatch::new();
                for (ks, k, item) in items {
                    match item {
                        Item::Put(v) => {
                            b.put(self.ids[*ks], &shape.key(*k), v);
                            self.model[*ks].insert(shape.key(*k), v.clone());
                        }
                        Item::Delete => {
                            b.delete(self.ids[*ks], &shape.key(*k));
                            self.model[*ks].remove(&shape.key(*k));
                        }
                        Item::Merge(operand) => {
                            b.merge(self.ids[*ks], &shape.key(*k), operand);
                            append(&mut self.model[*ks], shape.key(*k), operand);
                        }
                    }
                }
                self.db().write(&b, &w).map_err(|e| e.to_string())?;
            }
            Op::DeleteRange(ks, a, b) => {
                let (a, b) = (shape.key(*a), shape.key(*b));
                let mut batch = WriteBatch::new();
                batch.delete_range(self.ids[*ks], &a, &b);
                self.db().write(&batch, &w).map_err(|e| e.to_string())?;
                if a < b {
                    let doomed: Vec<_> = self.model[*ks]
                        .range(a..b)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in doomed {
                        self.model[*ks].remove(&k);
                    }
                }
            }
            Op::BatchWithRange(ks, before, a, b, after) => {
                let id = self.ids[*ks];
                let mut batch = WriteBatch::new();
                let m = &mut self.model[*ks];
                for k in before {
                    batch.put(id, &shape.key(*k), b"before");
                    m.insert(shape.key(*k), b"before".to_vec());
                }
                let (a, b) = (shape.key(*a), shape.key(*b));
                batch.delete_range(id, &a, &b);
                if a < b {
                    let doomed: Vec<_> = m.range(a..b).map(|(k, _)| k.clone()).collect();
                    for k in doomed {
                        m.remove(&k);
                    }
                }
                for k in after {
                    batch.put(id, &shape.key(*k), b"after");
                    m.insert(shape.key(*k), b"after".to_vec());
                }
                self.db().write(&batch, &w).map_err(|e| e.to_string())?;
            }
            Op::Get(ks, k) => {
                let got = self
                    .db()
                    .get_copied(self.ids[*ks], &shape.key(*k))
                    .map_err(|e| e.to_string())?;
                let want = self.model[*ks].get(&shape.key(*k)).cloned();
                if got != want {
                    return Err(format!(
                        "get {:?}: got {got:?}, want {want:?}",
                        shape.key(*k)
                    ));
                }
            }
            Op::Scan {
                ks,
                from,
                reverse,
                limit,
            } => self.check_scan(shape, *ks, *from, *reverse, *limit)?,
            Op::TakeSnapshot => {
                let snap = self.db().snapshot();
                self.snapshots.push((snap, self.model.clone()));
            }
            Op::CheckSnapshot(i) => {
                if !self.snapshots.is_empty() {
                    let (snap, model) = &self.snapshots[i % self.snapshots.len()];
                    check_snapshot(snap, &self.ids, model)?;
                }
            }
            Op::Reopen | Op::ReopenFromScratch => {
                self.snapshots.clear();
                self.db = None;
                if matches!(op, Op::ReopenFromScratch) {
                    let index = self.dir.path().join(INDEX_FILE);
                    if let Err(e) = std::fs::remove_file(index) {
                        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
                    }
                }
                self.db = Some(common::open(self.dir.path()));
                set_append_merge(self.db(), &self.ids);
                for (i, name) in ["default", "one", "two"].iter().enumerate() {
                    if self.db().keyspace(name) != Some(self.ids[i]) {
                        return Err(format!("keyspace {name} lost its id on reopen"));
                    }
                }
                self.check_everything()?;
            }
            Op::Compact => {
                self.db().compact().map_err(|e| e.to_string())?;
                self.check_everything()?;
            }
            Op::SnapshotThenCompact(ks, keys) => self.snapshot_then_compact(shape, *ks, keys)?,
        }
        Ok(())
    }

    fn snapshot_then_compact(
        &mut self,
        shape: Shape,
        ks: usize,
        keys: &[u16],
    ) -> Result<(), String> {
        self.apply(shape, &Op::TakeSnapshot)?;
        let w = WriteOptions::default();
        for (i, k) in keys.iter().enumerate() {
            let key = shape.key(*k);
            let id = self.ids[ks];
            let written = match i % 2 {
                0 => self.db().put(id, &key, b"rewritten", &w).map(|()| {
                    self.model[ks].insert(key.clone(), b"rewritten".to_vec());
                }),
                _ => self.db().delete(id, &key, &w).map(|()| {
                    self.model[ks].remove(&key);
                }),
            };
            written.map_err(|e| e.to_string())?;
        }
        self.apply(shape, &Op::Compact)
    }

    fn check_scan(
        &self,
        shape: Shape,
        ks: usize,
        from: Option<u16>,
        reverse: bool,
        limit: u8,
    ) -> Result<(), String> {
        let mut c = self
            .db()
            .cursor(self.ids[ks], KeyRange::default())
            .map_err(|e| e.to_string())?;
        let from_key = from.map(|k| shape.key(k));
        let m = &self.model[ks];
        let want: Vec<(Vec<u8>, Vec<u8>)> = match (&from_key, reverse) {
            (None, false) => m
                .iter()
                .take(limit as usize)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            (None, true) => m
                .iter()
                .rev()
                .take(limit as usize)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            (Some(f), false) => m
                .range::<Vec<u8>, _>((Bound::Included(f), Bound::Unbounded))
                .take(limit as usize)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            (Some(f), true) => m
                .range::<Vec<u8>, _>((Bound::Unbounded, Bound::Included(f)))
                .rev()
                .take(limit as usize)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        match (&from_key, reverse) {
            (None, false) => c.seek_to_first(),
            (None, true) => c.seek_to_last(),
            (Some(f), false) => c.seek(f),
            (Some(f), true) => c.seek_for_prev(f),
        }
        let got: Vec<(Vec<u8>, Vec<u8>)> = c
            .take(limit as usize)
            .map(|r| r.map(|(k, v)| (k.into_vec(), v.into_vec())))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "scan ks {ks} from {from_key:?} reverse {reverse}: got {got:?}, want {want:?}"
            ));
        }
        Ok(())
    }

    fn check_everything(&self) -> Result<(), String> {
        for (i, id) in self.ids.iter().enumerate() {
            let got = common::scan_all(self.db(), *id);
            let want: Vec<_> = self.model[i]
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if got != want {
                return Err(format!(
                    "keyspace {i} full scan: got {got:?}, want {want:?}"
                ));
            }
            let live = self.db().live_keys(*id).unwrap();
            let counted = match self.unapplied_ranges {
                true => live >= want.len() as u64,
                false => live == want.len() as u64,
            };
            if !counted {
                return Err(format!(
                    "keyspace {i}: live_keys {live}, want {}",
                    want.len()
                ));
            }
        }
        for (i, id) in self.ids.iter().enumerate() {
            check_get_many(&self.model[i], |keys, each| {
                self.db().get_many_with(*id, keys, each)
            })?;
            // The same through the handles `get_many` returns.
            check_get_many(&self.model[i], |keys, each| {
                for (at, value) in self.db().get_many(*id, keys)?.into_iter().enumerate() {
                    match value {
                        Ok(value) => each(at, Ok(value.as_deref())),
                        Err(e) => each(at, Err(e)),
                    }
                }
                Ok(())
            })?;
        }
        for (snap, model) in &self.snapshots {
            check_snapshot(snap, &self.ids, model)?;
        }
        self.db().verify().map_err(|e| e.to_string())
    }
}

/// The test's merge function: appends the operand to the value.
/// Gives every keyspace the appending merge function, and the keyspaces
/// after the first compressed values.
fn set_append_merge(db: &Db, ids: &[KeyspaceId]) {
    for (i, id) in ids.iter().enumerate() {
        let compression = match i {
            0 => Compression::None,
            _ => Compression::Lz4,
        };
        db.set_compression(*id, compression).unwrap();
        let f = |_: &[u8], existing: Option<&[u8]>, operand: &[u8]| {
            let mut v = existing.unwrap_or_default().to_vec();
            v.extend_from_slice(operand);
            Some(v)
        };
        db.set_merge_function(*id, Some(Arc::new(f))).unwrap();
        // Stacks of the default depth, of two operands (resolved every
        // third merge), and none (every merge resolved).
        let limit = [alexdb_engine::merge::DEFAULT_MERGE_STACK_LIMIT, 2, 0][i % 3];
        db.set_merge_stack_limit(*id, limit).unwrap();
    }
}

/// What the test's merge function does, on the model.
fn append(model: &mut BTreeMap<Vec<u8>, Vec<u8>>, key: Vec<u8>, operand: &[u8]) {
    model.entry(key).or_default().extend_from_slice(operand);
}

/// The reader of a batched get: reads the keys, handing each result over.
type ReadMany<'a> = &'a mut dyn FnMut(usize, alexdb_engine::Result<Option<&[u8]>>);

/// Checks a batched get (`get_many`) of every key of `model` and, beside
/// each, a key one byte longer (absent unless the model has it too): each
/// result must be the model's, handed over once, in order.
fn check_get_many<F>(model: &BTreeMap<Vec<u8>, Vec<u8>>, get_many: F) -> Result<(), String>
where
    F: Fn(&[&[u8]], ReadMany<'_>) -> alexdb_engine::Result<()>,
{
    let longer: Vec<Vec<u8>> = model.keys().map(|k| [k, &b"\0"[..]].concat()).collect();
    let probes: Vec<&[u8]> = model
        .keys()
        .zip(&longer)
        .flat_map(|(k, l)| [k.as_slice(), l.as_slice()])
        .collect();
    let mut got: Vec<(usize, Option<Vec<u8>>)> = Vec::new();
    let mut failure = None;
    get_many(&probes, &mut |at, value| match value {
        Ok(value) => got.push((at, value.map(<[u8]>::to_vec))),
        Err(e) => failure = Some(e.to_string()),
    })
    .map_err(|e| e.to_string())?;
    if let Some(e) = failure {
        return Err(format!("get_many: {e}"));
    }
    let want: Vec<(usize, Option<Vec<u8>>)> = probes
        .iter()
        .map(|k| model.get(*k).cloned())
        .enumerate()
        .collect();
    if got != want {
        return Err(format!("get_many: got {got:?}, want {want:?}"));
    }
    Ok(())
}

fn check_snapshot(snap: &Snapshot, ids: &[KeyspaceId], model: &Model) -> Result<(), String> {
    for (i, id) in ids.iter().enumerate() {
        check_get_many(&model[i], |keys, each| snap.get_many_with(*id, keys, each))?;
        let mut c = snap
            .cursor(*id, KeyRange::default())
            .map_err(|e| e.to_string())?;
        c.seek_to_first();
        let got: Vec<(Vec<u8>, Vec<u8>)> = c
            .map(|r| r.map(|(k, v)| (k.into_vec(), v.into_vec())))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let want: Vec<_> = model[i]
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if got != want {
            return Err(format!(
                "snapshot at {} keyspace {i}: got {got:?}, want {want:?}",
                snap.seq()
            ));
        }
        let mut c = snap
            .cursor(*id, KeyRange::default())
            .map_err(|e| e.to_string())?;
        c.seek_to_last();
        let mut reversed = Vec::new();
        while let Some(entry) = c.entry() {
            reversed.push((entry.key().to_vec(), entry.value().to_vec()));
            c.backward();
        }
        c.status().map_err(|e| e.to_string())?;
        reversed.reverse();
        if reversed != want {
            return Err(format!(
                "snapshot at {} keyspace {i} in reverse: got {reversed:?}, want {want:?}",
                snap.seq()
            ));
        }
        for (k, v) in &want {
            let g = snap
                .get(*id, k)
                .map_err(|e| e.to_string())?
                .map(|v| v.to_vec());
            if g.as_ref() != Some(v) {
                return Err(format!("snapshot get {k:?}: got {g:?}, want {v:?}"));
            }
        }
    }
    Ok(())
}

fn run_case(case: Case) -> Result<(), String> {
    let mut h = Harness::new();
    for (i, op) in case.ops.iter().enumerate() {
        h.run(case.shape, op)
            .map_err(|e| format!("op {i} {op:?}: {e}"))?;
    }
    h.check_everything()
}

#[test]
fn engine_matches_btreemap() {
    fn prop(case: Case) -> quickcheck::TestResult {
        match run_case(case) {
            Ok(()) => quickcheck::TestResult::passed(),
            Err(e) => quickcheck::TestResult::error(e),
        }
    }
    let tests = std::env::var("ALEXDB_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    QuickCheck::new()
        .tests(tests)
        .max_tests(tests * 2)
        .rng(Gen::new(60))
        .quickcheck(prop as fn(Case) -> quickcheck::TestResult);
}

#[test]
fn long_sequences_with_many_rotations() {
    let mut g = Gen::new(400);
    for seed in 0..3 {
        let mut ops: Vec<Op> = (0..1500).map(|_| Op::arbitrary(&mut g)).collect();
        ops.push(Op::Reopen);
        ops.push(Op::ReopenFromScratch);
        let shape = [Shape::Random, Shape::Prefixed, Shape::Sequential][seed];
        run_case(Case { shape, ops }).unwrap();
    }
}
