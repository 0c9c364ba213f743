//! `flood`: one writer overwriting loaded keys as fast as it can, for
//! several times the data, and the disk that holds when it stops: how an
//! engine's compaction keeps up with (or holds back) a writer that never
//! pauses.

use std::time::Instant;

use super::BATCH;
use super::point::per;
use crate::engines::Engine;
use crate::error::Result;
use crate::keys::{DataSet, uniform_order};

/// Overwrites per loaded key, on average.
const FLOOD_ROUNDS: usize = 3;

/// The value version `flood` writes (the load wrote version 0).
const FLOOD_VERSION: usize = 6;

/// Overwrites [`FLOOD_ROUNDS`] × the key count of uniform random loaded
/// keys, in batches of [`BATCH`] (no sync); nanoseconds per key.
pub fn flood<E: Engine>(engine: &mut E, data: &DataSet) -> Result<f64> {
    let n = data.present.len();
    let order = uniform_order(n, n * FLOOD_ROUNDS, 30);
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::with_capacity(BATCH);
    let start = Instant::now();
    for chunk in order.chunks(BATCH) {
        pairs.clear();
        for &i in chunk {
            let i = i as usize;
            pairs.push((data.present.get(i), data.value(i, FLOOD_VERSION)));
        }
        engine.write_batch(&pairs)?;
    }
    Ok(per(start, order.len()))
}
