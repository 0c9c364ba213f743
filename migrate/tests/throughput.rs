//! `copy` throughput with 100-byte values, and that of converting the same
//! database in place by opening it with `alexdb` (the numbers in the
//! README). Ignored by default; run them with
//! `cargo test --release -p alexdb-migrate --test throughput -- --ignored --nocapture --test-threads=1`
//! (`ALEXDB_MIGRATE_BENCH_KEYS` sets the key count, default 1,000,000).

mod common;

use std::time::Instant;

use alexdb_migrate::copy::{CopyConfig, copy};
use alexdb_migrate::progress::Observer;
use rocksdb::{DB, Options, WriteBatch};

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn copy_throughput_with_100_byte_values() {
    let keys = bench_keys();
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    write_rocksdb(&rocks, keys);
    let config = CopyConfig {
        from: rocks,
        to: dir.path().join("alex"),
        ..CopyConfig::default()
    };
    let started = Instant::now();
    let mut clock = CpuClock::default();
    let report = copy(&config, &mut clock).unwrap();
    let total = started.elapsed().as_secs_f64();
    assert!(report.verification.identical);
    println!(
        "copy of {keys} keys with 100-byte values: copy phase {:.2} s = {:.0} keys/s ({:.1} MiB/s); \
         verification {:.2} s; whole command {:.2} s = {:.0} keys/s",
        report.copy_seconds,
        report.keys_per_second,
        report.bytes_per_second / (1 << 20) as f64,
        report.verify_seconds,
        total,
        keys as f64 / total
    );
    let cpu = clock.copy_cpu_seconds();
    println!(
        "CPU time of the copying thread during the copy phase: {cpu:.2} s = {:.0} keys per CPU-second \
         (what an idle core would give; this machine is shared, load average {})",
        keys as f64 / cpu,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}

/// Converts a RocksDB database in place (an `alexdb` open with
/// `set_convert_rocksdb`), timed from the open call until it returns.
#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn convert_in_place_throughput_with_100_byte_values() {
    let keys = bench_keys();
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    write_rocksdb(&rocks, keys);
    let bytes: u64 = std::fs::read_dir(&rocks)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let mut opts = alexdb::Options::default();
    opts.set_convert_rocksdb(true);
    let started = Instant::now();
    let db = alexdb::DB::open(&opts, &rocks).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(
        db.get(format!("user:{:012}", keys - 1))
            .unwrap()
            .map(|v| v.len()),
        Some(100)
    );
    println!(
        "conversion in place of {keys} keys with 100-byte values ({:.1} MiB of RocksDB files, \
         read, written, read back and compared): {seconds:.2} s = {:.0} keys/s \
         ({:.1} MiB/s of RocksDB files; load average {})",
        bytes as f64 / (1 << 20) as f64,
        keys as f64 / seconds,
        bytes as f64 / (1 << 20) as f64 / seconds,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}

/// The key count: `ALEXDB_MIGRATE_BENCH_KEYS`, default 1,000,000.
fn bench_keys() -> u64 {
    std::env::var("ALEXDB_MIGRATE_BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000)
}

/// A flushed RocksDB database at `path` of `keys` keys with random
/// 100-byte values.
fn write_rocksdb(path: &std::path::Path, keys: u64) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open(&opts, path).unwrap();
    let mut rng = common::Rng::new(1);
    let mut batch = WriteBatch::default();
    for i in 0..keys {
        batch.put(format!("user:{i:012}"), rng.bytes(100));
        if batch.len() == 10_000 {
            db.write(std::mem::take(&mut batch)).unwrap();
        }
    }
    db.write(batch).unwrap();
    db.flush().unwrap();
}

/// Records the calling thread's CPU time when copying starts and when
/// verification starts.
#[derive(Default)]
struct CpuClock {
    start: f64,
    end: Option<f64>,
}

impl CpuClock {
    fn copy_cpu_seconds(&self) -> f64 {
        self.end.unwrap_or_else(thread_cpu) - self.start
    }
}

impl Observer for CpuClock {
    fn started(&mut self, _estimated_keys: u64) {
        self.start = thread_cpu();
    }

    fn verifying(&mut self, _family: &str) {
        self.end.get_or_insert_with(thread_cpu);
    }
}

/// CPU seconds used by the calling thread.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, exclusively borrowed timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
