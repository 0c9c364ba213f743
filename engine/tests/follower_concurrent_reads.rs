//! Readers of a read-only handle run while `catch_up` applies the primary's
//! new batches in place (and, after compactions, swaps in a fresh state):
//! every snapshot they take holds a prefix of whole batches, and the prefix
//! each reader sees never goes back.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use alexdb_engine::{Db, WriteOptions};
use common::counter_batches::{batch, consistent_prefix, options};

const BATCHES: u64 = 1500;

#[test]
fn readers_see_whole_batches_while_catch_up_applies_them() {
    let dir = tempfile::tempdir().unwrap();
    let primary = Db::open(dir.path(), options()).unwrap();
    let ks = primary.keyspace("default").unwrap();
    primary
        .write(&batch(ks, 0), &WriteOptions::default())
        .unwrap();
    let reader = Arc::new(Db::open_read_only(dir.path(), options()).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let checkers: Vec<_> = (0..2)
        .map(|_| {
            let (reader, done) = (reader.clone(), done.clone());
            thread::spawn(move || {
                let (mut last, mut checks) = (None, 0u64);
                while !done.load(Ordering::Acquire) {
                    let now = consistent_prefix(&reader);
                    assert!(now >= last, "went back from {last:?} to {now:?}");
                    last = now;
                    checks += 1;
                }
                (last, checks)
            })
        })
        .collect();
    let follower = {
        let (reader, done) = (reader.clone(), done.clone());
        thread::spawn(move || {
            let mut catch_ups = 0u64;
            while !done.load(Ordering::Acquire) {
                reader.catch_up().unwrap();
                catch_ups += 1;
            }
            catch_ups
        })
    };
    let started = Instant::now();
    for n in 1..BATCHES {
        primary
            .write(&batch(ks, n), &WriteOptions::default())
            .unwrap();
    }
    // Let the follower reach the end before the readers stop.
    while consistent_prefix(&reader) < Some(BATCHES - 1) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the reader fell behind"
        );
        thread::sleep(Duration::from_millis(1));
    }
    done.store(true, Ordering::Release);
    let catch_ups = follower.join().unwrap();
    for checker in checkers {
        let (last, checks) = checker.join().unwrap();
        assert!(checks > 0);
        assert!(last.is_some());
    }
    assert!(
        primary.stats().compactions > 0,
        "no compaction ran under the reader"
    );
    eprintln!("{catch_ups} catch-ups while {BATCHES} batches were written");
}
