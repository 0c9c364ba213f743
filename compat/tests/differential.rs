//! Differential test against the real `rocksdb` crate (0.25).
//!
//! The same seeded random operation sequences run against `rocksdb` and
//! against `alexdb`, and every observable result must be equal: puts,
//! deletes and range deletes, write batches across column families, gets,
//! pinned gets, multi-gets, every `IteratorMode` with and without bounds,
//! raw iterator walks, snapshots with writes after them, iterators across
//! writes, `latest_sequence_number`, `estimate-num-keys` (while RocksDB's
//! value is exact), creating, dropping and listing column families,
//! close-and-reopen, and the open errors (second open, families left out,
//! an unknown family) by `ErrorKind` and message prefix.
//!
//! What is not compared, and why:
//! - `estimate-num-keys` is an estimate in RocksDB (memtable entries minus
//!   twice the deletes, plus SST table properties); its value is compared
//!   only while it is exact (see `State::exact` in the runner), elsewhere
//!   only that it is there.
//! - Full error messages are compared with every run of digits taken as
//!   one (times and thread ids differ); a shrunk case fails on `ErrorKind`
//!   and the prefix before the first `:` (and whether they name `/LOCK`),
//!   and every sequence's full texts must agree once all have run.
//! - A range delete whose end comes before its start is generated only as
//!   the last operation, and only its error is compared: RocksDB refuses
//!   every write after it (docs/compatibility.md, "Differs, and why").
//! - `latest_sequence_number` is compared by its advance, re-based after a
//!   reopen that follows a `drop_cf` or a batch holding a range delete
//!   (RocksDB can come back lower: it discards a dropped family's log and
//!   does not count an empty range delete on replay; docs/compatibility.md,
//!   "Differs, and why"); see `rebase_seq` in the runner.
//!
//! The runner (`differential/runner.rs`) is written once against the
//! rocksdb API and compiled four times: against each crate, in each thread
//! mode (`SingleThreaded`, `MultiThreaded`). A failing sequence is shrunk
//! to a minimal one and printed with the first differing observation.
//!
//! `cargo test --release -p alexdb --test differential` runs
//! [`DEFAULT_SEQUENCES`] sequences of [`DEFAULT_OPS`] operations per thread
//! mode. More: `ALEXDB_DIFF_SEQUENCES=5000`, `ALEXDB_DIFF_OPS=300`, and
//! `ALEXDB_DIFF_SEED=<n>` to start elsewhere (or to replay one seed with
//! `ALEXDB_DIFF_SEQUENCES=1`).

// Compares with, or converts from, the real RocksDB: a dev-dependency
// everywhere but Windows and musl (see compat/Cargo.toml).
#![cfg(not(any(windows, target_env = "musl")))]

#[path = "differential/ops.rs"]
mod ops;

use std::time::Instant;

use ops::{Generator, Op, Transcript};

/// `rocksdb`, single-threaded column family handles (the default `DB`).
mod real_st {
    use rocksdb as api;
    type Db = api::DBWithThreadMode<api::SingleThreaded>;
    include!("differential/runner.rs");
}

/// `alexdb`, single-threaded column family handles (the default `DB`).
mod ours_st {
    use alexdb as api;
    type Db = api::DBWithThreadMode<api::SingleThreaded>;
    include!("differential/runner.rs");
}

/// `rocksdb`, multi-threaded column family handles.
mod real_mt {
    use rocksdb as api;
    type Db = api::DBWithThreadMode<api::MultiThreaded>;
    include!("differential/runner.rs");
}

/// `alexdb`, multi-threaded column family handles.
mod ours_mt {
    use alexdb as api;
    type Db = api::DBWithThreadMode<api::MultiThreaded>;
    include!("differential/runner.rs");
}

/// Sequences per thread mode in a default run.
const DEFAULT_SEQUENCES: u64 = 150;
/// Operations per sequence in a default run.
const DEFAULT_OPS: usize = 100;

/// The thread mode a run uses.
#[derive(Clone, Copy, Debug)]
enum ThreadMode {
    Single,
    Multi,
}

/// One generated case: the operations and how the database starts.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    mode: ThreadMode,
    with_cfs: bool,
    ops: Vec<Op>,
}

/// How the two crates' transcripts differ.
struct Difference {
    real: Transcript,
    ours: Transcript,
}

impl Case {
    fn new(seed: u64, mode: ThreadMode, len: usize) -> Self {
        let mut generator = Generator::new(seed);
        Self {
            seed,
            mode,
            with_cfs: !seed.is_multiple_of(3),
            ops: generator.ops(len),
        }
    }

    /// Runs the case on both crates.
    fn run(&self) -> (Transcript, Transcript) {
        let real_dir = tempfile::tempdir().expect("temp dir");
        let ours_dir = tempfile::tempdir().expect("temp dir");
        match self.mode {
            ThreadMode::Single => (
                real_st::run(&self.ops, real_dir.path(), self.with_cfs),
                ours_st::run(&self.ops, ours_dir.path(), self.with_cfs),
            ),
            ThreadMode::Multi => (
                real_mt::run(&self.ops, real_dir.path(), self.with_cfs),
                ours_mt::run(&self.ops, ours_dir.path(), self.with_cfs),
            ),
        }
    }

    /// The difference in compared observations, if any.
    fn difference(&self) -> Option<Difference> {
        let (real, ours) = self.run();
        (real.obs != ours.obs).then_some(Difference { real, ours })
    }

    fn with_ops(&self, ops: Vec<Op>) -> Self {
        Self {
            ops,
            ..self.clone()
        }
    }
}

/// Shrinks a failing case: drops runs of operations (halving the run
/// length), then simplifies the remaining compound operations, as long as
/// the case still fails.
fn shrink(mut case: Case) -> Case {
    let mut chunk = case.ops.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < case.ops.len() {
            let mut ops = case.ops.clone();
            ops.drain(start..(start + chunk).min(ops.len()));
            let candidate = case.with_ops(ops);
            if candidate.difference().is_some() {
                case = candidate;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    let mut index = 0;
    while index < case.ops.len() {
        let simpler = simplifications(&case.ops[index])
            .into_iter()
            .find_map(|op| {
                let mut ops = case.ops.clone();
                ops[index] = op;
                let candidate = case.with_ops(ops);
                candidate.difference().is_some().then_some(candidate)
            });
        match simpler {
            Some(candidate) => case = candidate,
            None => index += 1,
        }
    }
    case
}

/// `v` without each of its elements in turn.
fn without_one<T: Clone>(v: &[T]) -> impl Iterator<Item = Vec<T>> + '_ {
    (0..v.len()).map(move |i| {
        let mut w = v.to_vec();
        w.remove(i);
        w
    })
}

/// Smaller versions of a compound operation (one element fewer).
fn simplifications(op: &Op) -> Vec<Op> {
    match op {
        Op::Batch(writes, sync) => without_one(writes).map(|w| Op::Batch(w, *sync)).collect(),
        Op::Raw(cf, bounds, moves) => without_one(moves)
            .map(|m| Op::Raw(*cf, bounds.clone(), m))
            .collect(),
        Op::Snapshot(writes, reads) => without_one(writes)
            .map(|w| Op::Snapshot(w, reads.clone()))
            .chain(without_one(reads).map(|r| Op::Snapshot(writes.clone(), r)))
            .collect(),
        Op::IterAcrossWrites(cf, mode, first, writes) => without_one(writes)
            .map(|w| Op::IterAcrossWrites(*cf, mode.clone(), *first, w))
            .collect(),
        Op::MultiGet(keys) => without_one(keys).map(Op::MultiGet).collect(),
        Op::MultiGetCf(keys) => without_one(keys).map(Op::MultiGetCf).collect(),
        _ => Vec::new(),
    }
}

/// A report of a (shrunk) failing case and its first difference.
fn report(case: &Case, diff: &Difference) -> String {
    let mut text = format!(
        "rocksdb and alexdb differ (seed {}, {:?} thread mode, first open {}).\n\
         Operations:\n",
        case.seed,
        case.mode,
        if case.with_cfs {
            "open_cf_with_opts([\"default\", \"cf1\", \"cf2\"])"
        } else {
            "open"
        }
    );
    for (i, op) in case.ops.iter().enumerate() {
        text.push_str(&format!("  #{i}: {op:?}\n"));
    }
    let at = diff
        .real
        .obs
        .iter()
        .zip(&diff.ours.obs)
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| diff.real.obs.len().min(diff.ours.obs.len()));
    let from = at.saturating_sub(3);
    text.push_str("Observations (rocksdb | alexdb):\n");
    for i in from..(at + 1) {
        let real = diff.real.obs.get(i);
        let ours = diff.ours.obs.get(i);
        let mark = if i == at { ">>" } else { "  " };
        text.push_str(&format!(
            "{mark} rocksdb {real:?}\n{mark} alexdb  {ours:?}\n"
        ));
    }
    text.push_str(&format!(
        "rocksdb messages: {:?}\nalexdb messages:  {:?}\n",
        diff.real.messages, diff.ours.messages
    ));
    text
}

/// `text` with each run of digits replaced by `N`, so that messages
/// differing only in times or thread ids are reported once.
fn without_digits(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('N') {
            out.push('N');
        }
    }
    out
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs the configured number of sequences in `mode`; panics with the
/// shrunk first failure, then on full error messages that differ (where
/// kinds and prefixes agree).
fn run_sequences(mode: ThreadMode) {
    let sequences = env_or("ALEXDB_DIFF_SEQUENCES", DEFAULT_SEQUENCES);
    let len = env_or("ALEXDB_DIFF_OPS", DEFAULT_OPS);
    let first_seed = env_or("ALEXDB_DIFF_SEED", 0_u64);
    let started = Instant::now();
    let mut message_diffs = std::collections::BTreeSet::new();
    for seed in first_seed..first_seed + sequences {
        let case = Case::new(seed, mode, len);
        let (real, ours) = case.run();
        if real.obs != ours.obs {
            let shrunk = shrink(case);
            let diff = shrunk.difference().expect("a shrunk case still fails");
            panic!("{}", report(&shrunk, &diff));
        }
        for (a, b) in real.messages.iter().zip(&ours.messages) {
            if without_digits(&a.1) != without_digits(&b.1) {
                message_diffs.insert((without_digits(&a.1), without_digits(&b.1)));
            }
        }
    }
    for (real, ours) in &message_diffs {
        eprintln!("message differs:\n  rocksdb: {real}\n  alexdb:  {ours}");
    }
    assert!(message_diffs.is_empty(), "error messages differ (above)");
    eprintln!(
        "{mode:?}: {sequences} sequences x {len} operations agree ({:.1?})",
        started.elapsed()
    );
}

#[test]
fn random_sequences_agree_in_single_threaded_mode() {
    run_sequences(ThreadMode::Single);
}

#[test]
fn random_sequences_agree_in_multi_threaded_mode() {
    run_sequences(ThreadMode::Multi);
}
