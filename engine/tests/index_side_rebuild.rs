//! Rebuilds to the side: a background thread rebuilds big
//! subtrees while a writer inserts, overwrites and removes keys in the hot
//! range they cover and readers look keys up. After the writes the index
//! holds exactly what a `BTreeMap` given the same writes holds, readers
//! found every key that is never removed, and the writer itself never
//! rebuilt a subtree over the threshold.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use alexdb_engine::index::{AlexIndex, IndexStats, KeyResolver, ScanDirection};

/// Rebuilds of subtrees over this many keys go to the side: far below the
/// engine's threshold, so that many run while the writer writes.
const SIDE: usize = 2_048;

/// Payloads `p` and `p + ALIAS` resolve to the same key, so an overwrite
/// can store a different payload.
const ALIAS: u64 = 1 << 32;

struct Keys(Vec<Vec<u8>>);

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[(payload % ALIAS) as usize]
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A key set: the first `.1` keys are loaded in bulk and never written
/// again; the writer writes the others.
type KeySet = (Keys, usize);

/// `stable` random keys, then `hot` keys between two neighbouring ones.
fn hot_gap(stable: u64, hot: u64, seed: u64) -> KeySet {
    let mut loaded: Vec<u64> = (0..stable).map(|i| mix(i ^ seed)).collect();
    loaded.sort_unstable();
    loaded.dedup();
    let (lo, hi) = (loaded[loaded.len() / 3], loaded[loaded.len() / 3 + 1]);
    let mut all: Vec<u64> = loaded.clone();
    all.extend((0..hot).map(|i| lo + 1 + mix(i ^ !seed) % (hi - lo - 1)));
    let mut seen = std::collections::HashSet::new();
    all.retain(|k| seen.insert(*k));
    let all = all.iter().map(|k| k.to_be_bytes().to_vec()).collect();
    (Keys(all), loaded.len())
}

/// `stable` random string keys, then `appended` keys with a long shared
/// prefix, above all of them (written in nearly ascending order).
fn prefixed_appends(stable: u64, appended: u64, seed: u64) -> KeySet {
    let mut loaded: Vec<Vec<u8>> = (0..stable)
        .map(|i| format!("acct:{:016x}", mix(i ^ seed)).into_bytes())
        .collect();
    loaded.sort_unstable();
    loaded.dedup();
    let n = loaded.len();
    loaded.extend((0..appended).map(|i| format!("user:profile:{i:09}").into_bytes()));
    (Keys(loaded), n)
}

/// Looks up random stable keys until `stop`; returns the lookups made.
fn reader(index: &AlexIndex, keys: &Keys, stable: usize, stop: &AtomicBool) -> u64 {
    let mut reads = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let p = mix(reads) % stable as u64;
        let guard = crossbeam_epoch::pin();
        let found = index.get(&keys.0[p as usize], keys, &guard);
        assert_eq!(found, Some(p), "stable key {p} lost");
        reads += 1;
    }
    reads
}

/// Runs rebuilds to the side until `stop`; returns how many were installed.
fn background(index: &AlexIndex, keys: &Keys, stop: &AtomicBool) -> u64 {
    let mut installed = 0;
    while !stop.load(Ordering::Relaxed) {
        if index.rebuild_to_the_side(|| keys) {
            installed += 1;
        } else {
            thread::yield_now();
        }
    }
    installed
}

/// The writer: inserts every hot key in a shuffled order, and between them
/// overwrites and removes hot keys already written, some in batches.
/// `shuffle` false: nearly ascending (each key swapped with one of the
/// next 64).
fn write_hot(
    index: &AlexIndex,
    keys: &Keys,
    first_hot: usize,
    seed: u64,
    shuffle: bool,
) -> BTreeMap<Vec<u8>, u64> {
    let mut model = BTreeMap::new();
    let mut written: Vec<u64> = Vec::new();
    let mut order: Vec<u64> = (first_hot as u64..keys.0.len() as u64).collect();
    for i in (1..order.len()).rev() {
        let span = if shuffle {
            i as u64 + 1
        } else {
            (i as u64 + 1).min(64)
        };
        order.swap(i, i - (mix(i as u64 ^ seed) % span) as usize);
    }
    for (n, &p) in order.iter().enumerate() {
        let r = mix(n as u64 ^ seed.rotate_left(7));
        let key = keys.0[p as usize].clone();
        assert_eq!(index.upsert(&key, p, keys), model.insert(key, p));
        written.push(p);
        match r % 8 {
            0 => {
                let q = written[(r >> 8) as usize % written.len()];
                let key = &keys.0[q as usize];
                assert_eq!(index.remove(key, keys), model.remove(key));
            }
            1 => {
                let q = written[(r >> 8) as usize % written.len()];
                let key = keys.0[q as usize].clone();
                let alias = model.get(&key).map_or(q, |&old| old ^ ALIAS);
                assert_eq!(index.upsert(&key, alias, keys), model.insert(key, alias));
            }
            2 => {
                let batch: Vec<(&[u8], u64)> = (0..16)
                    .map(|j| written[(mix(r + j) % written.len() as u64) as usize])
                    .map(|q| (keys.0[q as usize].as_slice(), q + ALIAS))
                    .collect();
                let previous = index.upsert_batch(&batch, keys);
                for (&(key, q), prev) in batch.iter().zip(previous) {
                    assert_eq!(prev, model.insert(key.to_vec(), q));
                }
            }
            _ => {}
        }
    }
    model
}

/// Returns the index's statistics after the checks.
fn run((keys, stable): KeySet, seed: u64, shuffle: bool) -> IndexStats {
    let sorted: Vec<u64> = (0..stable as u64).collect();
    let index = AlexIndex::bulk_load(&sorted, &keys);
    index.set_side_rebuild_above(Some(SIDE));
    let stop = AtomicBool::new(false);
    let (mut model, side, reads) = thread::scope(|s| {
        let rebuilder = s.spawn(|| background(&index, &keys, &stop));
        let reader = s.spawn(|| reader(&index, &keys, stable, &stop));
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stopper = StopOnDrop(&stop);
        let model = write_hot(&index, &keys, stable, seed, shuffle);
        drop(stopper);
        let mut side = rebuilder.join().expect("rebuilder panicked");
        // A job requested near the end is run here, after the writer.
        while index.rebuild_to_the_side(|| &keys) {
            side += 1;
        }
        (model, side, reader.join().expect("reader panicked"))
    });
    for p in 0..stable as u64 {
        model.insert(keys.0[p as usize].clone(), p);
    }
    let stats = index.stats();
    eprintln!("seed {seed}: {side} side rebuilds, {reads} reads, {stats:?}");
    assert!(side > 0, "no rebuild ran to the side: {stats:?}");
    assert!(stats.largest_rebuild <= SIDE as u64, "{stats:?}");
    // No depth bound here: how deep the tree is depends on when the
    // rebuilder ran (`index_structure` bounds it once rebuilds are done).
    assert_eq!(index.len(), model.len());
    let guard = crossbeam_epoch::pin();
    let mut all = Vec::new();
    index.collect(
        Bound::Unbounded,
        ScanDirection::Forward,
        usize::MAX,
        &keys,
        &guard,
        &mut all,
    );
    let expected: Vec<u64> = model.values().copied().collect();
    assert_eq!(all.len(), expected.len());
    assert!(all == expected, "the index differs from the model");
    for (key, &p) in model.iter().step_by(13) {
        assert_eq!(index.get(key, &keys, &guard), Some(p));
    }
    stats
}

#[test]
fn side_rebuilds_keep_every_write_in_a_hot_gap() {
    run(hot_gap(200_000, 150_000, 1), 1, true);
}

#[test]
fn side_rebuilds_keep_every_write_under_prefixed_appends() {
    let stats = run(prefixed_appends(50_000, 200_000, 7), 7, false);
    // The writer went on while subtrees were rebuilt: its writes meanwhile
    // were replayed into the new subtrees.
    assert!(stats.side_rebuild_writes > 0, "{stats:?}");
}
