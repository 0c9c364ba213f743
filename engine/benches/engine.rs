//! Engine benchmarks on 1M uniform random 8-byte keys (seed 42) with
//! 100-byte values, all in one run so they compare as ratios:
//! - zero-copy and copying `get` vs `BTreeMap<Vec<u8>, Vec<u8>>::get`;
//! - single puts and batched bulk load (1,000 per batch), ns per key;
//! - reopen time, index bytes per key (printed);
//! - read throughput with 1 and 2 reader threads, read latency while one
//!   writer writes continuously, and 80% get / 20% put mixed throughput;
//! - a range delete over 10 keys and over every key (one record each: the
//!   cost must not depend on the range).
//!
//! `ALEXDB_BENCH_KEYS` overrides the key count.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

fn key_count() -> usize {
    std::env::var("ALEXDB_BENCH_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// A small xorshift generator: reproducible keys without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn keys(n: usize) -> Vec<[u8; 8]> {
    let mut rng = Rng(42);
    (0..n).map(|_| rng.next().to_be_bytes()).collect()
}

fn value(i: usize) -> [u8; 100] {
    let mut v = [0u8; 100];
    v[..8].copy_from_slice(&(i as u64).to_le_bytes());
    v
}

fn load(db: &Db, ks: KeyspaceId, keys: &[[u8; 8]]) {
    for (c, chunk) in keys.chunks(1000).enumerate() {
        let mut b = WriteBatch::new();
        for (i, k) in chunk.iter().enumerate() {
            b.put(ks, k, &value(c * 1000 + i));
        }
        db.write(&b, &WriteOptions::default()).unwrap();
    }
}

fn options() -> Options {
    Options {
        segment_bytes: 64 << 20,
        ..Options::default()
    }
}

struct Fixture {
    db: Arc<Db>,
    /// After `db`: fields drop in order, and the directory must outlive the
    /// database (its close writes files there).
    _dir: tempfile::TempDir,
    ks: KeyspaceId,
    keys: Vec<[u8; 8]>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys(key_count());
    let started = Instant::now();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    load(&db, ks, &keys);
    let load_time = started.elapsed();
    let stats = db.stats();
    eprintln!(
        "setup: loaded {} keys in batches of 1000: {:.0} ns/key; index {:.1} bytes/key; data {} MiB",
        keys.len(),
        load_time.as_nanos() as f64 / keys.len() as f64,
        stats.index_bytes as f64 / stats.index_entries as f64,
        stats.data_bytes >> 20
    );
    drop(db);
    let started = Instant::now();
    let db = Db::open(dir.path(), options()).unwrap();
    eprintln!(
        "reopen of {} keys: {:.1} ms",
        keys.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    Fixture {
        _dir: dir,
        db: Arc::new(db),
        ks,
        keys,
    }
}

fn point_reads(c: &mut Criterion, f: &Fixture) {
    let model: BTreeMap<Vec<u8>, Vec<u8>> = f
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.to_vec(), value(i).to_vec()))
        .collect();
    let mut g = c.benchmark_group("get_1M_random");
    let mut rng = Rng(7);
    g.bench_function("alexdb_get_zero_copy", |b| {
        b.iter(|| {
            let k = &f.keys[(rng.next() % f.keys.len() as u64) as usize];
            black_box(f.db.get(f.ks, k).unwrap().unwrap()[0])
        })
    });
    g.bench_function("alexdb_get_copied", |b| {
        b.iter(|| {
            let k = &f.keys[(rng.next() % f.keys.len() as u64) as usize];
            black_box(f.db.get_copied(f.ks, k).unwrap())
        })
    });
    g.bench_function("alexdb_get_absent", |b| {
        b.iter(|| black_box(f.db.get(f.ks, &rng.next().to_le_bytes()).unwrap().is_none()))
    });
    g.bench_function("btreemap_vec_get", |b| {
        b.iter(|| {
            let k = &f.keys[(rng.next() % f.keys.len() as u64) as usize];
            black_box(model.get(&k[..]).unwrap()[0])
        })
    });
    g.finish();
}

fn writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("writes");
    g.sample_size(10);
    g.bench_function("put_single_unsynced", |b| {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        let mut rng = Rng(99);
        b.iter(|| {
            db.put(
                ks,
                &rng.next().to_be_bytes(),
                &[1u8; 100],
                &WriteOptions::default(),
            )
            .unwrap()
        })
    });
    g.bench_function("bulk_load_100k_batches_of_1000", |b| {
        let keys = keys(100_000);
        b.iter_batched(
            tempfile::tempdir,
            |dir| {
                let dir = dir.unwrap();
                let db = Db::open(dir.path(), options()).unwrap();
                let ks = db.keyspace("default").unwrap();
                load(&db, ks, &keys);
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Time for `ops` random gets split over `threads` threads, optionally
/// with one writer writing continuously.
fn timed_reads(f: &Fixture, threads: usize, ops: u64, with_writer: bool) -> Duration {
    let stop = Arc::new(AtomicBool::new(false));
    let writer = with_writer.then(|| {
        let (db, ks, stop) = (f.db.clone(), f.ks, stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(1234);
            while !stop.load(Ordering::Relaxed) {
                db.put(
                    ks,
                    &rng.next().to_be_bytes(),
                    &[3u8; 100],
                    &WriteOptions::default(),
                )
                .unwrap();
            }
        })
    });
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let keys = &f.keys;
            let (db, ks) = (&f.db, f.ks);
            s.spawn(move || {
                let mut rng = Rng(77 + t as u64);
                for _ in 0..ops / threads as u64 {
                    let k = &keys[(rng.next() % keys.len() as u64) as usize];
                    black_box(db.get(ks, k).unwrap().unwrap()[0]);
                }
            });
        }
    });
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    if let Some(w) = writer {
        w.join().unwrap();
    }
    elapsed
}

fn concurrency(c: &mut Criterion, f: &Fixture) {
    let mut g = c.benchmark_group("concurrency");
    g.sample_size(20);
    g.bench_function("get_1_thread", |b| {
        b.iter_custom(|n| timed_reads(f, 1, n, false))
    });
    g.bench_function("get_2_threads", |b| {
        b.iter_custom(|n| timed_reads(f, 2, n, false))
    });
    g.bench_function("get_1_thread_with_writer", |b| {
        b.iter_custom(|n| timed_reads(f, 1, n, true))
    });
    g.bench_function("mixed_80_get_20_put", |b| {
        let mut rng = Rng(5);
        b.iter(|| {
            let r = rng.next();
            let k = &f.keys[(r % f.keys.len() as u64) as usize];
            if r.is_multiple_of(5) {
                f.db.put(f.ks, k, &[9u8; 100], &WriteOptions::default())
                    .unwrap();
            } else {
                black_box(f.db.get(f.ks, k).unwrap().unwrap()[0]);
            }
        })
    });
    g.finish();
}

/// A range delete of the first `span` keys (in key order) of a copy of the
/// fixture's database, fresh for every iteration.
fn range_deletes(c: &mut Criterion, f: &Fixture) {
    let mut sorted = f.keys.clone();
    sorted.sort_unstable();
    let template = tempfile::tempdir().unwrap();
    {
        let db = Db::open(template.path(), options()).unwrap();
        load(&db, f.ks, &f.keys);
    }
    let mut g = c.benchmark_group("range_delete");
    g.sample_size(10);
    for span in [10, sorted.len()] {
        let end = sorted.get(span).map_or(vec![0xFF; 9], |k| k.to_vec());
        let start = sorted[0];
        g.bench_function(format!("over_{span}_keys"), |b| {
            b.iter_batched(
                || copy_of(template.path()),
                |(dir, db)| {
                    let mut batch = WriteBatch::new();
                    batch.delete_range(f.ks, &start, &end);
                    db.write(&batch, &WriteOptions::default()).unwrap();
                    (dir, db)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// A copy of the database directory `from`, opened without background
/// compaction.
fn copy_of(from: &std::path::Path) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != alexdb_engine::LOCK_FILE {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    let opts = Options {
        background_compaction: false,
        ..options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    (dir, db)
}

fn benches(c: &mut Criterion) {
    let f = fixture();
    point_reads(c, &f);
    concurrency(c, &f);
    range_deletes(c, &f);
    writes(c);
}

criterion_group! {
    name = engine;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(engine);
