//! Crash test: a child process commits transactions (each writes a counter
//! and a slot in two column families) while another transaction is always
//! in flight, and reports each commit over a pipe; the parent kills it with
//! SIGKILL at a random moment, reopens, and checks that every acknowledged
//! transaction is there whole, that the state is exactly that after some
//! prefix of the commits, and that no uncommitted write is visible.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use alexdb::{IteratorMode, OptimisticTransactionDB, Options};

#[path = "common/child_test.rs"]
mod child_test;

const CHILD_ENV: &str = "ALEXDB_TXN_CRASH_CHILD_DIR";
const SLOTS: u64 = 16;

fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

fn open(dir: &Path) -> OptimisticTransactionDB {
    OptimisticTransactionDB::open_cf(&options(), dir, ["other"]).unwrap()
}

fn slot(n: u64) -> Vec<u8> {
    format!("slot{:02}", n % SLOTS).into_bytes()
}

fn value(n: u64) -> Vec<u8> {
    let mut v = n.to_be_bytes().to_vec();
    v.resize(8 + (n % 200) as usize, (n % 251) as u8);
    v
}

fn counter(db: &OptimisticTransactionDB) -> Option<u64> {
    db.get(b"counter")
        .unwrap()
        .map(|v| u64::from_be_bytes(v.try_into().unwrap()))
}

/// The child: commits transaction after transaction, printing "ack N"
/// after each, with an uncommitted transaction open around each commit.
#[test]
#[ignore = "run as a child process by transaction_crash_loop"]
fn transaction_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = open(Path::new(&dir));
    let other = db.cf_handle("other").unwrap();
    let mut n = counter(&db).map_or(0, |c| c + 1);
    loop {
        let in_flight = db.transaction();
        in_flight.put(format!("uncommitted{n}"), b"never").unwrap();
        in_flight.put_cf(&other, slot(n), b"never").unwrap();
        let txn = db.transaction();
        txn.put(b"counter", n.to_be_bytes()).unwrap();
        txn.put(slot(n), value(n)).unwrap();
        txn.put_cf(&other, slot(n), value(n)).unwrap();
        txn.commit().unwrap();
        println!("ack {n}");
        drop(in_flight);
        n += 1;
    }
}

#[test]
fn transaction_crash_loop() {
    let cycles: u64 = std::env::var("ALEXDB_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut total_acks = 0;
    for cycle in 0..cycles {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let wanted_acks = 1 + rng % 300;
        let (last_ack, seen) = run_child(dir.path(), wanted_acks);
        total_acks += seen;
        verify_after_crash(dir.path(), last_ack, cycle);
    }
    assert!(
        total_acks > cycles,
        "the child made too little progress to test anything"
    );
}

/// Runs the child until it acknowledged `wanted_acks` commits (or 20 s
/// passed), kills it, and returns the last acknowledged commit and the count.
fn run_child(dir: &Path, wanted_acks: u64) -> (Option<u64>, u64) {
    let mut child = child_test::spawn("transaction_crash_child", CHILD_ENV, dir);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut last_ack, mut seen) = (None, 0);
    let started = Instant::now();
    while seen < wanted_acks && started.elapsed() < Duration::from_secs(20) {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(n) = line.strip_prefix("ack ") {
                    last_ack = Some(n.parse::<u64>().unwrap());
                    seen += 1;
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
    }
    (last_ack, seen)
}

/// The slots after commits 0..=last.
fn model(last: Option<u64>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut slots = BTreeMap::new();
    if let Some(last) = last {
        for n in last.saturating_sub(SLOTS - 1)..=last {
            slots.insert(slot(n), value(n));
        }
    }
    slots
}

fn verify_after_crash(dir: &Path, last_ack: Option<u64>, cycle: u64) {
    let db = open(dir);
    let found = counter(&db);
    if let Some(ack) = last_ack {
        let f = found.unwrap_or_else(|| panic!("cycle {cycle}: commit {ack} lost entirely"));
        assert!(
            f >= ack && f <= ack + 1,
            "cycle {cycle}: acknowledged up to {ack}, recovered {f}"
        );
    }
    let other = db.cf_handle("other").unwrap();
    let mut want = model(found);
    let got_other: BTreeMap<_, _> = db
        .iterator_cf(&other, IteratorMode::Start)
        .map(|item| {
            let (k, v) = item.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect();
    assert_eq!(got_other, want, "cycle {cycle}: column family \"other\"");
    if let Some(n) = found {
        want.insert(b"counter".to_vec(), n.to_be_bytes().to_vec());
    }
    let got_default: BTreeMap<_, _> = db
        .iterator(IteratorMode::Start)
        .map(|item| {
            let (k, v) = item.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect();
    assert_eq!(
        got_default, want,
        "cycle {cycle}: default column family (an uncommitted write would show here)"
    );
}
