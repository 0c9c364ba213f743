//! Lock-free readers against a concurrent writer: readers always find the
//! keys that are never removed, and scans are strictly ordered. The writer
//! alternates single upserts with `upsert_batch` calls. Both leaf forms:
//! data nodes, and packed leaves (which take the writes in place, by copy,
//! and turn into data nodes once they grow too big).

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use alexdb_engine::index::{AlexIndex, KeyResolver, LeafForm, ScanDirection};

/// Keys `0..STABLE` (even numbers) are never removed; keys above churn.
const STABLE: u64 = 20_000;
const CHURN: u64 = 60_000;
const RUN_FOR: Duration = Duration::from_millis(1500);

/// Payload `p` is the key `p * 2` (stable) or `p * 2 + 1` (churning), as
/// 8 big-endian bytes; all keys are known up front so resolving is pure.
struct Keys(Vec<[u8; 8]>);

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[payload as usize]
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn keys() -> Keys {
    let stable = (0..STABLE).map(|i| (mix(i) & !1).to_be_bytes());
    let churn = (0..CHURN).map(|i| (mix(i + STABLE) | 1).to_be_bytes());
    Keys(stable.chain(churn).collect())
}

fn reader(index: &AlexIndex, keys: &Keys, stop: &AtomicBool, seed: u64) -> u64 {
    let mut checks = 0;
    let mut i = seed;
    let mut out = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        i = mix(i);
        let p = i % STABLE;
        let guard = crossbeam_epoch::pin();
        assert_eq!(
            index.get(&keys.0[p as usize], keys, &guard),
            Some(p),
            "stable key lost"
        );
        assert_eq!(
            index.get_candidate(&keys.0[p as usize], keys, &guard),
            Some(p)
        );
        out.clear();
        let reverse = i.is_multiple_of(2);
        let dir = if reverse {
            ScanDirection::Reverse
        } else {
            ScanDirection::Forward
        };
        let from = keys.0[p as usize];
        index.collect(Bound::Included(&from), dir, 600, keys, &guard, &mut out);
        assert_eq!(out.first(), Some(&p), "scan must start at the stable key");
        let ordered = out.windows(2).all(|w| {
            let (a, b) = (keys.key(w[0]), keys.key(w[1]));
            if reverse { a > b } else { a < b }
        });
        assert!(ordered, "scan out of order or duplicated");
        checks += 1;
    }
    checks
}

/// Stable keys between two stable keys seen by a scan must all be there.
fn full_scan_has_all_stable(index: &AlexIndex, keys: &Keys) {
    let guard = crossbeam_epoch::pin();
    let mut out = Vec::new();
    let mut from: Option<[u8; 8]> = None;
    loop {
        let bound = from
            .as_ref()
            .map_or(Bound::Unbounded, |k| Bound::Excluded(k.as_slice()));
        let before = out.len();
        index.collect(bound, ScanDirection::Forward, 256, keys, &guard, &mut out);
        if out.len() == before {
            break;
        }
        from = out.last().map(|&p| keys.0[p as usize]);
    }
    let stable = out.iter().filter(|&&p| p < STABLE).count() as u64;
    assert_eq!(stable, STABLE, "a paged scan skipped stable keys");
    assert!(out.windows(2).all(|w| keys.key(w[0]) < keys.key(w[1])));
}

#[test]
fn readers_see_a_consistent_tree_during_writes() {
    let stats = run_with(LeafForm::Dense);
    assert!(
        stats.splits_sideways + stats.splits_down + stats.expansions > 0,
        "{stats:?}"
    );
}

#[test]
fn readers_see_consistent_packed_leaves_during_writes() {
    // The writes went into packed leaves (taken in place or by a copy).
    let stats = run_with(LeafForm::Packed);
    assert!(
        stats.packed_leaves > 0 && stats.num_keys > STABLE as usize,
        "{stats:?}"
    );
}

/// Readers, a scanner and a writer over an index of the stable keys built
/// with leaves of `form`; returns the index's statistics at the end.
fn run_with(form: LeafForm) -> alexdb_engine::index::IndexStats {
    let keys = keys();
    let mut stable: Vec<u64> = (0..STABLE).collect();
    stable.sort_by_key(|&p| keys.0[p as usize]);
    let index = AlexIndex::bulk_load_as(&stable, &keys, form);
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|t| {
                s.spawn({
                    let (index, keys, stop) = (&index, &keys, &stop);
                    move || reader(index, keys, stop, t)
                })
            })
            .collect();
        let scanner = s.spawn(|| {
            let mut scans = 0;
            while !stop.load(Ordering::Relaxed) {
                full_scan_has_all_stable(&index, &keys);
                scans += 1;
            }
            scans
        });
        // Stops the readers even if the writer below panics (otherwise the
        // scope would wait for them forever instead of failing).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stopper = StopOnDrop(&stop);
        let start = Instant::now();
        let mut round = 0u64;
        while start.elapsed() < RUN_FOR {
            // Insert a batch of churning keys, then remove every other one.
            // Odd rounds insert them with `upsert_batch`, together with
            // re-upserts of stable keys (same payload) and a duplicate.
            if round.is_multiple_of(2) {
                for i in 0..2_000 {
                    let p = STABLE + (round * 2_000 + i) % CHURN;
                    index.upsert(&keys.0[p as usize], p, &keys);
                }
            } else {
                let mut batch: Vec<(&[u8], u64)> = (0..2_000)
                    .map(|i| STABLE + (round * 2_000 + i) % CHURN)
                    .chain((0..200).map(|i| mix(round * 200 + i) % STABLE))
                    .map(|p| (keys.0[p as usize].as_slice(), p))
                    .collect();
                batch.push(batch[0]);
                let previous = index.upsert_batch(&batch, &keys);
                assert_eq!(previous.len(), batch.len());
                assert_eq!(previous.last(), Some(&Some(batch[0].1)));
                for (&(_, p), prev) in batch[2_000..2_200].iter().zip(&previous[2_000..]) {
                    assert_eq!(*prev, Some(p), "stable key missing before a batch");
                }
            }
            for i in (0..2_000).step_by(2) {
                let p = STABLE + (round * 2_000 + i) % CHURN;
                index.remove(&keys.0[p as usize], &keys);
            }
            round += 1;
        }
        drop(stopper);
        for r in readers {
            assert!(r.join().expect("reader panicked") > 0);
        }
        assert!(scanner.join().expect("scanner panicked") > 0);
    });
    full_scan_has_all_stable(&index, &keys);
    index.stats()
}
