//! A transient fault at every I/O call: the failpoint of
//! [`FaultyFileSystem`] fails exactly the `k`-th I/O call (an open, read,
//! write, `fdatasync`, directory sync, `set_len`, map, rename or removal)
//! of a workload and lets every other one through, for every `k`. The
//! workload writes batches across two keyspaces (some synced, some with
//! deletes and range deletes) through segment rotations, compactions, a
//! keyspace created and dropped, and a close and reopen. For each `k`:
//!
//! * the call that failed is reported to the operation that made it (no
//!   operation of the workload succeeds on top of a failed log write);
//! * once a write failed on its log write or sync, the handle refuses
//!   every later write (`Poisoned`): a failed `fdatasync` cannot be retried;
//! * the database then opens (the fault was transient, the files are what
//!   the page cache holds), passes `verify`, and holds exactly every
//!   acknowledged batch, plus, all or nothing, the batches whose own write
//!   failed (the error may come after the bytes were written), in order.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use alexdb_engine::io::faulty::FaultyFileSystem;
use alexdb_engine::{Db, Error, KeyRange, Options, WriteBatch, WriteOptions};

/// The two keyspaces the workload writes and checks.
const KEYSPACES: [&str; 2] = ["default", "side"];
/// Batches the workload writes.
const BATCHES: u32 = 48;

/// Keyspace name → key → value.
type State = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// One batch's changes to the model.
#[derive(Clone, Debug)]
enum Change {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    DeleteRange(usize, Vec<u8>, Vec<u8>),
}

/// What became of each batch of a run.
#[derive(Debug, Default)]
struct Outcomes {
    /// Batches acknowledged, in order, by index.
    acked: Vec<u32>,
    /// Batches whose write failed first on their handle (may be on disk).
    failed: Vec<u32>,
    /// A write failed on its I/O; every later write of the same handle
    /// must be refused.
    poisoned_after: Option<u32>,
    /// Batches written after the poisoning that were not refused.
    accepted_after_poison: Vec<u32>,
}

fn options(fs: &FaultyFileSystem) -> Options {
    Options {
        segment_bytes: 8 << 10,
        background_compaction: false,
        file_system: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn key(i: u32, j: u32) -> Vec<u8> {
    format!("k{:03}", (i * 7 + j * 13) % 90).into_bytes()
}

/// The changes of batch `i`: puts in both keyspaces, every fifth a delete,
/// every eleventh a range delete.
fn changes(i: u32) -> Vec<Change> {
    let value = format!("v{i:03}-").repeat(20).into_bytes();
    let mut out = vec![
        Change::Put(0, key(i, 0), value.clone()),
        Change::Put(0, key(i, 1), value.clone()),
        Change::Put(1, key(i, 2), value),
    ];
    if i % 5 == 4 {
        out.push(Change::Delete(0, key(i, 3)));
    }
    if i % 11 == 10 {
        out.push(Change::DeleteRange(1, key(i, 4), key(i, 5)));
    }
    out
}

fn apply(state: &mut State, change: &Change) {
    let ks = |i: usize| KEYSPACES[i].to_string();
    match change {
        Change::Put(k, key, value) => {
            state
                .entry(ks(*k))
                .or_default()
                .insert(key.clone(), value.clone());
        }
        Change::Delete(k, key) => {
            state.entry(ks(*k)).or_default().remove(key);
        }
        Change::DeleteRange(k, start, end) => {
            if start < end {
                state
                    .entry(ks(*k))
                    .or_default()
                    .retain(|key, _| key < start || key >= end);
            }
        }
    }
}

/// Writes batch `i` through `db`.
fn write_batch(db: &Db, i: u32) -> Result<(), Error> {
    let ids: Vec<_> = KEYSPACES
        .iter()
        .map(|name| {
            db.keyspace(name)
                .ok_or_else(|| Error::InvalidArgument((*name).into()))
        })
        .collect::<Result<_, _>>()?;
    let mut batch = WriteBatch::new();
    for change in changes(i) {
        match change {
            Change::Put(k, key, value) => batch.put(ids[k], &key, &value),
            Change::Delete(k, key) => batch.delete(ids[k], &key),
            Change::DeleteRange(k, start, end) if start < end => {
                batch.delete_range(ids[k], &start, &end)
            }
            Change::DeleteRange(..) => {}
        }
    }
    let opts = match i % 6 {
        0 => WriteOptions::synced(),
        _ => WriteOptions::default(),
    };
    db.write(&batch, &opts)
}

/// Records the outcome of batch `i`.
fn note(out: &mut Outcomes, i: u32, result: Result<(), Error>) {
    if out.poisoned_after.is_some() && result.is_ok() {
        out.accepted_after_poison.push(i);
    }
    match result {
        Ok(()) => out.acked.push(i),
        // Refused by a handle an earlier failure poisoned: not written.
        Err(Error::Poisoned(_)) if out.poisoned_after.is_some() => {}
        // The first failure (a failed watermark append before a sync is
        // reported as the poisoning it caused): written or not.
        Err(_) => {
            out.failed.push(i);
            out.poisoned_after.get_or_insert(i);
        }
    }
}

/// The workload, on a handle that may fail; returns what became of each
/// batch. Operations other than writes (compaction, keyspace changes, the
/// reopen) may fail; their failures change nothing the check relies on.
fn run(dir: &Path, fs: &FaultyFileSystem) -> Outcomes {
    let mut out = Outcomes::default();
    let Ok(db) = Db::open(dir, options(fs)) else {
        return out;
    };
    if db.create_keyspace("side").is_err() {
        return out;
    }
    let mut db = Some(db);
    for i in 0..BATCHES {
        if i == BATCHES / 2 {
            drop(db.take());
            out.poisoned_after = None;
            match Db::open(dir, options(fs)) {
                Ok(reopened) => db = Some(reopened),
                Err(_) => return out,
            }
        }
        let Some(handle) = &db else { break };
        note(&mut out, i, write_batch(handle, i));
        match i % 16 {
            7 => {
                let _ = handle.compact();
            }
            11 => {
                let _ = handle
                    .create_keyspace("scratch")
                    .and_then(|_| handle.drop_keyspace("scratch"));
            }
            _ => {}
        }
    }
    out
}

/// Every keyspace's contents, read back through a cursor.
fn contents(db: &Db) -> State {
    let mut state = State::new();
    for name in KEYSPACES {
        let entries = state.entry(name.to_string()).or_default();
        let Some(ks) = db.keyspace(name) else {
            continue;
        };
        let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
        cursor.seek_to_first();
        for item in cursor {
            let (key, value) = item.unwrap();
            entries.insert(key.to_vec(), value.to_vec());
        }
    }
    state
}

/// The states the database may hold: the acknowledged batches with any
/// subset of the failed ones, in batch order.
fn allowed_states(out: &Outcomes) -> Vec<State> {
    let subsets = 1u32 << out.failed.len().min(8);
    (0..subsets)
        .map(|mask| {
            let mut batches = out.acked.clone();
            for (bit, &i) in out.failed.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    batches.push(i);
                }
            }
            batches.sort_unstable();
            let mut state = State::new();
            for name in KEYSPACES {
                state.insert(name.to_string(), BTreeMap::new());
            }
            for i in batches {
                changes(i).iter().for_each(|c| apply(&mut state, c));
            }
            state
        })
        .collect()
}

/// Runs the workload with call `k` failing and checks the outcome; returns
/// what the failpoint failed (`None` once `k` is past the last call).
fn check_fault_at(k: u64) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    fs.faults.fail_once_at.store(k, Ordering::SeqCst);
    let out = run(dir.path(), &fs);
    let failed_call = fs.faults.failed_call.lock().unwrap().clone()?;
    assert!(
        out.accepted_after_poison.is_empty(),
        "call {k} ({failed_call}) failed batches {:?}, yet later batches {:?} of the same \
         handle were acknowledged",
        out.failed,
        out.accepted_after_poison
    );
    let db = Db::open(dir.path(), Options::default()).unwrap_or_else(|e| {
        panic!(
            "after a transient fault at call {k} ({failed_call}) the database does not open: {e}"
        )
    });
    db.verify()
        .unwrap_or_else(|e| panic!("call {k} ({failed_call}): verify failed: {e}"));
    let found = contents(&db);
    assert!(
        allowed_states(&out).contains(&found),
        "call {k} ({failed_call}): the reopened state is not the acknowledged batches {:?} \
         plus some of the failed ones {:?}",
        out.acked,
        out.failed
    );
    Some(failed_call)
}

#[test]
fn a_transient_fault_at_every_io_call_loses_nothing_acknowledged() {
    let mut kinds: BTreeMap<String, u32> = BTreeMap::new();
    let mut k = 1;
    while let Some(call) = check_fault_at(k) {
        let kind = call.split(' ').next().unwrap_or_default().to_string();
        *kinds.entry(kind).or_default() += 1;
        k += 1;
    }
    eprintln!("{} I/O calls failed in turn: {kinds:?}", k - 1);
    assert!(k > 200, "the workload made only {} I/O calls", k - 1);
    for kind in [
        "open",
        "write",
        "sync_data",
        "sync_dir",
        "set_len",
        "map",
        "rename",
    ] {
        assert!(
            kinds.contains_key(kind),
            "no {kind} call was failed: {kinds:?}"
        );
    }
}
