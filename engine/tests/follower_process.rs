//! A read-only handle follows a primary that keeps writing in another
//! process: after every `catch_up` it sees a consistent prefix of the
//! primary's batches (each batch all or nothing, the counter never going
//! back), while the primary rotates segments and compacts them away under
//! it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use alexdb_engine::{Db, WriteOptions};
use common::counter_batches::{batch, consistent_prefix, options};
use common::segment_files;

const CHILD_ENV: &str = "ALEXDB_FOLLOWER_PRIMARY_DIR";

/// The primary: writes batches forever after the last one it recovers,
/// printing "ack N" after the first (only: nobody reads further, and a
/// full pipe, 4 KiB on Windows, would stop the writer).
#[test]
#[ignore = "run as a child process by follows_a_primary_in_another_process"]
fn primary_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = Db::open(&dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let next = db
        .get_copied(ks, b"counter")
        .unwrap()
        .map_or(0, |v| u64::from_be_bytes(v[..8].try_into().unwrap()) + 1);
    for n in next.. {
        db.write(&batch(ks, n), &WriteOptions::default()).unwrap();
        if n == next {
            println!("ack {n}");
        }
    }
}

fn spawn_primary(dir: &std::path::Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "primary_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn open_reader(dir: &std::path::Path) -> Db {
    let started = Instant::now();
    loop {
        match Db::open_read_only(dir, options()) {
            Ok(db) => return db,
            Err(e) if started.elapsed() > Duration::from_secs(20) => panic!("reader: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Three lives of the primary, each killed with SIGKILL while writing; the
/// reader stays open across them and catches up all along.
#[test]
fn follows_a_primary_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_primary(dir.path());
    let mut acks = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait for the primary to have written something.
    assert!(acks.next().is_some_and(|l| l.is_ok()));
    let reader = open_reader(dir.path());
    let first_files = segment_files(dir.path());
    let mut last = consistent_prefix(&reader);
    let (mut catch_ups, mut advanced) = (0, 0);
    let started = Instant::now();
    for life in 0..3 {
        if life > 0 {
            child = spawn_primary(dir.path());
            acks = BufReader::new(child.stdout.take().unwrap()).lines();
            assert!(acks.next().is_some_and(|l| l.is_ok()));
        }
        // Follow until this life's primary has written 300 more batches.
        let target = last.map_or(300, |n| n + 300);
        let life_started = Instant::now();
        while last < Some(target) {
            assert!(
                life_started.elapsed() < Duration::from_secs(60),
                "no progress"
            );
            reader.catch_up().unwrap();
            catch_ups += 1;
            let now = consistent_prefix(&reader);
            assert!(now >= last, "went back from {last:?} to {now:?}");
            advanced += usize::from(now > last);
            last = now;
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    eprintln!(
        "{catch_ups} catch-ups in {:?} over 3 primary lives: reached batch {last:?}, advanced \
         {advanced} times",
        started.elapsed()
    );
    let now = segment_files(dir.path());
    assert!(
        first_files.iter().any(|f| !now.contains(f)),
        "the primary never compacted away a segment the reader had opened"
    );
    reader.catch_up().unwrap();
    let reader_after = open_reader(dir.path());
    assert_eq!(consistent_prefix(&reader_after), consistent_prefix(&reader));
    assert!(consistent_prefix(&reader_after) >= last);
}
