//! The workloads: what each one does to an engine and how it is timed.
//!
//! Timed loops read their keys from pre-generated access orders, so the
//! random number generator is never inside a timed region. Every loop
//! checks its results (every present key found, every absent key missed,
//! every entry scanned), so a broken engine cannot look fast.

use std::hint::black_box;
use std::time::Instant;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::engines::Engine;
use crate::error::{BenchError, Result};
use crate::keys::DataSet;

/// Keys per write batch in the bulk load.
pub const BATCH: usize = 1_000;
/// Entries read after each seek (besides the one sought).
pub const NEXTS: usize = 10;
/// Share of writes in the mixed workload, in percent.
pub const MIXED_WRITE_PERCENT: u64 = 20;

/// One measured figure of a run.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Bulk load in batches of 1,000, per key.
    Load,
    /// Close and open again after the load.
    Reopen,
    /// Random point get of present keys, copying the value out.
    Get,
    /// Random point get of present keys without copying.
    GetPinned,
    /// Point get of keys that are not there.
    GetAbsent,
    /// Point get (copying) of present keys, Zipfian access (theta 0.99).
    GetZipf,
    /// 80% get (copying) / 20% overwrite of random present keys.
    Mixed,
    /// Seek to a random present key and read it and the 10 next entries.
    Seek10,
    /// Full ordered scan, per entry.
    Scan,
    /// Allocated disk blocks after the reopen.
    DiskBytes,
    /// Peak resident memory of the process (VmHWM).
    PeakRss,
    /// Bytes of the in-memory index per key.
    IndexBytes,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 12] = [
        Workload::Load,
        Workload::Get,
        Workload::GetPinned,
        Workload::GetAbsent,
        Workload::GetZipf,
        Workload::Mixed,
        Workload::Seek10,
        Workload::Scan,
        Workload::Reopen,
        Workload::DiskBytes,
        Workload::PeakRss,
        Workload::IndexBytes,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Load => "load",
            Workload::Reopen => "reopen",
            Workload::Get => "get",
            Workload::GetPinned => "get-pinned",
            Workload::GetAbsent => "get-absent",
            Workload::GetZipf => "get-zipf",
            Workload::Mixed => "mixed",
            Workload::Seek10 => "seek10",
            Workload::Scan => "scan",
            Workload::DiskBytes => "disk-bytes",
            Workload::PeakRss => "peak-rss",
            Workload::IndexBytes => "index-bytes",
        }
    }

    /// The unit of the figure.
    pub fn unit(self) -> Unit {
        match self {
            Workload::Load => Unit::NanosPerKey,
            Workload::Reopen => Unit::Millis,
            Workload::Scan => Unit::NanosPerEntry,
            Workload::DiskBytes | Workload::PeakRss => Unit::MiB,
            Workload::IndexBytes => Unit::BytesPerKey,
            _ => Unit::NanosPerOp,
        }
    }

    /// What the workload does, for the report.
    pub fn description(self) -> &'static str {
        match self {
            Workload::Load => "bulk load in batches of 1,000 (no sync), per key",
            Workload::Reopen => "close, then open again after the load (recovery included)",
            Workload::Get => "random get of present keys, value copied into an owned buffer",
            Workload::GetPinned => "random get of present keys, value read in place (zero-copy)",
            Workload::GetAbsent => "get of keys never written (same distribution)",
            Workload::GetZipf => "copying get of present keys, Zipfian access (theta 0.99)",
            Workload::Mixed => "80% copying get / 20% overwrite (single put, no sync), uniform",
            Workload::Seek10 => "seek to a random present key, read it and the next 10 entries",
            Workload::Scan => "full ordered scan of every entry, per entry",
            Workload::DiskBytes => "allocated disk blocks of the store after the reopen",
            Workload::PeakRss => "peak resident set (VmHWM) of the engine's process",
            Workload::IndexBytes => {
                "bytes of the in-memory index per key, after the reopen (see below)"
            }
        }
    }

    /// Whether the figure is a time per operation (charted as latency).
    pub fn is_latency(self) -> bool {
        matches!(
            self.unit(),
            Unit::NanosPerKey | Unit::NanosPerOp | Unit::NanosPerEntry
        )
    }
}

/// Units of the figures; smaller is better for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds per key loaded.
    NanosPerKey,
    /// Nanoseconds per operation.
    NanosPerOp,
    /// Nanoseconds per entry visited.
    NanosPerEntry,
    /// Milliseconds.
    Millis,
    /// Mebibytes.
    MiB,
    /// Bytes per key.
    BytesPerKey,
}

/// Loads every present key in batches of [`BATCH`]; nanoseconds per key.
pub fn load<E: Engine>(engine: &mut E, data: &DataSet) -> Result<f64> {
    let n = data.present.len();
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::with_capacity(BATCH);
    let start = Instant::now();
    for chunk_start in (0..n).step_by(BATCH) {
        pairs.clear();
        for i in chunk_start..(chunk_start + BATCH).min(n) {
            pairs.push((data.present.get(i), data.value(i, 0)));
        }
        engine.write_batch(&pairs)?;
    }
    Ok(per(start, n))
}

/// Gets `order`'s present keys (copying, or in place with `pinned`);
/// nanoseconds per get.
pub fn get_present<E: Engine>(
    engine: &mut E,
    data: &DataSet,
    order: &[u32],
    pinned: bool,
) -> Result<f64> {
    let mut sum = 0u64;
    let mut found = 0usize;
    let start = Instant::now();
    for &i in order {
        let key = data.present.get(i as usize);
        let got = if pinned {
            engine.get_pinned(key)?
        } else {
            engine.get(key)?
        };
        if let Some(t) = got {
            sum = sum.wrapping_add(t);
            found += 1;
        }
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys found", found, order.len())?;
    Ok(ns)
}

/// Gets absent keys; nanoseconds per get.
pub fn get_absent<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<f64> {
    let mut found = 0usize;
    let start = Instant::now();
    for &i in order {
        found += usize::from(engine.get(data.absent.get(i as usize))?.is_some());
    }
    let ns = per(start, order.len());
    expect_count("absent keys found", found, 0)?;
    Ok(ns)
}

/// 80% copying gets / 20% overwrites of `order`'s keys (the op kind is
/// decided by the position, so every engine runs the same sequence);
/// nanoseconds per operation.
pub fn mixed<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<f64> {
    let mut sum = 0u64;
    let mut missed = 0usize;
    let start = Instant::now();
    for (n, &i) in order.iter().enumerate() {
        let i = i as usize;
        let key = data.present.get(i);
        if (n as u64 * 7919) % 100 < MIXED_WRITE_PERCENT {
            engine.put(key, data.value(i, 1 + n))?;
        } else {
            match engine.get(key)? {
                Some(t) => sum = sum.wrapping_add(t),
                None => missed += 1,
            }
        }
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys missed", missed, 0)?;
    Ok(ns)
}

/// Seeks to `order`'s keys and reads [`NEXTS`] more entries after each;
/// nanoseconds per seek (with its nexts).
pub fn seek10<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<f64> {
    let mut sum = 0u64;
    let mut short = 0usize;
    let start = Instant::now();
    for &i in order {
        let (t, seen) = engine.seek_next(data.present.get(i as usize), NEXTS)?;
        sum = sum.wrapping_add(t);
        short += usize::from(seen == 0);
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("seeks that found nothing", short, 0)?;
    Ok(ns)
}

/// Scans every entry in order; nanoseconds per entry.
pub fn scan<E: Engine>(engine: &mut E, n: usize) -> Result<f64> {
    let start = Instant::now();
    let (sum, seen) = engine.scan()?;
    let ns = per(start, seen.max(1));
    black_box(sum);
    expect_count("entries scanned", seen, n)?;
    Ok(ns)
}

fn per(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

fn expect_count(what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(BenchError(format!("{what}: {got}, expected {want}")))
    }
}
