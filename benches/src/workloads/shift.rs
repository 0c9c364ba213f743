//! `hot-range`: a shift of new keys into one narrow key range.

use std::time::Instant;

use super::Timed;
use super::point::{expect_count, per};
use crate::engines::Engine;
use crate::error::Result;
use crate::keys::{DataSet, Keys};
use crate::latency::Recorder;

/// Puts every key of `hot` (new keys, all in one narrow range) one by one;
/// nanoseconds per put and the latency of each (its `max` is the longest
/// put). Checks afterwards that every new key reads back.
pub fn hot_range<E: Engine>(engine: &mut E, data: &DataSet, hot: &Keys) -> Result<Timed> {
    let start = Instant::now();
    let mut latency = Recorder::start(hot.len());
    for i in 0..hot.len() {
        engine.put(hot.get(i), data.value(i, 4))?;
        latency.tick();
    }
    let ns = per(start, hot.len());
    let mut found = 0;
    for i in (0..hot.len()).step_by(97) {
        found += usize::from(engine.get(hot.get(i))?.is_some());
    }
    expect_count("new keys read back", found, hot.len().div_ceil(97))?;
    Ok(Timed::with(ns, "put", latency))
}
