//! `optimistic-txn`: read-modify-write of one key per transaction.

use std::hint::black_box;
use std::time::Instant;

use super::Timed;
use super::point::{expect_count, per};
use crate::engines::ReadModifyWrite;
use crate::error::Result;
use crate::keys::DataSet;
use crate::latency::Recorder;

/// One transaction per key of `order`: read it for update, write a new
/// value, commit; nanoseconds per transaction and the latency of each.
pub fn read_modify_write(
    store: &mut dyn ReadModifyWrite,
    data: &DataSet,
    order: &[u32],
) -> Result<Timed> {
    let mut sum = 0u64;
    let mut found = 0usize;
    let probes = data.present.gather(order);
    let start = Instant::now();
    let mut latency = Recorder::start(order.len());
    for (n, (&i, key)) in order.iter().zip(probes.iter()).enumerate() {
        if let Some(t) = store.read_modify_write(key, data.value(i as usize, 3 + n))? {
            sum = sum.wrapping_add(t);
            found += 1;
        }
        latency.tick();
    }
    let ns = per(start, order.len());
    black_box(sum);
    expect_count("present keys read", found, order.len())?;
    Ok(Timed::with(ns, "transaction", latency))
}
