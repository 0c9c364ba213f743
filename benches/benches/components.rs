//! Criterion benches of the components the side-by-side runner does not
//! isolate (the engine's own `get`/`put` and index benches live in
//! `engine/benches/`): the drop-in `alexdb` crate's `get` and `get_pinned`
//! against the real `rocksdb` crate's, seek + 10 through `raw_iterator`,
//! and the engine's cursor scan. 100K uniform random 8-byte keys (seed 42),
//! 100-byte values; `ALEXDB_BENCH_KEYS` overrides the key count.

use std::hint::black_box;

use alexdb_engine::{Db, KeyRange, Options, WriteBatch, WriteOptions};
use criterion::{Criterion, criterion_group, criterion_main};

fn key_count() -> usize {
    std::env::var("ALEXDB_BENCH_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn keys(n: usize) -> Vec<[u8; 8]> {
    let mut x = 42u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_be_bytes()
        })
        .collect()
}

fn value(i: usize) -> [u8; 100] {
    let mut v = [7u8; 100];
    v[..8].copy_from_slice(&(i as u64).to_be_bytes());
    v
}

/// Benches one crate with the `rocksdb` API: `$krate` is `alexdb` or `rocksdb`.
macro_rules! rocks_api_group {
    ($c:expr, $krate:ident, $keys:expr) => {{
        let dir = tempfile::tempdir().unwrap();
        let db = $krate::DB::open_default(dir.path()).unwrap();
        for (c, chunk) in $keys.chunks(1000).enumerate() {
            let mut batch = $krate::WriteBatch::default();
            for (i, k) in chunk.iter().enumerate() {
                batch.put(k, value(c * 1000 + i));
            }
            db.write(batch).unwrap();
        }
        let mut g = $c.benchmark_group(concat!(stringify!($krate), "_api"));
        let mut i = 0usize;
        g.bench_function("get", |b| {
            b.iter(|| {
                i = (i + 7919) % $keys.len();
                black_box(db.get($keys[i]).unwrap())
            })
        });
        g.bench_function("get_pinned", |b| {
            b.iter(|| {
                i = (i + 7919) % $keys.len();
                black_box(db.get_pinned($keys[i]).unwrap().map(|v| v.len()))
            })
        });
        g.bench_function("seek_plus_10", |b| {
            b.iter(|| {
                i = (i + 7919) % $keys.len();
                let mut it = db.raw_iterator();
                it.seek($keys[i]);
                let mut n = 0;
                while n < 11 && it.valid() {
                    n += it.value().map_or(0, |v| v.len());
                    it.next();
                }
                black_box(n)
            })
        });
        g.finish();
    }};
}

fn compat_vs_rocksdb(c: &mut Criterion) {
    let keys = keys(key_count());
    rocks_api_group!(c, alexdb, keys);
    rocks_api_group!(c, rocksdb, keys);
}

fn engine_scan(c: &mut Criterion) {
    let keys = keys(key_count());
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("default").unwrap();
    for (c, chunk) in keys.chunks(1000).enumerate() {
        let mut batch = WriteBatch::new();
        for (i, k) in chunk.iter().enumerate() {
            batch.put(ks, k, &value(c * 1000 + i));
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }
    c.bench_function("engine_cursor_full_scan", |b| {
        b.iter(|| {
            let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
            cursor.seek_to_first();
            let mut n = 0usize;
            while let Some(e) = cursor.entry() {
                n += e.value().len();
                cursor.forward();
            }
            black_box(n)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = compat_vs_rocksdb, engine_scan
}
criterion_main!(benches);
