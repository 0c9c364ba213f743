//! Crash test: a child process writes batches and reports each
//! acknowledgement over a pipe; the parent kills it with SIGKILL at a random
//! moment, reopens the database and checks that every acknowledged batch is
//! present, that batches are all-or-nothing, and that the state is exactly
//! the model's state after some prefix of the batches. Segments are small so
//! that rotation and background compaction are killed mid-way too, and one
//! cycle in eight kills the child while it opens (recovers) the database.
//! `ALEXDB_CRASH_CYCLES` sets the number of cycles (60 by default; `make
//! soak` runs many more). `ALEXDB_CRASH_DIR` names a directory to run in and
//! keep afterwards (a fresh temporary one by default), and every 500 cycles
//! the loop prints its progress: cycles, acknowledged batches, files and
//! bytes in the directory.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

const CHILD_ENV: &str = "ALEXDB_CRASH_CHILD_DIR";
const SLOTS: u64 = 40;

fn options() -> Options {
    Options {
        segment_bytes: 32 << 10,
        compaction_dead_ratio: 0.3,
        ..Options::default()
    }
}

/// Batch `n` sets slot n % SLOTS in both keyspaces to n, records n as the
/// counter, and deletes slot (n + 7) % SLOTS in "other"; every tenth batch
/// then also deletes the range of [`RANGE_SLOTS`] slots from
/// [`range_start`]`(n)` in "other", so range deletes are applied, kept for
/// holders and dropped by compaction while processes are killed.
fn batch(n: u64, default: KeyspaceId, other: KeyspaceId) -> WriteBatch {
    let value = value_of(n);
    let mut b = WriteBatch::new();
    b.put(default, &slot(n % SLOTS), &value);
    b.put(other, &slot(n % SLOTS), &value);
    b.delete(other, &slot((n + 7) % SLOTS));
    b.put(default, b"counter", &n.to_be_bytes());
    if let Some(start) = range_start(n) {
        b.delete_range(other, &slot(start), &slot(start + RANGE_SLOTS));
    }
    b
}

/// Slots a range delete covers.
const RANGE_SLOTS: u64 = 3;

/// The first slot batch `n`'s range delete covers, if it has one.
fn range_start(n: u64) -> Option<u64> {
    n.is_multiple_of(10).then_some((n + 13) % SLOTS)
}

/// The newest batch up to `last` whose range delete covers slot `s`: range
/// starts repeat every `SLOTS` batches, so looking back that far suffices.
fn newest_range_over(s: u64, last: u64) -> Option<u64> {
    (last.saturating_sub(SLOTS)..=last)
        .rev()
        .find(|&n| range_start(n).is_some_and(|r| r <= s && s < r + RANGE_SLOTS))
}

fn slot(i: u64) -> Vec<u8> {
    format!("slot:{i:04}").into_bytes()
}

fn value_of(n: u64) -> Vec<u8> {
    let mut v = n.to_be_bytes().to_vec();
    v.resize(8 + (n % 300) as usize, (n % 251) as u8);
    v
}

type State = (BTreeMap<Vec<u8>, Vec<u8>>, BTreeMap<Vec<u8>, Vec<u8>>);

/// The model state after batches 0..=last, slot by slot (replaying every
/// batch made each check of a long soak cost as much as its history).
fn model(last: Option<u64>) -> State {
    let (mut d, mut o) = (BTreeMap::new(), BTreeMap::new());
    let Some(last) = last else {
        return (d, o);
    };
    // The last batch n <= last with n % SLOTS == r, if any.
    let newest = |r: u64| last.checked_sub((last + SLOTS - r) % SLOTS);
    for s in 0..SLOTS {
        let Some(put) = newest(s) else { continue };
        d.insert(slot(s), value_of(put));
        // Batch n deletes slot (n + 7) % SLOTS after its put of n % SLOTS,
        // and its range delete comes last of all.
        let deleted = newest((s + SLOTS - 7) % SLOTS);
        let range_deleted = newest_range_over(s, last);
        let hidden = |by: Option<u64>| by.is_some_and(|del| del >= put);
        if !hidden(deleted) && !hidden(range_deleted) {
            o.insert(slot(s), value_of(put));
        }
    }
    d.insert(b"counter".to_vec(), last.to_be_bytes().to_vec());
    (d, o)
}

fn counter(db: &Db, ks: KeyspaceId) -> Option<u64> {
    db.get_copied(ks, b"counter")
        .unwrap()
        .map(|v| u64::from_be_bytes(v.try_into().unwrap()))
}

/// Where the child puts its checkpoints: beside the database.
fn checkpoints_of(dir: &std::path::Path) -> std::path::PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".checkpoints");
    std::path::PathBuf::from(name)
}

/// The child: keeps writing batches after whatever it recovers, printing
/// "ack N" after each acknowledged write. Every 100 batches it closes and
/// reopens the database, so kills also land while a clean close writes the
/// index checkpoint and while an open starts from it. Half-way between
/// two reopens it takes a checkpoint (`Db::checkpoint`), prints
/// "checkpoint N" (N: the last batch in it) once it returned, and only then
/// removes older checkpoints and leftovers, so kills land in checkpoints
/// too and the last one reported is never touched.
#[test]
#[ignore = "run as a child process by crash_loop"]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut db = Db::open(&dir, options()).unwrap();
    let default = db.keyspace("default").unwrap();
    let other = db.create_keyspace("other").unwrap();
    let mut n = counter(&db, default).map_or(0, |c| c + 1);
    loop {
        db.write(&batch(n, default, other), &WriteOptions::default())
            .unwrap();
        println!("ack {n}");
        n += 1;
        if n.is_multiple_of(100) {
            drop(db);
            db = Db::open(&dir, options()).unwrap();
        } else if n.is_multiple_of(50) {
            take_checkpoint(&db, std::path::Path::new(&dir), n - 1);
        }
    }
}

/// Takes the child's checkpoint holding batches up to `last`, reports it,
/// then removes every other entry of the checkpoints directory.
fn take_checkpoint(db: &Db, dir: &std::path::Path, last: u64) {
    let all = checkpoints_of(dir);
    let name = format!("cp-{last}");
    std::fs::create_dir_all(&all).unwrap();
    let _ = std::fs::remove_dir_all(all.join(&name));
    db.checkpoint(all.join(&name)).unwrap();
    println!("checkpoint {last}");
    for entry in std::fs::read_dir(&all).unwrap().flatten() {
        if entry.file_name() != name.as_str() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[test]
fn crash_loop() {
    let cycles: u64 = std::env::var("ALEXDB_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let temp = tempfile::tempdir().unwrap();
    let kept = std::env::var_os("ALEXDB_CRASH_DIR").map(std::path::PathBuf::from);
    // Inside the temporary directory, so that the checkpoints beside it
    // go with it.
    let in_temp = temp.path().join("db");
    let dir = kept.as_deref().unwrap_or(&in_temp);
    let exe = std::env::current_exe().unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut total_acks = 0;
    let mut checkpoints_checked = 0;
    let started_loop = Instant::now();
    for cycle in 0..cycles {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // One cycle in eight kills the child within 30 ms of its start,
        // usually while it opens (recovers) the database.
        let wanted_acks = match rng % 8 {
            0 => 0,
            _ => 1 + rng % 400,
        };
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut last_ack = None;
        let mut last_checkpoint = None;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let started = Instant::now();
        let mut seen = 0;
        if wanted_acks == 0 {
            std::thread::sleep(Duration::from_millis(rng % 30));
        }
        while seen < wanted_acks && started.elapsed() < Duration::from_secs(20) {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(n) = line.strip_prefix("ack ") {
                        last_ack = Some(n.parse::<u64>().unwrap());
                        seen += 1;
                    }
                    if let Some(n) = line.strip_prefix("checkpoint ") {
                        last_checkpoint = Some(n.parse::<u64>().unwrap());
                    }
                }
                _ => break,
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Acknowledgements still in the pipe were made before the kill too.
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("ack ") {
                last_ack = Some(n.parse::<u64>().unwrap());
                seen += 1;
            }
            if let Some(n) = line.strip_prefix("checkpoint ") {
                last_checkpoint = Some(n.parse::<u64>().unwrap());
            }
        }
        total_acks += seen;
        verify_after_crash(dir, last_ack, cycle);
        if let Some(last) = last_checkpoint {
            verify_checkpoint(dir, last, cycle);
            checkpoints_checked += 1;
        }
        if (cycle + 1) % 500 == 0 {
            report_progress(dir, cycle + 1, total_acks, started_loop);
        }
    }
    assert!(
        total_acks > cycles,
        "the child made too little progress to test anything"
    );
    assert!(
        cycles < 20 || checkpoints_checked > 0,
        "no cycle reached a checkpoint"
    );
    println!("{cycles} cycles, {checkpoints_checked} checkpoints checked");
}

fn report_progress(dir: &std::path::Path, cycles: u64, acks: u64, since: Instant) {
    let (files, bytes) = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .fold((0u64, 0u64), |(n, b), m| (n + 1, b + m.len()));
    println!(
        "{cycles} cycles, {acks} batches acknowledged, {files} files, {bytes} bytes, {:.0} s",
        since.elapsed().as_secs_f64()
    );
}

/// The checkpoint the child reported last holds exactly the batches up to
/// `last`, whatever the kill interrupted after it.
fn verify_checkpoint(dir: &std::path::Path, last: u64, cycle: u64) {
    let path = checkpoints_of(dir).join(format!("cp-{last}"));
    let db = Db::open(&path, options())
        .unwrap_or_else(|e| panic!("cycle {cycle}: checkpoint {last} does not open: {e}"));
    db.verify().unwrap();
    let default = db.keyspace("default").unwrap();
    let other = db.keyspace("other").unwrap();
    assert_eq!(counter(&db, default), Some(last), "cycle {cycle}");
    let (want_d, want_o) = model(Some(last));
    let got_d: BTreeMap<_, _> = common::scan_all(&db, default).into_iter().collect();
    let got_o: BTreeMap<_, _> = common::scan_all(&db, other).into_iter().collect();
    assert_eq!(got_d, want_d, "cycle {cycle}: checkpoint {last}, default");
    assert_eq!(got_o, want_o, "cycle {cycle}: checkpoint {last}, other");
}

fn verify_after_crash(dir: &std::path::Path, last_ack: Option<u64>, cycle: u64) {
    let db =
        Db::open(dir, options()).unwrap_or_else(|e| panic!("cycle {cycle}: reopen failed: {e}"));
    db.verify().unwrap();
    let default = db.keyspace("default").unwrap();
    let found = counter(&db, default);
    let Some(other) = db.keyspace("other") else {
        assert!(
            found.is_none(),
            "cycle {cycle}: batches survived but their keyspace did not"
        );
        return;
    };
    if let Some(ack) = last_ack {
        let f = found
            .unwrap_or_else(|| panic!("cycle {cycle}: acknowledged batch {ack} lost entirely"));
        assert!(
            f >= ack && f <= ack + 1,
            "cycle {cycle}: acknowledged up to {ack}, recovered {f}"
        );
    }
    let (want_d, want_o) = model(found);
    let got_d: BTreeMap<_, _> = common::scan_all(&db, default).into_iter().collect();
    let got_o: BTreeMap<_, _> = common::scan_all(&db, other).into_iter().collect();
    assert_eq!(
        got_d, want_d,
        "cycle {cycle}: default keyspace differs from the model"
    );
    assert_eq!(
        got_o, want_o,
        "cycle {cycle}: other keyspace differs from the model"
    );
}
