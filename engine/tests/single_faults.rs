//! A transient fault at every I/O call: the failpoint of
//! [`FaultyFileSystem`] fails exactly the `k`-th I/O call (an open, read,
//! write, `fdatasync`, directory sync, `set_len`, map, rename, removal,
//! directory creation, hard link, `stat`, `realpath`, `flock` or unlock)
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
//!
//! Two more enumerations fail each call of one operation in turn: a
//! checkpoint (a whole checkpoint or none, the source untouched) and an
//! open (of a new database, one closed cleanly and one whose process died:
//! an error or a handle, then every byte of data still there).

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

/// The kind of a failed call ("open", "hard_link", ...).
fn kind_of(call: &str) -> String {
    call.split(' ').next().unwrap_or_default().to_string()
}

/// Asserts that every kind of `wanted` was failed at least once.
fn assert_failed_kinds(kinds: &BTreeMap<String, u32>, wanted: &[&str]) {
    for kind in wanted {
        assert!(
            kinds.contains_key(*kind),
            "no {kind} call was failed: {kinds:?}"
        );
    }
}

/// Opens the checkpoint at `dir` with the real file system and checks that
/// it holds exactly `expected`.
fn check_checkpoint(dir: &Path, expected: &State, what: &str) {
    let db = Db::open(dir, options_std())
        .unwrap_or_else(|e| panic!("{what}: the checkpoint does not open: {e}"));
    db.verify()
        .unwrap_or_else(|e| panic!("{what}: the checkpoint fails verify: {e}"));
    assert!(
        contents(&db) == *expected,
        "{what}: the checkpoint does not hold the data at checkpoint time"
    );
}

fn options_std() -> Options {
    Options {
        background_compaction: false,
        ..Options::default()
    }
}

/// `<dir>.tmp`, where a checkpoint to `dir` is assembled.
fn staging_of(dir: &Path) -> std::path::PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".tmp");
    name.into()
}

/// A checkpoint of a database of several segments (sealed ones, a
/// compaction's output, the active one) with the `k`-th I/O call of the
/// checkpoint failing, for every `k`, on a file system that can hard-link
/// and on one that cannot (the sealed segments are copied): the checkpoint
/// either fails and leaves no `<dir>` (a `<dir>.tmp` leftover the next
/// checkpoint to `<dir>` removes), or succeeds (a failed hard link falls
/// back to a copy); either way the checkpoint taken opens with exactly the
/// data at checkpoint time, and the source database is untouched.
#[test]
fn a_transient_fault_at_every_io_call_of_a_checkpoint_leaves_a_whole_one_or_none() {
    let base = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    let source = base.path().join("db");
    let db = Db::open(&source, options(&fs)).unwrap();
    db.create_keyspace("side").unwrap();
    for i in 0..BATCHES {
        write_batch(&db, i).unwrap();
        if i == 12 {
            db.compact().unwrap();
        }
    }
    let segments = db.stats().segments;
    assert!(segments >= 3, "the test needs sealed segments: {segments}");
    let expected = contents(&db);
    let mut kinds: BTreeMap<String, u32> = BTreeMap::new();
    for links in [true, false] {
        fs.faults.fail_hard_links.store(!links, Ordering::SeqCst);
        let mut k = 1;
        loop {
            let cp = base.path().join(format!("cp{k}-{links}"));
            let what = format!("checkpoint (hard links: {links}) call {k}");
            let start = fs.faults.calls.load(Ordering::SeqCst);
            fs.faults.fail_once_at.store(start + k, Ordering::SeqCst);
            let result = db.checkpoint(&cp);
            fs.faults.fail_once_at.store(0, Ordering::SeqCst);
            let Some(failed) = fs.faults.failed_call.lock().unwrap().take() else {
                result.unwrap_or_else(|e| panic!("{what}: no fault, yet: {e}"));
                check_checkpoint(&cp, &expected, &what);
                break;
            };
            let what = format!("{what} ({failed})");
            match result {
                Ok(_) => check_checkpoint(&cp, &expected, &what),
                Err(e) => {
                    assert!(!cp.exists(), "{what}: failed ({e}), yet left {cp:?}");
                    db.checkpoint(&cp)
                        .unwrap_or_else(|e| panic!("{what}: the next checkpoint fails: {e}"));
                    assert!(
                        !staging_of(&cp).exists(),
                        "{what}: the next checkpoint left the staging directory"
                    );
                    check_checkpoint(&cp, &expected, &what);
                }
            }
            *kinds.entry(kind_of(&failed)).or_default() += 1;
            k += 1;
        }
    }
    eprintln!("checkpoint I/O calls failed in turn: {kinds:?}");
    assert_failed_kinds(
        &kinds,
        &[
            "metadata",
            "create_dir_all",
            "open",
            "read",
            "write",
            "set_len",
            "sync_data",
            "sync_dir",
            "rename",
            "hard_link",
        ],
    );
    drop(db);
    let db = Db::open(&source, options_std()).unwrap();
    db.verify().unwrap();
    assert!(contents(&db) == expected, "the source database changed");
}

/// A copy of every file of `from` in the new directory `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Opens (and closes) a copy of `template` with the `k`-th I/O call
/// failing, for every `k`; the open succeeds or reports an error, and the
/// database then opens with exactly `expected`. Returns the kinds failed.
fn fault_every_open_call(
    base: &Path,
    template: Option<&Path>,
    expected: &State,
    name: &str,
) -> BTreeMap<String, u32> {
    let mut kinds: BTreeMap<String, u32> = BTreeMap::new();
    for k in 1.. {
        let dir = base.join(format!("{name}{k}"));
        if let Some(template) = template {
            copy_dir(template, &dir);
        }
        let fs = FaultyFileSystem::new();
        fs.faults.fail_once_at.store(k, Ordering::SeqCst);
        // The handle is closed at once: a clean close's calls count too.
        let opened = Db::open(&dir, options(&fs)).map(drop);
        let Some(failed) = fs.faults.failed_call.lock().unwrap().take() else {
            opened.unwrap_or_else(|e| panic!("{name}: no fault, yet the open failed: {e}"));
            break;
        };
        let db = Db::open(&dir, options_std()).unwrap_or_else(|e| {
            panic!("{name}: after a fault at call {k} ({failed}) of an open the database does not open: {e}")
        });
        db.verify()
            .unwrap_or_else(|e| panic!("{name}: call {k} ({failed}): verify: {e}"));
        assert!(
            contents(&db) == *expected,
            "{name}: call {k} ({failed}) of an open ({opened:?}) changed the data"
        );
        drop(db);
        std::fs::remove_dir_all(&dir).unwrap();
        *kinds.entry(kind_of(&failed)).or_default() += 1;
    }
    kinds
}

/// The open path with the `k`-th I/O call failing, for every `k`: creating
/// a database (the directory, its sync, the lock, the MANIFEST, the first
/// segment), opening one closed cleanly (from its index checkpoint) and
/// one whose process died (recovered from the log): the open succeeds or
/// reports an error, never panics, and the database then opens with
/// exactly its data.
#[test]
fn a_transient_fault_at_every_io_call_of_an_open_fails_it_and_loses_nothing() {
    let base = tempfile::tempdir().unwrap();
    let mut empty = State::new();
    for name in KEYSPACES {
        empty.insert(name.to_string(), BTreeMap::new());
    }
    let mut kinds = fault_every_open_call(base.path(), None, &empty, "new");

    let closed = base.path().join("closed");
    let db = Db::open(&closed, options_std()).unwrap();
    db.create_keyspace("side").unwrap();
    for i in 0..BATCHES / 2 {
        write_batch(&db, i).unwrap();
    }
    let expected = contents(&db);
    // The files as the page cache holds them, the handle still open: a
    // process killed here.
    let crashed = base.path().join("crashed");
    copy_dir(&closed, &crashed);
    drop(db);
    for (template, name) in [(&closed, "clean"), (&crashed, "crash")] {
        for (kind, n) in fault_every_open_call(base.path(), Some(template), &expected, name) {
            *kinds.entry(kind).or_default() += n;
        }
    }
    eprintln!("open I/O calls failed in turn: {kinds:?}");
    assert_failed_kinds(
        &kinds,
        &[
            "metadata",
            "create_dir_all",
            "canonicalize",
            "open",
            "file_id",
            "lock",
            "unlock",
            "read_file",
            "write",
            "sync_data",
            "sync_dir",
            "rename",
            "map",
        ],
    );
}
