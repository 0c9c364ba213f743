//! Full-scan throughput of this reader against the rocksdb crate's
//! iterator on the same directory. Ignored by default; run it with
//! `cargo test --release -p alexdb-rocksdb-format --test read_throughput -- --ignored --nocapture`
//! (`ROCKSDB_FORMAT_BENCH_KEYS` sets the key count, default 1,000,000).
//! Under the `ci` profile RocksDB itself is built unoptimized, so compare
//! the two only in a release build.

use std::time::Instant;

use alexdb_rocksdb_format::RocksDir;
use rocksdb::{DB, IteratorMode, Options, WriteBatch};

fn directory_bytes(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn full_scan_throughput_with_100_byte_values() {
    let keys: u64 = std::env::var("ROCKSDB_FORMAT_BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).unwrap();
        let mut batch = WriteBatch::default();
        for i in 0..keys {
            let value: Vec<u8> = (0..100u64)
                .map(|j| (i.wrapping_mul(31) ^ j) as u8)
                .collect();
            batch.put(format!("user:{i:012}"), value);
            if batch.len() == 10_000 {
                db.write(std::mem::take(&mut batch)).unwrap();
            }
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
    }
    let logical = keys * (17 + 100);
    let on_disk = directory_bytes(dir.path());

    let start = Instant::now();
    let ours = RocksDir::open(dir.path()).unwrap();
    let n = ours.iter("default", None).unwrap().fold(0, |n, r| {
        r.unwrap();
        n + 1
    });
    let ours_secs = start.elapsed().as_secs_f64();
    assert_eq!(n as u64, keys);

    let start = Instant::now();
    let db = DB::open_for_read_only(&Options::default(), dir.path(), false).unwrap();
    let m = db.iterator(IteratorMode::Start).fold(0, |n, r| {
        r.unwrap();
        n + 1
    });
    let rocks_secs = start.elapsed().as_secs_f64();
    assert_eq!(m as u64, keys);

    let mb = logical as f64 / 1e6;
    println!(
        "{keys} keys, {mb:.0} MB of keys and values, {:.0} MB on disk: \
         rocksdb-format {:.0} MB/s ({ours_secs:.2} s), librocksdb {:.0} MB/s ({rocks_secs:.2} s)",
        on_disk as f64 / 1e6,
        mb / ours_secs,
        mb / rocks_secs
    );
}
