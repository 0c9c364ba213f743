//! The threaded workloads: two readers at once, reads beside a writer,
//! several writers at once. They run through the engine's
//! [`SharedAccess`] handle.

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::Timed;
use super::point::{expect_count, per};
use crate::engines::SharedAccess;
use crate::error::{BenchError, Result};
use crate::keys::{DataSet, Keys};
use crate::latency::Recorder;

/// Gets `probes` (present keys); the number found and their latencies.
fn read_all(shared: &dyn SharedAccess, probes: &Keys) -> Result<(usize, Recorder)> {
    let mut latency = Recorder::start(probes.len());
    let mut found = 0;
    let mut sum = 0u64;
    for key in probes.iter() {
        if let Some(t) = shared.get(key)? {
            sum = sum.wrapping_add(t);
            found += 1;
        }
        latency.tick();
    }
    black_box(sum);
    Ok((found, latency))
}

/// Overwrites `order`'s keys, gathered in `probes`, with single puts
/// (value version `version`); their latencies.
fn write_all(
    shared: &dyn SharedAccess,
    data: &DataSet,
    (order, probes): (&[u32], &Keys),
    version: usize,
) -> Result<Recorder> {
    let mut latency = Recorder::start(order.len());
    for (&i, key) in order.iter().zip(probes.iter()) {
        shared.put(key, data.value(i as usize, version))?;
        latency.tick();
    }
    Ok(latency)
}

fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    handle
        .join()
        .map_err(|_| BenchError::from("a workload thread panicked"))?
}

/// Every order read by its own thread, all at once; nanoseconds of wall
/// time per get of all threads.
pub fn get_two_readers(
    shared: &dyn SharedAccess,
    data: &DataSet,
    orders: &[Vec<u32>],
) -> Result<Timed> {
    let total: usize = orders.iter().map(Vec::len).sum();
    let probes: Vec<Keys> = orders.iter().map(|o| data.present.gather(o)).collect();
    let start = Instant::now();
    let results: Vec<Result<(usize, Recorder)>> = std::thread::scope(|s| {
        let handles: Vec<_> = probes
            .iter()
            .map(|probes| s.spawn(move || read_all(shared, probes)))
            .collect();
        handles.into_iter().map(joined).collect()
    });
    let ns = per(start, total);
    let mut latency = Recorder::start(0);
    let mut found = 0;
    for result in results {
        let (f, l) = result?;
        found += f;
        latency.merge(l);
    }
    expect_count("present keys found", found, total)?;
    Ok(Timed::with(ns, "get", latency))
}

/// Gets `order`'s keys while another thread keeps overwriting `writes`'
/// keys (round after round) until the reads are done; nanoseconds per get.
pub fn get_with_writer(
    shared: &dyn SharedAccess,
    data: &DataSet,
    order: &[u32],
    writes: &[u32],
) -> Result<Timed> {
    let done = AtomicBool::new(false);
    let probes = data.present.gather(order);
    let written_keys = data.present.gather(writes);
    let (read, written) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut latency = Recorder::start(order.len());
            let rounds = writes.iter().zip(written_keys.iter()).cycle();
            for (n, (&i, key)) in rounds.enumerate() {
                if n % 64 == 0 && done.load(Ordering::Relaxed) {
                    break;
                }
                shared.put(key, data.value(i as usize, 2 + n))?;
                latency.tick();
            }
            Ok(latency)
        });
        let start = Instant::now();
        let read = read_all(shared, &probes).map(|r| (per(start, order.len()), r));
        done.store(true, Ordering::Relaxed);
        (read, joined(writer))
    });
    let (ns, (found, gets)) = read?;
    let puts = written?;
    expect_count("present keys found", found, order.len())?;
    let mut timed = Timed::with(ns, "get", gets);
    timed.latency.extend(Timed::with(ns, "put", puts).latency);
    Ok(timed)
}

/// Every order written by its own thread, all released at once;
/// nanoseconds of wall time per put of all threads.
pub fn writers(shared: &dyn SharedAccess, data: &DataSet, orders: &[Vec<u32>]) -> Result<Timed> {
    let total: usize = orders.iter().map(Vec::len).sum();
    let gate = Barrier::new(orders.len() + 1);
    let (ns, results) = std::thread::scope(|s| {
        let handles: Vec<_> = orders
            .iter()
            .enumerate()
            .map(|(t, order)| {
                let gate = &gate;
                s.spawn(move || {
                    let probes = data.present.gather(order);
                    gate.wait();
                    write_all(shared, data, (order, &probes), 2 + t)
                })
            })
            .collect();
        gate.wait();
        let start = Instant::now();
        let results: Vec<Result<Recorder>> = handles.into_iter().map(joined).collect();
        (per(start, total), results)
    });
    let mut latency = Recorder::start(0);
    for result in results {
        latency.merge(result?);
    }
    Ok(Timed::with(ns, "put", latency))
}
