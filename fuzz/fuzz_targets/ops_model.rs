//! Arbitrary sequences of rocksdb-API operations through `alexdb` (puts,
//! deletes, range deletes, merges with a concatenating operator, batches
//! across column families, gets and multi-gets, iterators both
//! ways with bounds, snapshots, create/drop column family, close and
//! reopen, compaction), checked against a `BTreeMap` model after every step.
//! Family "b" orders its keys by a custom comparator (descending bytes),
//! and family "a" keeps merge stacks short (`max_successive_merges`); long
//! operands make merges stack as operands rather than resolve at once.
#![no_main]

use std::cmp::Ordering;
use std::collections::BTreeMap;

use alexdb::{
    ColumnFamilyDescriptor, DB, Direction, IteratorMode, MergeOperands, Options, ReadOptions,
    WriteBatch,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

/// Column families the sequence may use besides "default".
const CF_NAMES: [&str; 2] = ["a", "b"];

/// The family ordered by [`descending`].
const DESCENDING_CF: &str = "b";

/// The family whose merge stacks fold after three operands.
const SHORT_STACKS_CF: &str = "a";

/// The custom comparator of [`DESCENDING_CF`].
fn descending(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

/// The key order of family `name`.
fn order_of(name: &str) -> fn(&[u8], &[u8]) -> Ordering {
    match name {
        DESCENDING_CF => descending,
        _ => <[u8]>::cmp,
    }
}

type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// Keys from a small alphabet, so operations collide.
#[derive(Arbitrary, Debug, Clone)]
struct Key(Vec<u8>);

impl Key {
    fn bytes(&self) -> Vec<u8> {
        self.0
            .iter()
            .take(4)
            .map(|b| b"abc\0\xff"[usize::from(*b) % 5])
            .collect()
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum Write {
    Put(u8, Key, u8),
    Delete(u8, Key),
    DeleteRange(u8, Key, Key),
    Merge(u8, Key, u8),
}

/// The merge operator of every family: appends the operands to the value.
fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.unwrap_or_default().to_vec();
    for op in operands {
        out.extend_from_slice(op);
    }
    Some(out)
}

/// Options for the database and the default family.
fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_merge_operator_associative("concat", concat);
    opts
}

/// Options for family `name`, at its creation and every open.
fn options_for(name: &str) -> Options {
    let mut opts = options();
    match name {
        DESCENDING_CF => opts.set_comparator("descending", Box::new(descending)),
        SHORT_STACKS_CF => opts.set_max_successive_merges(3),
        _ => {}
    }
    opts
}

/// A merge operand: short (up to 8 bytes) or, for `v` of 128 and up, 64 to
/// 127 bytes, so that a few merges outgrow what resolves at write and
/// stack as operands.
fn operand(v: u8) -> Vec<u8> {
    match v {
        0..128 => value(v, v),
        _ => vec![v; 64 + usize::from(v % 64)],
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    One(Write),
    Batch(Vec<Write>),
    Get(u8, Key),
    /// `multi_get_cf` of keys across families, and `batched_multi_get_cf`
    /// of the same keys in the first one's family.
    MultiGet(Vec<(u8, Key)>),
    Iterate {
        cf: u8,
        from: Option<Key>,
        reverse: bool,
        lower: Option<Key>,
        upper: Option<Key>,
    },
    /// Takes a snapshot, applies the writes, then reads through it.
    Snapshot(Vec<Write>),
    CreateCf(u8),
    DropCf(u8),
    Reopen,
    Compact,
}

struct Harness {
    db: Option<DB>,
    /// After `db`: fields drop in order, and the directory must outlive the
    /// database (its close writes files there; removed first, one directory
    /// per run was left in the temporary directory).
    dir: tempfile::TempDir,
    model: Model,
}


fn value(v: u8, len: u8) -> Vec<u8> {
    vec![v; usize::from(len % 9)]
}

impl Harness {
    fn new() -> Self {
        // tmpfs if there is one: the engine's fsyncs cost nothing there.
        let dir = match std::path::Path::new("/dev/shm").is_dir() {
            true => tempfile::tempdir_in("/dev/shm").unwrap(),
            false => tempfile::tempdir().unwrap(),
        };
        let mut model = Model::new();
        model.insert("default".into(), BTreeMap::new());
        let mut h = Harness {
            dir,
            db: None,
            model,
        };
        h.open();
        h
    }

    /// Opens every family with the merge operator: `open_cf` would give
    /// each named family default options (none), as in rocksdb.
    fn open(&mut self) {
        let families: Vec<ColumnFamilyDescriptor> = self
            .model
            .keys()
            .map(|name| ColumnFamilyDescriptor::new(name, options_for(name)))
            .collect();
        self.db = Some(DB::open_cf_descriptors(&options(), self.dir.path(), families).unwrap());
    }

    /// Whether `w` is a range delete whose end comes before its start in
    /// its family's order.
    fn reversed_range(&self, w: &Write) -> bool {
        match w {
            Write::DeleteRange(cf, from, to) => {
                let order = order_of(&self.cf_name(*cf).unwrap());
                order(&from.bytes(), &to.bytes()) == Ordering::Greater
            }
            _ => false,
        }
    }

    fn db(&self) -> &DB {
        self.db.as_ref().unwrap()
    }

    /// The name of the family `i` picks, if it exists.
    fn cf_name(&self, i: u8) -> Option<String> {
        let names: Vec<&String> = self.model.keys().collect();
        names
            .get(usize::from(i) % names.len())
            .map(|n| n.to_string())
    }

    fn add_to_batch(&self, batch: &mut WriteBatch, model: &mut Model, w: &Write) {
        let cf_of = |i: &u8| self.cf_name(*i).unwrap();
        match w {
            Write::Put(cf, k, v) => {
                let name = cf_of(cf);
                let val = value(*v, k.0.len() as u8 ^ v);
                batch.put_cf(self.db().cf_handle(&name).unwrap(), k.bytes(), &val);
                model.get_mut(&name).unwrap().insert(k.bytes(), val);
            }
            Write::Delete(cf, k) => {
                let name = cf_of(cf);
                batch.delete_cf(self.db().cf_handle(&name).unwrap(), k.bytes());
                model.get_mut(&name).unwrap().remove(&k.bytes());
            }
            Write::Merge(cf, k, v) => {
                let name = cf_of(cf);
                let operand = operand(*v);
                batch.merge_cf(self.db().cf_handle(&name).unwrap(), k.bytes(), &operand);
                let map = model.get_mut(&name).unwrap();
                map.entry(k.bytes())
                    .or_default()
                    .extend_from_slice(&operand);
            }
            Write::DeleteRange(cf, from, to) => {
                let name = cf_of(cf);
                let (from, to) = (from.bytes(), to.bytes());
                batch.delete_range_cf(self.db().cf_handle(&name).unwrap(), &from, &to);
                let order = order_of(&name);
                if order(&from, &to) == Ordering::Less {
                    model.get_mut(&name).unwrap().retain(|k, _| {
                        order(k, &from) == Ordering::Less || order(k, &to) != Ordering::Less
                    });
                }
            }
        }
    }

    /// Writes `writes` as one batch. As in RocksDB, a range delete whose
    /// end comes before its start fails the whole batch, changing nothing.
    fn write(&mut self, writes: &[Write]) {
        let mut batch = WriteBatch::default();
        let mut model = self.model.clone();
        for w in writes {
            self.add_to_batch(&mut batch, &mut model, w);
        }
        let result = self.db().write(batch);
        if writes.iter().any(|w| self.reversed_range(w)) {
            let err = result.expect_err("a reversed range delete must fail the batch");
            assert_eq!(err.kind(), alexdb::ErrorKind::InvalidArgument, "{err}");
        } else {
            result.unwrap();
            self.model = model;
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::One(w) => self.write(std::slice::from_ref(w)),
            Op::Batch(ws) => self.write(ws),
            Op::Get(cf, k) => {
                let name = self.cf_name(*cf).unwrap();
                let got = self
                    .db()
                    .get_cf(self.db().cf_handle(&name).unwrap(), k.bytes())
                    .unwrap();
                assert_eq!(got.as_ref(), self.model[&name].get(&k.bytes()));
            }
            Op::MultiGet(keys) => self.multi_get(keys),
            Op::Iterate {
                cf,
                from,
                reverse,
                lower,
                upper,
            } => self.iterate(*cf, from.as_ref(), *reverse, lower.as_ref(), upper.as_ref()),
            Op::Snapshot(writes) => self.snapshot(writes),
            Op::CreateCf(i) => {
                let name = CF_NAMES[usize::from(*i) % CF_NAMES.len()];
                if !self.model.contains_key(name) {
                    self.db
                        .as_mut()
                        .unwrap()
                        .create_cf(name, &options_for(name))
                        .unwrap();
                    self.model.insert(name.into(), BTreeMap::new());
                }
            }
            Op::DropCf(i) => {
                let name = CF_NAMES[usize::from(*i) % CF_NAMES.len()];
                if self.model.remove(name).is_some() {
                    self.db.as_mut().unwrap().drop_cf(name).unwrap();
                }
            }
            Op::Reopen => {
                self.db = None;
                self.open();
            }
            Op::Compact => self.db().compact_range(None::<&[u8]>, None::<&[u8]>),
        }
        self.check_all();
    }

    fn multi_get(&self, keys: &[(u8, Key)]) {
        let db = self.db();
        let named: Vec<(String, Vec<u8>)> = keys
            .iter()
            .map(|(cf, k)| (self.cf_name(*cf).unwrap(), k.bytes()))
            .collect();
        let handles: Vec<_> = named
            .iter()
            .map(|(name, k)| (db.cf_handle(name).unwrap(), k.as_slice()))
            .collect();
        let got: Vec<Option<Vec<u8>>> = db
            .multi_get_cf(handles.iter().map(|(cf, k)| (cf, *k)))
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let want: Vec<Option<Vec<u8>>> = named
            .iter()
            .map(|(name, k)| self.model[name].get(k).cloned())
            .collect();
        assert_eq!(got, want, "multi_get_cf {named:?}");
        let Some((name, _)) = named.first() else {
            return;
        };
        let cf = db.cf_handle(name).unwrap();
        let batched: Vec<Option<Vec<u8>>> = db
            .batched_multi_get_cf(cf, named.iter().map(|(_, k)| k), false)
            .into_iter()
            .map(|r| r.unwrap().map(|v| v.to_vec()))
            .collect();
        let want: Vec<Option<Vec<u8>>> = named
            .iter()
            .map(|(_, k)| self.model[name].get(k).cloned())
            .collect();
        assert_eq!(batched, want, "batched_multi_get_cf {name}");
    }

    fn iterate(
        &self,
        cf: u8,
        from: Option<&Key>,
        reverse: bool,
        lower: Option<&Key>,
        upper: Option<&Key>,
    ) {
        let name = self.cf_name(cf).unwrap();
        let mut opts = ReadOptions::default();
        let (lo, hi) = (lower.map(Key::bytes), upper.map(Key::bytes));
        if let Some(l) = &lo {
            opts.set_iterate_lower_bound(l.clone());
        }
        if let Some(u) = &hi {
            opts.set_iterate_upper_bound(u.clone());
        }
        let start = from.map(Key::bytes);
        let direction = if reverse {
            Direction::Reverse
        } else {
            Direction::Forward
        };
        let mode = match (&start, reverse) {
            (Some(s), _) => IteratorMode::From(s, direction),
            (None, false) => IteratorMode::Start,
            (None, true) => IteratorMode::End,
        };
        let cf = self.db().cf_handle(&name).unwrap();
        let got: Vec<(Vec<u8>, Vec<u8>)> = self
            .db()
            .iterator_cf_opt(cf, opts, mode)
            .map(|r| {
                let (k, v) = r.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect();
        let order = order_of(&name);
        let below = |a: &[u8], b: &[u8]| order(a, b) == Ordering::Less;
        let in_bounds = |k: &[u8]| {
            lo.as_ref().is_none_or(|l| !below(k, l)) && hi.as_ref().is_none_or(|u| below(k, u))
        };
        let mut want: Vec<(Vec<u8>, Vec<u8>)> = self.model[&name]
            .iter()
            .filter(|(k, _)| in_bounds(k))
            .filter(|(k, _)| match (&start, reverse) {
                (Some(s), false) => !below(k, s),
                (Some(s), true) => !below(s, k),
                (None, _) => true,
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        want.sort_by(|a, b| order(&a.0, &b.0));
        if reverse {
            want.reverse();
        }
        assert_eq!(
            got, want,
            "iterate {name} from {start:?} reverse {reverse} in {lo:?}..{hi:?}"
        );
    }

    fn snapshot(&mut self, writes: &[Write]) {
        let writes: Vec<Write> = writes
            .iter()
            .filter(|w| !self.reversed_range(w))
            .cloned()
            .collect();
        let before = self.model.clone();
        let db = self.db.as_ref().unwrap();
        let snapshot = db.snapshot();
        let mut batch = WriteBatch::default();
        let mut after = self.model.clone();
        for w in &writes {
            self.add_to_batch(&mut batch, &mut after, w);
        }
        db.write(batch).unwrap();
        for (name, map) in &before {
            let cf = db.cf_handle(name).unwrap();
            let keys: Vec<Vec<u8>> = after[name].keys().chain(map.keys()).cloned().collect();
            for k in keys {
                assert_eq!(snapshot.get_cf(cf, &k).unwrap().as_ref(), map.get(&k));
            }
            let seen: Vec<Vec<u8>> = snapshot
                .iterator_cf(cf, IteratorMode::Start)
                .map(|r| r.unwrap().0.to_vec())
                .collect();
            let mut want: Vec<Vec<u8>> = map.keys().cloned().collect();
            want.sort_by(|a, b| order_of(name)(a, b));
            assert_eq!(seen, want, "snapshot's iterator over {name}");
        }
        drop(snapshot);
        self.model = after;
    }

    /// Every family holds exactly the model's keys and values.
    fn check_all(&self) {
        for (name, map) in &self.model {
            let cf = self.db().cf_handle(name).unwrap();
            let got: BTreeMap<Vec<u8>, Vec<u8>> = self
                .db()
                .iterator_cf(cf, IteratorMode::Start)
                .map(|r| {
                    let (k, v) = r.unwrap();
                    (k.to_vec(), v.to_vec())
                })
                .collect();
            assert_eq!(&got, map, "family {name}");
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut h = Harness::new();
    for op in ops.iter().take(64) {
        h.apply(op);
    }
});
