// The operation runner, written once against the rocksdb crate's public
// API and compiled once per (crate, thread mode) by `include!` in
// `differential.rs`, inside a module that defines `api` (the crate) and
// `Db` (the database type). Nothing here may name `rocksdb` or `alexdb`.
//
// `run` executes a sequence of `Op`s and returns a `Transcript`: every
// observable result, rendered as text. Two runs of the same sequence must
// give equal transcripts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::ops::{
    Bounds, CF_NAMES, Cf, Mode, Move, Op, SnapRead, Transcript, Write, show, show_bounds,
    show_mode, show_move,
};

/// The merge operator every column family of a run has: concatenation.
fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &api::MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.unwrap_or_default().to_vec();
    for op in operands {
        out.extend_from_slice(op);
    }
    Some(out)
}

/// Options every open and `create_cf` of a run uses: with the merge
/// operator.
fn family_options() -> api::Options {
    let mut opts = api::Options::default();
    opts.set_merge_operator_associative("concat", concat);
    opts
}

/// `(name, options)` for `open_cf_with_opts`: `"default"` and every named
/// family, each with the merge operator. (Opening a RocksDB database whose log holds merges with a
/// family that has no operator fails its log replay and loses those writes
/// for later opens, so no open of a run leaves it out.)
fn with_merge_operator<'n>(names: &[&'n str]) -> Vec<(&'n str, api::Options)> {
    std::iter::once("default")
        .chain(names.iter().copied())
        .map(|n| (n, family_options()))
        .collect()
}

/// The items of a collected iterator.
type Item = Result<(Box<[u8]>, Box<[u8]>), api::Error>;

/// Runs `ops` on a new database in `dir`. `with_cfs`: the first open is
/// `open_cf(["cf1", "cf2"])` (creating them); else `open`.
pub fn run(ops: &[Op], dir: &Path, with_cfs: bool) -> Transcript {
    let path = dir.join("db");
    let mut st = State {
        path: path.clone(),
        families: Vec::new(),
        exact: Default::default(),
        last_seq: None,
        range_delete_last: false,
        reopens_after_drop: 0,
        rebase_seq: false,
        out: Transcript::default(),
    };
    let mut opts = family_options();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let first = if with_cfs {
        // Every family gets the merge operator (a merge into a family
        // without one breaks a RocksDB database for later writes).
        Db::open_cf_with_opts(&opts, &path, with_merge_operator(&["cf1", "cf2"]))
    } else {
        Db::open(&opts, &path)
    };
    let mut db = st.opened("open", first);
    if db.is_some() && with_cfs {
        st.families = vec![1, 2];
    }
    st.exact = std::array::from_fn(|_| Some(BTreeSet::new()));
    for (index, op) in ops.iter().enumerate() {
        st.out.op = index;
        match op {
            Op::Reopen(by_descriptors) => {
                drop(db.take());
                db = st.reopen(*by_descriptors);
            }
            Op::OpenMissingCfs(choice) => {
                drop(db.take());
                st.open_missing(*choice);
                db = st.reopen(false);
            }
            Op::OpenUnknownCf => {
                drop(db.take());
                st.open_unknown();
                db = st.reopen(false);
            }
            Op::ReversedRange(cf, from, to, in_batch) => {
                if let Some(db) = &db {
                    st.reversed_range(db, *cf, from, to, *in_batch);
                }
                // RocksDB refuses every write from here on: stop comparing.
                return st.out;
            }
            _ => match db.as_mut() {
                Some(db) => st.op(db, op),
                None => st.out.push("closed"),
            },
        }
    }
    if let Some(db) = &db {
        st.out.op = ops.len();
        st.sequence(db);
        for i in 0..CF_NAMES.len() {
            st.iter(db, Cf::Named(i), &Bounds::None, &Mode::Start, None);
        }
    }
    st.out
}

/// What the runner knows besides the database.
struct State {
    path: PathBuf,
    /// The families other than `"default"` that exist, as indexes into
    /// `CF_NAMES`, in creation order (from the runner's successful calls).
    families: Vec<usize>,
    /// Per family: the keys put so far while RocksDB's
    /// `estimate-num-keys` is still exact, `None` once it is not.
    ///
    /// RocksDB computes it as memtable entries minus twice the memtable
    /// deletes plus an estimate from SST table properties, so it equals
    /// the live key count only while the family has received nothing but
    /// puts of distinct keys since it was created (no overwrite, no delete,
    /// no range delete) and has not been flushed, compacted or reopened.
    /// Only then is the value compared; otherwise only that the property
    /// is there. AlexDB's value is always exact (docs/compatibility.md,
    /// "Supported").
    exact: [Option<BTreeSet<Vec<u8>>>; 4],
    /// The sequence number last observed.
    last_seq: Option<u64>,
    /// The last write (single or batch) held a range delete or a merge.
    range_delete_last: bool,
    /// How many of the next reopens follow a column family drop closely
    /// enough that RocksDB may come back with a lower sequence number (it
    /// was seen to do so on the second reopen after a drop too).
    reopens_after_drop: u8,
    /// Re-base the sequence comparison at the next observation (compare
    /// its advance from there on, not across the reopen), because:
    /// - a family was dropped before the reopen: RocksDB discards the log
    ///   holding the dropped family's writes and can come back with a lower
    ///   `latest_sequence_number`, where AlexDB keeps it (docs/compatibility.md,
    ///   "Differs, and why"); or
    /// - the last write before the reopen held a range delete: RocksDB
    ///   does not count an empty one (`from == to`) when it replays its
    ///   log, where AlexDB keeps every number a batch consumed; or a merge,
    ///   after which RocksDB was seen to come back one lower.
    rebase_seq: bool,
    out: Transcript,
}

impl State {
    fn opened(&mut self, what: &str, result: Result<Db, api::Error>) -> Option<Db> {
        match result {
            Ok(db) => {
                self.out.push(format!("{what}: ok"));
                Some(db)
            }
            Err(e) => {
                let e = self.err(&e);
                self.out.push(format!("{what}: {e}"));
                None
            }
        }
    }

    /// An error as compared: its kind, its message up to the first `:`,
    /// and whether it names the LOCK file. The full message, with the path
    /// replaced, goes to the messages (compared but reported separately).
    fn err(&mut self, e: &api::Error) -> String {
        let msg = e.to_string();
        let prefix = msg.split(':').next().unwrap_or("").to_owned();
        let lock = if msg.contains("/LOCK:") {
            " (LOCK)"
        } else {
            ""
        };
        let normalized = msg.replace(&self.path.display().to_string(), "<db>");
        self.out.message(normalized);
        format!("Err({:?}, {prefix:?}{lock})", e.kind())
    }

    fn res<T>(&mut self, r: Result<T, api::Error>, ok: impl FnOnce(T) -> String) -> String {
        match r {
            Ok(v) => ok(v),
            Err(e) => self.err(&e),
        }
    }

    fn opts(&self) -> api::Options {
        let mut opts = family_options();
        opts.create_if_missing(true);
        opts
    }

    fn family_names(&self) -> Vec<&'static str> {
        self.families.iter().map(|&i| CF_NAMES[i]).collect()
    }

    /// Opens the database with the families that exist: `open` when there
    /// are none, else `open_cf_with_opts` (or `open_cf_descriptors`), both
    /// naming `"default"` too.
    fn reopen(&mut self, by_descriptors: bool) -> Option<Db> {
        self.exact = Default::default();
        self.rebase_seq |= self.range_delete_last || self.reopens_after_drop > 0;
        self.reopens_after_drop = self.reopens_after_drop.saturating_sub(1);
        let names = self.family_names();
        let opts = self.opts();
        let result = if by_descriptors {
            let cfs = std::iter::once("default")
                .chain(names.iter().copied())
                .map(|n| api::ColumnFamilyDescriptor::new(n, family_options()));
            Db::open_cf_descriptors(&opts, &self.path, cfs)
        } else if names.is_empty() {
            Db::open(&opts, &self.path)
        } else {
            // Every family, "default" included, keeps its merge operator:
            // RocksDB resolves stored operands when read and fails without
            // one, where AlexDB resolved them when written.
            Db::open_cf_with_opts(&opts, &self.path, with_merge_operator(&names))
        };
        self.opened("reopen", result)
    }

    /// With the database closed: open it leaving out one family (by `open`
    /// when `choice` is even, else `open_cf` with the others).
    fn open_missing(&mut self, choice: usize) {
        if self.families.is_empty() {
            self.out.push("open missing: no families");
            return;
        }
        let mut names = self.family_names();
        names.remove(choice % names.len());
        let opts = self.opts();
        let result = if choice.is_multiple_of(2) {
            Db::open(&opts, &self.path)
        } else {
            Db::open_cf_with_opts(&opts, &self.path, with_merge_operator(&names))
        };
        drop(self.opened("open missing", result));
    }

    /// With the database closed: `open_cf` naming a family that does not
    /// exist, without `create_missing_column_families`.
    fn open_unknown(&mut self) {
        let mut names = self.family_names();
        names.push("nosuchcf");
        let result = Db::open_cf_with_opts(&self.opts(), &self.path, with_merge_operator(&names));
        drop(self.opened("open unknown", result));
    }

    fn op(&mut self, db: &mut Db, op: &Op) {
        match op {
            Op::Write(w) => {
                let r = self.write(db, w);
                self.out.push(format!("write: {r}"));
                self.sequence(db);
            }
            Op::Batch(writes, sync) => {
                let r = self.batch(db, writes, *sync);
                self.out.push(format!("batch: {r}"));
                self.sequence(db);
            }
            Op::Get(cf, key) => {
                let r = match cf {
                    Cf::Plain => db.get(key),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.get_cf(&h, key),
                        None => return self.out.push("get: no handle"),
                    },
                };
                let r = self.res(r, |v| opt(v.as_deref()));
                self.out.push(format!("get {}: {r}", show(key)));
            }
            Op::GetPinned(cf, key) => {
                let r = match cf {
                    Cf::Plain => db.get_pinned(key).map(|v| v.map(|s| s.to_vec())),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.get_pinned_cf(&h, key).map(|v| v.map(|s| s.to_vec())),
                        None => return self.out.push("get_pinned: no handle"),
                    },
                };
                let r = self.res(r, |v| opt(v.as_deref()));
                self.out.push(format!("get_pinned {}: {r}", show(key)));
            }
            Op::MultiGet(keys) => {
                let rs = db.multi_get(keys);
                let rs: Vec<String> = rs
                    .into_iter()
                    .map(|r| self.res(r, |v| opt(v.as_deref())))
                    .collect();
                self.out.push(format!("multi_get: {rs:?}"));
            }
            Op::MultiGetCf(keys) => {
                let mut handles = Vec::new();
                let mut missing = Vec::new();
                for (i, name) in CF_NAMES.iter().enumerate() {
                    match db.cf_handle(name) {
                        Some(h) => handles.push((i, h)),
                        None => missing.push(i),
                    }
                }
                let pairs: Vec<_> = keys
                    .iter()
                    .filter_map(|(i, k)| {
                        let h = handles.iter().find(|(j, _)| j == i)?;
                        Some((&h.1, k))
                    })
                    .collect();
                let rs = db.multi_get_cf(pairs);
                let rs: Vec<String> = rs
                    .into_iter()
                    .map(|r| self.res(r, |v| opt(v.as_deref())))
                    .collect();
                self.out
                    .push(format!("multi_get_cf (no handle: {missing:?}): {rs:?}"));
                if let Some(h) = db.cf_handle("cf1") {
                    let keys: Vec<&Vec<u8>> = keys.iter().map(|(_, k)| k).collect();
                    let rs: Vec<String> = db
                        .batched_multi_get_cf(&h, keys, false)
                        .into_iter()
                        .map(|r| self.res(r, |v| opt(v.as_deref())))
                        .collect();
                    self.out.push(format!("batched_multi_get_cf cf1: {rs:?}"));
                }
            }
            Op::Iter(cf, bounds, mode, take) => self.iter(db, *cf, bounds, mode, *take),
            Op::Raw(cf, bounds, moves) => {
                let raw = match cf {
                    Cf::Plain => db.raw_iterator_opt(read_options(bounds)),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.raw_iterator_cf_opt(&h, read_options(bounds)),
                        None => return self.out.push("raw: no handle"),
                    },
                };
                let walk = self.walk(raw, moves);
                self.out
                    .push(format!("raw {}: {walk}", show_bounds(bounds)));
            }
            Op::Snapshot(writes, reads) => self.snapshot(db, writes, reads),
            Op::IterAcrossWrites(cf, mode, first, writes) => {
                let mut iter = match cf {
                    Cf::Plain => with_mode(mode, |m| db.iterator(m)),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => with_mode(mode, |m| db.iterator_cf(&h, m)),
                        None => return self.out.push("iter across writes: no handle"),
                    },
                };
                let head = self.items(iter.by_ref().take(*first));
                let results: Vec<String> = writes.iter().map(|w| self.write(db, w)).collect();
                let tail = self.items(iter.by_ref());
                let after = self.items(iter.by_ref());
                self.out.push(format!(
                    "iter across writes {results:?}: {head} then {tail} then {after}"
                ));
                self.sequence(db);
            }
            Op::Sequence => self.sequence(db),
            Op::EstimateNumKeys(cf) => {
                const NAME: &str = "rocksdb.estimate-num-keys";
                let index = match cf {
                    Cf::Plain => 0,
                    Cf::Named(i) => *i,
                };
                let r = match cf {
                    Cf::Plain => db.property_int_value(NAME),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.property_int_value_cf(&h, NAME),
                        None => return self.out.push("estimate: no handle"),
                    },
                };
                let exact = self.exact[index].is_some();
                let r = self.res(r, |v| match v {
                    Some(n) if exact => format!("Some({n})"),
                    Some(_) => "Some(estimate, not compared)".to_owned(),
                    None => "None".to_owned(),
                });
                self.out.push(format!("estimate-num-keys: {r}"));
            }
            Op::CreateCf(i) => {
                let r = db.create_cf(CF_NAMES[*i], &family_options());
                if r.is_ok() {
                    self.families.retain(|f| f != i);
                    self.families.push(*i);
                    self.exact[*i] = Some(BTreeSet::new());
                }
                let r = self.res(r, |()| "ok".to_owned());
                self.out.push(format!("create_cf {}: {r}", CF_NAMES[*i]));
            }
            Op::DropCf(i) => {
                let r = db.drop_cf(CF_NAMES[*i]);
                if r.is_ok() {
                    self.families.retain(|f| f != i);
                    self.exact[*i] = None;
                    self.reopens_after_drop = 2;
                }
                let r = self.res(r, |()| "ok".to_owned());
                let has_handle = db.cf_handle(CF_NAMES[*i]).is_some();
                self.out.push(format!(
                    "drop_cf {}: {r}, handle after: {has_handle}",
                    CF_NAMES[*i]
                ));
            }
            Op::ListCf => {
                let r = Db::list_cf(&api::Options::default(), &self.path);
                let r = self.res(r, |names| format!("{names:?}"));
                self.out.push(format!("list_cf: {r}"));
            }
            Op::Flush(cf) => {
                let r = match cf {
                    Cf::Plain => db.flush(),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.flush_cf(&h),
                        None => return self.out.push("flush: no handle"),
                    },
                };
                self.exact = Default::default();
                let r = self.res(r, |()| "ok".to_owned());
                self.out.push(format!("flush: {r}"));
            }
            Op::CompactAll(cf) => {
                match cf {
                    Cf::Plain => db.compact_range(None::<&[u8]>, None::<&[u8]>),
                    Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                        Some(h) => db.compact_range_cf(&h, None::<&[u8]>, None::<&[u8]>),
                        None => return self.out.push("compact: no handle"),
                    },
                }
                self.exact = Default::default();
                self.out.push("compact: done");
            }
            Op::SecondOpen => {
                let names = self.family_names();
                let second = Db::open_cf(&self.opts(), &self.path, &names);
                drop(self.opened("second open", second));
                let r = Db::destroy(&api::Options::default(), &self.path);
                let r = self.res(r, |()| "ok".to_owned());
                self.out.push(format!("destroy while open: {r}"));
            }
            Op::Reopen(_) | Op::OpenMissingCfs(_) | Op::OpenUnknownCf | Op::ReversedRange(..) => {
                unreachable!("handled by run")
            }
        }
    }

    /// A range delete whose end comes before its start: only the result
    /// is recorded (see `Op::ReversedRange`).
    fn reversed_range(&mut self, db: &Db, cf: Cf, from: &[u8], to: &[u8], in_batch: bool) {
        let handle = match cf {
            Cf::Plain => None,
            Cf::Named(i) => match db.cf_handle(CF_NAMES[i]) {
                Some(h) => Some(h),
                None => return self.out.push("reversed range: no handle"),
            },
        };
        let r = match (&handle, in_batch) {
            (Some(h), false) => db.delete_range_cf(h, from, to),
            (Some(h), true) => {
                let mut batch = api::WriteBatch::default();
                batch.put_cf(h, b"before", b"x");
                batch.delete_range_cf(h, from, to);
                db.write(batch)
            }
            (None, _) => {
                let mut batch = api::WriteBatch::default();
                if in_batch {
                    batch.put(b"before", b"x");
                }
                batch.delete_range(from, to);
                db.write(batch)
            }
        };
        let r = self.res(r, |()| "ok".to_owned());
        self.out.push(format!("reversed range: {r}"));
    }

    /// Records the sequence number: its advance since the last
    /// observation (the absolute value the first time).
    fn sequence(&mut self, db: &Db) {
        let now = db.latest_sequence_number();
        let text = match self.last_seq {
            Some(_) if self.rebase_seq => "seq re-based (see rebase_seq)".to_owned(),
            Some(before) => format!("seq {:+}", now as i128 - before as i128),
            None => format!("seq {now}"),
        };
        self.rebase_seq = false;
        self.last_seq = Some(now);
        self.out.push(text);
    }

    /// Updates what is known about `estimate-num-keys` for one write about
    /// to be made.
    fn track(&mut self, w: &Write) {
        let (cf, key) = match w {
            Write::Put(cf, key, _) | Write::Merge(cf, key, _) => (*cf, Some(key)),
            Write::Delete(cf, _) | Write::DeleteRange(cf, _, _) => (*cf, None),
        };
        let index = match cf {
            Cf::Plain => 0,
            Cf::Named(i) => i,
        };
        let slot = &mut self.exact[index];
        let still_exact = match (slot.as_mut(), key) {
            (Some(keys), Some(key)) => keys.insert(key.clone()),
            _ => false,
        };
        if !still_exact {
            *slot = None;
        }
    }

    /// One write outside a batch; returns its result.
    fn write(&mut self, db: &Db, w: &Write) -> String {
        if let Write::Put(Cf::Named(i), ..)
        | Write::Merge(Cf::Named(i), ..)
        | Write::Delete(Cf::Named(i), _)
        | Write::DeleteRange(Cf::Named(i), ..) = w
            && db.cf_handle(CF_NAMES[*i]).is_none()
        {
            return "no handle".to_owned();
        }
        self.track(w);
        self.range_delete_last = matches!(w, Write::DeleteRange(..) | Write::Merge(..));
        let r = match w {
            Write::Put(Cf::Plain, k, v) => db.put(k, v),
            Write::Merge(Cf::Plain, k, v) => db.merge(k, v),
            Write::Delete(Cf::Plain, k) => db.delete(k),
            Write::DeleteRange(Cf::Plain, from, to) => {
                let mut batch = api::WriteBatch::default();
                batch.delete_range(from, to);
                db.write(batch)
            }
            Write::Put(Cf::Named(i), k, v) => match db.cf_handle(CF_NAMES[*i]) {
                Some(h) => db.put_cf(&h, k, v),
                None => return "no handle".to_owned(),
            },
            Write::Merge(Cf::Named(i), k, v) => match db.cf_handle(CF_NAMES[*i]) {
                Some(h) => db.merge_cf(&h, k, v),
                None => return "no handle".to_owned(),
            },
            Write::Delete(Cf::Named(i), k) => match db.cf_handle(CF_NAMES[*i]) {
                Some(h) => db.delete_cf(&h, k),
                None => return "no handle".to_owned(),
            },
            Write::DeleteRange(Cf::Named(i), from, to) => match db.cf_handle(CF_NAMES[*i]) {
                Some(h) => db.delete_range_cf(&h, from, to),
                None => return "no handle".to_owned(),
            },
        };
        self.res(r, |()| "ok".to_owned())
    }

    /// A batch of `writes` (those to a family without a handle are left
    /// out); returns its length, emptiness and result.
    fn batch(&mut self, db: &Db, writes: &[Write], sync: bool) -> String {
        let mut batch = api::WriteBatch::default();
        let mut skipped = 0;
        let mut ranges = false;
        for w in writes {
            let added = match w {
                Write::Put(Cf::Plain, k, v) => {
                    batch.put(k, v);
                    true
                }
                Write::Merge(Cf::Plain, k, v) => {
                    batch.merge(k, v);
                    true
                }
                Write::Delete(Cf::Plain, k) => {
                    batch.delete(k);
                    true
                }
                Write::DeleteRange(Cf::Plain, from, to) => {
                    batch.delete_range(from, to);
                    true
                }
                Write::Put(Cf::Named(i), k, v) => db
                    .cf_handle(CF_NAMES[*i])
                    .map(|h| batch.put_cf(&h, k, v))
                    .is_some(),
                Write::Merge(Cf::Named(i), k, v) => db
                    .cf_handle(CF_NAMES[*i])
                    .map(|h| batch.merge_cf(&h, k, v))
                    .is_some(),
                Write::Delete(Cf::Named(i), k) => db
                    .cf_handle(CF_NAMES[*i])
                    .map(|h| batch.delete_cf(&h, k))
                    .is_some(),
                Write::DeleteRange(Cf::Named(i), from, to) => db
                    .cf_handle(CF_NAMES[*i])
                    .map(|h| batch.delete_range_cf(&h, from, to))
                    .is_some(),
            };
            if added {
                self.track(w);
                ranges |= matches!(w, Write::DeleteRange(..) | Write::Merge(..));
            }
            skipped += usize::from(!added);
        }
        // The batch's bytes (RocksDB's WriteBatch format) must be the same,
        // and a batch rebuilt from them must write the same.
        if !batch.is_empty() {
            self.range_delete_last = ranges;
        }
        let shape = format!(
            "len {} empty {} skipped {skipped} data {}",
            batch.len(),
            batch.is_empty(),
            show(batch.data())
        );
        if sync {
            batch = api::WriteBatch::from_data(batch.data());
        }
        let r = if sync {
            let mut wo = api::WriteOptions::default();
            wo.set_sync(true);
            db.write_opt(batch, &wo)
        } else {
            db.write(batch)
        };
        let r = self.res(r, |()| "ok".to_owned());
        format!("{shape}: {r}")
    }

    /// An iterator over `cf` with `bounds` in `mode`: its items (all, or
    /// the first `take`), then two more polls, which must be `None` once
    /// it has ended.
    fn iter(&mut self, db: &Db, cf: Cf, bounds: &Bounds, mode: &Mode, take: Option<usize>) {
        let ro = read_options(bounds);
        let mut iter = match cf {
            Cf::Plain => with_mode(mode, |m| db.iterator_opt(m, ro)),
            Cf::Named(i) => match db.cf_handle(CF_NAMES[i]) {
                Some(h) => with_mode(mode, |m| db.iterator_cf_opt(&h, ro, m)),
                None => return self.out.push("iter: no handle"),
            },
        };
        let items = match take {
            Some(n) => self.items(iter.by_ref().take(n)),
            None => {
                let all = self.items(iter.by_ref());
                let again = self.items(iter.by_ref().take(2));
                format!("{all} then {again}")
            }
        };
        self.out.push(format!(
            "iter {cf:?} {} {} {take:?}: {items}",
            show_bounds(bounds),
            show_mode(mode)
        ));
    }

    fn items(&mut self, iter: impl Iterator<Item = Item>) -> String {
        let items: Vec<String> = iter
            .map(|item| self.res(item, |(k, v)| format!("{}={}", show(&k), show(&v))))
            .collect();
        format!("{items:?}")
    }

    /// Walks a raw iterator through `moves`, recording after each one
    /// `valid`, `key`, `value` and whether `item` agrees; then `status`.
    fn walk<D: api::DBAccess>(
        &mut self,
        mut raw: api::DBRawIteratorWithThreadMode<'_, D>,
        moves: &[Move],
    ) -> String {
        let mut steps = Vec::new();
        for m in moves {
            match m {
                Move::First => raw.seek_to_first(),
                Move::Last => raw.seek_to_last(),
                Move::Seek(k) => raw.seek(k),
                Move::SeekForPrev(k) => raw.seek_for_prev(k),
                Move::Next => raw.next(),
                Move::Prev => raw.prev(),
            }
            let item_agrees = raw.item() == raw.key().zip(raw.value());
            steps.push(format!(
                "{} -> {} {} {} {item_agrees}",
                show_move(m),
                raw.valid(),
                opt(raw.key()),
                opt(raw.value())
            ));
        }
        let status = raw.status();
        let status = self.res(status, |()| "ok".to_owned());
        format!("{steps:?} status {status}")
    }

    /// Takes a snapshot, writes, then reads through the snapshot (and
    /// through read options holding it) and once more through the
    /// database.
    fn snapshot(&mut self, db: &Db, writes: &[Write], reads: &[SnapRead]) {
        let snap = db.snapshot();
        let seq_at = db.latest_sequence_number();
        let snap_seq = snap.sequence_number();
        self.out
            .push(format!("snapshot seq matches: {}", snap_seq == seq_at));
        let results: Vec<String> = writes.iter().map(|w| self.write(db, w)).collect();
        self.out.push(format!("writes after snapshot: {results:?}"));
        self.sequence(db);
        for read in reads {
            let text = match read {
                SnapRead::Get(cf, key) => {
                    let (at_snap, now) = match cf {
                        Cf::Plain => (snap.get(key), db.get(key)),
                        Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                            Some(h) => (snap.get_cf(&h, key), db.get_cf(&h, key)),
                            None => {
                                self.out.push("snapshot get: no handle");
                                continue;
                            }
                        },
                    };
                    let at_snap = self.res(at_snap, |v| opt(v.as_deref()));
                    let now = self.res(now, |v| opt(v.as_deref()));
                    format!("get {}: {at_snap}, now {now}", show(key))
                }
                SnapRead::MultiGet(keys) => {
                    let rs: Vec<String> = snap
                        .multi_get(keys)
                        .into_iter()
                        .map(|r| self.res(r, |v| opt(v.as_deref())))
                        .collect();
                    format!("multi_get {rs:?}")
                }
                SnapRead::Iter(cf, mode) => {
                    let iter = match cf {
                        Cf::Plain => with_mode(mode, |m| snap.iterator(m)),
                        Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                            Some(h) => with_mode(mode, |m| snap.iterator_cf(&h, m)),
                            None => {
                                self.out.push("snapshot iter: no handle");
                                continue;
                            }
                        },
                    };
                    format!("iter {}: {}", show_mode(mode), self.items(iter))
                }
                SnapRead::Raw(cf, moves) => {
                    let raw = match cf {
                        Cf::Plain => snap.raw_iterator(),
                        Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                            Some(h) => snap.raw_iterator_cf(&h),
                            None => {
                                self.out.push("snapshot raw: no handle");
                                continue;
                            }
                        },
                    };
                    format!("raw: {}", self.walk(raw, moves))
                }
                SnapRead::GetOpt(cf, key) => {
                    let mut ro = api::ReadOptions::default();
                    ro.set_snapshot(&snap);
                    let r = match cf {
                        Cf::Plain => db.get_opt(key, &ro),
                        Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                            Some(h) => db.get_cf_opt(&h, key, &ro),
                            None => {
                                self.out.push("snapshot get_opt: no handle");
                                continue;
                            }
                        },
                    };
                    let r = self.res(r, |v| opt(v.as_deref()));
                    format!("get_opt {}: {r}", show(key))
                }
                SnapRead::IterOpt(cf, bounds, mode) => {
                    let mut ro = read_options(bounds);
                    ro.set_snapshot(&snap);
                    let iter = match cf {
                        Cf::Plain => with_mode(mode, |m| db.iterator_opt(m, ro)),
                        Cf::Named(i) => match db.cf_handle(CF_NAMES[*i]) {
                            Some(h) => with_mode(mode, |m| db.iterator_cf_opt(&h, ro, m)),
                            None => {
                                self.out.push("snapshot iter_opt: no handle");
                                continue;
                            }
                        },
                    };
                    let items = self.items(iter);
                    format!(
                        "iter_opt {} {}: {items}",
                        show_bounds(bounds),
                        show_mode(mode)
                    )
                }
            };
            self.out.push(format!("snapshot {text}"));
        }
    }
}

/// `Option<&[u8]>` as text.
fn opt(v: Option<&[u8]>) -> String {
    match v {
        Some(v) => format!("Some({})", show(v)),
        None => "None".to_owned(),
    }
}

/// Read options with `bounds` set.
fn read_options(bounds: &Bounds) -> api::ReadOptions {
    let mut ro = api::ReadOptions::default();
    match bounds {
        Bounds::None => {}
        Bounds::Set(lower, upper) => {
            if let Some(lower) = lower {
                ro.set_iterate_lower_bound(lower.clone());
            }
            if let Some(upper) = upper {
                ro.set_iterate_upper_bound(upper.clone());
            }
        }
        Bounds::Range(from, to) => ro.set_iterate_range(from.clone()..to.clone()),
        Bounds::From(from) => ro.set_iterate_range(from.clone()..),
        Bounds::To(to) => ro.set_iterate_range(..to.clone()),
        Bounds::Full => {
            ro.set_iterate_lower_bound(b"b".to_vec());
            ro.set_iterate_upper_bound(b"c".to_vec());
            ro.set_iterate_range(..);
        }
        Bounds::Prefix(prefix) => ro.set_iterate_range(api::PrefixRange(prefix.clone())),
    }
    ro
}

/// Calls `f` with the `IteratorMode` for `mode`.
fn with_mode<R>(mode: &Mode, f: impl FnOnce(api::IteratorMode<'_>) -> R) -> R {
    match mode {
        Mode::Start => f(api::IteratorMode::Start),
        Mode::End => f(api::IteratorMode::End),
        Mode::Forward(k) => f(api::IteratorMode::From(k, api::Direction::Forward)),
        Mode::Reverse(k) => f(api::IteratorMode::From(k, api::Direction::Reverse)),
    }
}
