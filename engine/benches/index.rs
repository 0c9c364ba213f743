//! ALEX index benchmarks on 1M uniform random `u64` keys (seed 42, 8-byte
//! big-endian): point lookups against `BTreeMap<u64, u64>` (criterion, and
//! an interleaved in-process ratio that is robust to machine load),
//! one-by-one upserts, `upsert_batch` in batches of 1,000 random keys, and
//! bulk loading; plus two former cliffs: 200K ascending upserts one by one,
//! and bulk loading 1M `user:profile:{:012}` string keys. Also prints bytes per key and the structure statistics
//! once.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use alexdb_engine::index::{AlexIndex, KeyResolver};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const N: usize = 1_000_000;
const LOOKUPS: usize = 1 << 16;
const BATCH: usize = 1_000;

/// Payload `p` is key `p`.
struct Keys(Vec<[u8; 8]>);

impl KeyResolver for Keys {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[payload as usize]
    }
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

struct Data {
    nums: Vec<u64>,
    keys: Keys,
    sorted: Vec<u64>,
    probes: Vec<usize>,
}

fn data() -> Data {
    let mut rng = Rng(42);
    let nums: Vec<u64> = (0..N).map(|_| rng.next()).collect();
    let keys = Keys(nums.iter().map(|n| n.to_be_bytes()).collect());
    let mut sorted: Vec<u64> = (0..N as u64).collect();
    sorted.sort_unstable_by_key(|&p| nums[p as usize]);
    let probes = (0..LOOKUPS)
        .map(|_| (rng.next() % N as u64) as usize)
        .collect();
    Data {
        nums,
        keys,
        sorted,
        probes,
    }
}

fn report(label: &str, index: &AlexIndex) {
    let stats = index.stats();
    let per_key = index.memory_bytes() as f64 / index.len() as f64;
    println!("{label}: {per_key:.2} index bytes/key; {stats:?}");
}

fn lookups(c: &mut Criterion, d: &Data) {
    let index = AlexIndex::bulk_load(&d.sorted, &d.keys);
    report("after bulk_load", &index);
    let btree: BTreeMap<u64, u64> = d
        .nums
        .iter()
        .enumerate()
        .map(|(p, &n)| (n, p as u64))
        .collect();
    interleaved_ratio(d, &index, &btree);
    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    group.bench_function("alex_get_candidate", |b| {
        let guard = crossbeam_epoch::pin();
        b.iter(|| {
            for &p in &d.probes {
                black_box(index.get_candidate(&d.keys.0[p], &d.keys, &guard));
            }
        });
    });
    group.bench_function("btreemap_get", |b| {
        b.iter(|| {
            for &p in &d.probes {
                black_box(btree.get(&d.nums[p]));
            }
        });
    });
    group.finish();
}

/// Times ALEX and `BTreeMap` lookups in alternating rounds, so that both
/// see the same machine load, and prints the median per-lookup times and
/// the median of the per-round ratios.
fn interleaved_ratio(d: &Data, index: &AlexIndex, btree: &BTreeMap<u64, u64>) {
    const ROUNDS: usize = 21;
    let guard = crossbeam_epoch::pin();
    let (mut alex, mut tree, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for &p in &d.probes {
            black_box(index.get_candidate(&d.keys.0[p], &d.keys, &guard));
        }
        let a = start.elapsed().as_nanos() as f64 / LOOKUPS as f64;
        let start = Instant::now();
        for &p in &d.probes {
            black_box(btree.get(&d.nums[p]));
        }
        let b = start.elapsed().as_nanos() as f64 / LOOKUPS as f64;
        alex.push(a);
        tree.push(b);
        ratio.push(b / a);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "interleaved lookups ({ROUNDS} rounds, medians): alex {:.0} ns, btreemap {:.0} ns, \
         btreemap/alex {:.2}x",
        median(&mut alex),
        median(&mut tree),
        median(&mut ratio)
    );
}

/// Upserts all keys into a new index in random order, `BATCH` at a time.
fn batched(d: &Data) -> AlexIndex {
    batched_in_order(d, &(0..N as u64).collect::<Vec<_>>())
}

/// Upserts the keys of `payloads` into a new index, in that order, `BATCH`
/// at a time.
fn batched_in_order(d: &Data, payloads: &[u64]) -> AlexIndex {
    let index = AlexIndex::new();
    let mut batch = Vec::with_capacity(BATCH);
    for chunk in payloads.chunks(BATCH) {
        batch.clear();
        batch.extend(chunk.iter().map(|&p| (&d.keys.0[p as usize][..], p)));
        black_box(index.upsert_batch(&batch, &d.keys));
    }
    index
}

fn writes(c: &mut Criterion, d: &Data) {
    let start = Instant::now();
    let index = AlexIndex::new();
    for p in 0..N as u64 {
        index.upsert(&d.keys.0[p as usize], p, &d.keys);
    }
    let ns = start.elapsed().as_nanos() as f64 / N as f64;
    report(
        &format!("after {N} upserts ({ns:.0} ns/key, one run)"),
        &index,
    );
    drop(index);
    let start = Instant::now();
    let index = batched(d);
    let ns = start.elapsed().as_nanos() as f64 / N as f64;
    report(
        &format!("after {N} batched upserts ({ns:.0} ns/key, one run)"),
        &index,
    );
    drop(index);
    // Ascending keys: each batch of 1,000 falls into a handful of data nodes,
    // the case one copy per touched node is for.
    let start = Instant::now();
    let index = AlexIndex::new();
    for &p in &d.sorted {
        index.upsert(&d.keys.0[p as usize], p, &d.keys);
    }
    let single = start.elapsed().as_nanos() as f64 / N as f64;
    drop(index);
    let start = Instant::now();
    let index = batched_in_order(d, &d.sorted);
    let ns = start.elapsed().as_nanos() as f64 / N as f64;
    report(
        &format!(
            "after {N} ascending upserts: {single:.0} ns/key one by one, \
             {ns:.0} ns/key batched (one run each)"
        ),
        &index,
    );
    drop(index);
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("upsert_1m_random", |b| {
        b.iter_batched(
            AlexIndex::new,
            |index| {
                for p in 0..N as u64 {
                    index.upsert(&d.keys.0[p as usize], p, &d.keys);
                }
                index
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("upsert_batch_1m_random_by_1000", |b| {
        b.iter_batched(|| (), |()| batched(d), BatchSize::PerIteration);
    });
    group.bench_function("bulk_load_1m", |b| {
        b.iter(|| AlexIndex::bulk_load(&d.sorted, &d.keys));
    });
    group.finish();
}

/// Payload `p` is key `p`, of any length.
struct Strings(Vec<Vec<u8>>);

impl KeyResolver for Strings {
    fn key(&self, payload: u64) -> &[u8] {
        &self.0[payload as usize]
    }
}

/// Ascending keys upserted one by one (appends extend the root), and bulk
/// loading zero-padded decimal strings with a long shared prefix.
fn cliffs(c: &mut Criterion) {
    const SEQ: u64 = 200_000;
    let seq = Strings((0..SEQ).map(|i| (i * 3).to_be_bytes().to_vec()).collect());
    let decimal = Strings(
        (0..N)
            .map(|i| format!("user:profile:{i:012}").into_bytes())
            .collect(),
    );
    let sorted: Vec<u64> = (0..N as u64).collect();
    let mut group = c.benchmark_group("cliffs");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SEQ));
    group.bench_function("upsert_200k_sequential", |b| {
        b.iter_batched(
            AlexIndex::new,
            |index| {
                for p in 0..SEQ {
                    index.upsert(seq.key(p), p, &seq);
                }
                index
            },
            BatchSize::PerIteration,
        );
    });
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("bulk_load_1m_user_profile_decimal", |b| {
        b.iter(|| AlexIndex::bulk_load(&sorted, &decimal));
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    cliffs(c);
    let d = data();
    lookups(c, &d);
    writes(c, &d);
}

criterion_group!(index_benches, benches);
criterion_main!(index_benches);
