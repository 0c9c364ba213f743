//! Overwrites store the new payload into the published data node while
//! lock-free readers look the key up. Every key has two payloads that
//! resolve to it; a writer flips stable keys between them (single upserts
//! and batches) while inserting and removing other keys, so nodes are also
//! copied, expanded and split under the readers. Readers must always find
//! every stable key with one of its two payloads, never another key's,
//! including keys whose model keys tie (they differ only past the bytes a
//! node projects).

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use alexdb_engine::index::{AlexIndex, KeyResolver};

/// Keys `0..STABLE` are never removed; keys `STABLE..ALL` churn.
const STABLE: u64 = 8_000;
const ALL: u64 = 24_000;
const RUN_FOR: Duration = Duration::from_millis(1500);

/// Payload `p` and `p + ALL` both resolve to key `p`.
struct Keys(Vec<Vec<u8>>);

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[(payload % ALL) as usize]
    }
}

/// Stable keys come in groups of four that share their first 17 bytes, so
/// their model keys tie; churning keys are spread between them.
fn keys() -> Keys {
    let stable = (0..STABLE).map(|i| format!("tie:{:08}:000{}", i / 4 * 3, i % 4));
    let churn = (STABLE..ALL).map(|i| format!("tie:{:08}:5", (i - STABLE) / 2 * 3 + 1));
    Keys(stable.chain(churn).map(String::into_bytes).collect())
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn reader(index: &AlexIndex, keys: &Keys, stop: &AtomicBool, seed: u64) -> u64 {
    let mut checks = 0;
    let mut i = seed;
    while !stop.load(Ordering::Relaxed) {
        i = mix(i);
        let p = i % STABLE;
        let key = &keys.0[p as usize];
        let guard = crossbeam_epoch::pin();
        let exact = index.get(key, keys, &guard);
        assert!(
            exact.is_some_and(|got| got % ALL == p),
            "get of stable key {p}: {exact:?}"
        );
        let candidate = index.get_candidate(key, keys, &guard);
        assert!(
            candidate.is_some_and(|got| got % ALL == p),
            "get_candidate of stable key {p}: {candidate:?}"
        );
        checks += 1;
    }
    checks
}

fn flip(payload: Option<u64>, p: u64) -> u64 {
    match payload {
        Some(old) if old == p => p + ALL,
        _ => p,
    }
}

#[test]
fn readers_find_every_key_while_overwrites_store_in_place() {
    let keys = keys();
    let mut stable: Vec<u64> = (0..STABLE).collect();
    stable.sort_by_key(|&p| keys.0[p as usize].clone());
    let index = AlexIndex::bulk_load(&stable, &keys);
    let stop = AtomicBool::new(false);
    let mut current: Vec<Option<u64>> = (0..STABLE).map(Some).collect();
    thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|t| {
                s.spawn({
                    let (index, keys, stop) = (&index, &keys, &stop);
                    move || reader(index, keys, stop, t + 1)
                })
            })
            .collect();
        // Stops the readers even if the writer below panics.
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stopper = StopOnDrop(&stop);
        let started = Instant::now();
        let mut round = 0u64;
        while started.elapsed() < RUN_FOR {
            for i in 0..500 {
                let p = mix(round * 500 + i) % STABLE;
                let next = flip(current[p as usize], p);
                let old = index.upsert(&keys.0[p as usize], next, &keys);
                assert_eq!(old, current[p as usize], "upsert's previous payload");
                current[p as usize] = Some(next);
            }
            let mut batch = Vec::new();
            for i in 0..500 {
                let p = mix(round * 7 + i) % STABLE;
                let next = flip(current[p as usize], p);
                current[p as usize] = Some(next);
                batch.push((keys.0[p as usize].as_slice(), next));
                let c = STABLE + (round * 500 + i) % (ALL - STABLE);
                batch.push((keys.0[c as usize].as_slice(), c));
            }
            index.upsert_batch(&batch, &keys);
            for i in (0..500).step_by(2) {
                let c = STABLE + (round * 500 + i) % (ALL - STABLE);
                index.remove(&keys.0[c as usize], &keys);
            }
            round += 1;
        }
        drop(stopper);
        let checks: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(checks > 1000, "readers ran {checks} checks");
    });
    let guard = crossbeam_epoch::pin();
    for p in 0..STABLE {
        let key = &keys.0[p as usize];
        assert_eq!(
            index.get(key, &keys, &guard),
            current[p as usize],
            "key {p}"
        );
    }
}
