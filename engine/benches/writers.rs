//! Concurrent writers: 100,000 single-key puts (8-byte random keys,
//! 100-byte values, unsynced, then the same with every put synced on
//! 10,000 keys) written by one thread and split over four threads, into a
//! fresh database each time. Concurrent writes are grouped (one `pwrite`,
//! one `fdatasync` per group), so four writers should outrun one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use alexdb_engine::{Db, Options, WriteOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Puts `total` keys split over `threads` threads; returns the time taken.
fn timed_puts(threads: u64, total: u64, opts: WriteOptions) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        segment_bytes: 64 << 20,
        ..Options::default()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let ks = db.keyspace("default").unwrap();
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t + 1);
                for _ in 0..total / threads {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    db.put(ks, &x.to_be_bytes(), &[7u8; 100], &opts).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    started.elapsed()
}

fn writers(c: &mut Criterion) {
    for (name, total, opts) in [
        ("unsynced", 100_000, WriteOptions::default()),
        ("synced", 10_000, WriteOptions::synced()),
    ] {
        let mut g = c.benchmark_group(format!("puts_{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(total));
        for threads in [1, 4] {
            g.bench_function(format!("writers-{threads}"), |b| {
                b.iter_custom(|iters| (0..iters).map(|_| timed_puts(threads, total, opts)).sum())
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    targets = writers
}
criterion_main!(benches);
