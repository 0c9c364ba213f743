//! The single-threaded timed loops: load, point gets, mixed, seeks, scans.

use std::hint::black_box;
use std::time::Instant;

use super::{BATCH, MIXED_WRITE_PERCENT, NEXTS, Timed};
use crate::engines::Engine;
use crate::error::{BenchError, Result};
use crate::keys::DataSet;
use crate::latency::Recorder;

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
/// nanoseconds per get and the latency of each.
pub fn get_present<E: Engine>(
    engine: &mut E,
    data: &DataSet,
    order: &[u32],
    pinned: bool,
) -> Result<Timed> {
    let mut sum = 0u64;
    let mut found = 0usize;
    let probes = data.present.gather(order);
    let start = Instant::now();
    let mut latency = Recorder::start(order.len());
    for key in probes.iter() {
        let got = if pinned {
            engine.get_pinned(key)?
        } else {
            engine.get(key)?
        };
        latency.tick();
        if let Some(t) = got {
            sum = sum.wrapping_add(t);
            found += 1;
        }
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys found", found, order.len())?;
    Ok(Timed::with(ns, "get", latency))
}

/// Keys of one multi-get in `multi-get`.
const MULTI_GET_KEYS: usize = 32;

/// Reads `order`'s present keys [`MULTI_GET_KEYS`] at a time with the
/// engine's multi-get; nanoseconds per key and the latency of each call.
pub fn multi_get<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<Timed> {
    let mut sum = 0u64;
    let mut found = 0usize;
    let mut keys: Vec<&[u8]> = Vec::with_capacity(MULTI_GET_KEYS);
    let probes = data.present.gather(order);
    let mut probes = probes.iter();
    let start = Instant::now();
    let mut latency = Recorder::start(order.len().div_ceil(MULTI_GET_KEYS));
    for batch in order.chunks(MULTI_GET_KEYS) {
        keys.clear();
        keys.extend(probes.by_ref().take(batch.len()));
        let (touched, hits) = engine.multi_get(&keys)?;
        latency.tick();
        sum = sum.wrapping_add(touched);
        found += hits;
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys found", found, order.len())?;
    Ok(Timed::with(ns, "multi-get", latency))
}

/// Gets absent keys; nanoseconds per get and the latency of each.
pub fn get_absent<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<Timed> {
    let mut found = 0usize;
    let probes = data.absent.gather(order);
    let start = Instant::now();
    let mut latency = Recorder::start(order.len());
    for key in probes.iter() {
        found += usize::from(engine.get(key)?.is_some());
        latency.tick();
    }
    let ns = per(start, order.len());
    expect_count("absent keys found", found, 0)?;
    Ok(Timed::with(ns, "get", latency))
}

/// 80% copying gets / 20% overwrites of `order`'s keys (the op kind is
/// decided by the position, so every engine runs the same sequence);
/// nanoseconds per operation and the latency of gets and puts apart.
pub fn mixed<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<Timed> {
    let mut sum = 0u64;
    let mut missed = 0usize;
    let probes = data.present.gather(order);
    let start = Instant::now();
    let mut clock = Recorder::start(0);
    let mut gets = Recorder::start(order.len());
    let mut puts = Recorder::start(order.len() / 4);
    for (n, (&i, key)) in order.iter().zip(probes.iter()).enumerate() {
        let i = i as usize;
        if is_mixed_write(n) {
            engine.put(key, data.value(i, 1 + n))?;
            puts.push(clock.lap());
        } else {
            match engine.get(key)? {
                Some(t) => sum = sum.wrapping_add(t),
                None => missed += 1,
            }
            gets.push(clock.lap());
        }
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys missed", missed, 0)?;
    let mut timed = Timed::with(ns, "get", gets);
    timed.latency.extend(Timed::with(ns, "put", puts).latency);
    Ok(timed)
}

/// Whether operation `n` of the mixed workload is a write.
pub fn is_mixed_write(n: usize) -> bool {
    (n as u64 * 7919) % 100 < MIXED_WRITE_PERCENT
}

/// Seeks to `order`'s keys and reads [`NEXTS`] more entries after each;
/// nanoseconds per seek (with its nexts).
pub fn seek10<E: Engine>(engine: &mut E, data: &DataSet, order: &[u32]) -> Result<f64> {
    let mut sum = 0u64;
    let mut short = 0usize;
    let probes = data.present.gather(order);
    let start = Instant::now();
    for key in probes.iter() {
        let (t, seen) = engine.seek_next(key, NEXTS)?;
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

pub(crate) fn per(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

pub(crate) fn expect_count(what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(BenchError(format!("{what}: {got}, expected {want}")))
    }
}
