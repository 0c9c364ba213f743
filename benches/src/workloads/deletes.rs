//! `delete-range` and `delete-heavy`: giving keys back.

use std::time::Instant;

use super::point::{expect_count, per};
use super::{BATCH, Timed};
use crate::engines::Engine;
use crate::error::Result;
use crate::keys::DataSet;
use crate::latency::Recorder;

/// Fewest and most ranges of each size `delete-range` deletes: as many as
/// fit twice over in the first half of the keys, so that a few slow ones
/// (a compaction waking up) do not make the figure.
pub const MIN_RANGES: usize = 10;
/// See [`MIN_RANGES`].
pub const MAX_RANGES: usize = 100;
/// Keys per range of `delete-range` (fewer at small scales).
pub const RANGE_KEYS: usize = 10_000;
/// Keys per range of `delete-range-10`.
pub const SMALL_RANGE_KEYS: usize = 10;

/// Where `delete-range` deletes: disjoint runs of keys in key order, all in
/// the first half of the key space.
#[derive(Clone, Copy, Debug)]
pub struct RangePlan {
    /// Keys per large range.
    pub span: usize,
    /// Ranges of each size.
    pub ranges: usize,
    stride: usize,
}

impl RangePlan {
    /// The plan for `n` keys: large ranges of [`RANGE_KEYS`] (at most a
    /// 40th of the keys) and as many of [`SMALL_RANGE_KEYS`], between
    /// [`MIN_RANGES`] and [`MAX_RANGES`] of each.
    pub fn new(n: usize) -> RangePlan {
        let span = RANGE_KEYS.min(n / 40).max(1);
        let ranges = (n / 2 / (2 * span)).clamp(MIN_RANGES, MAX_RANGES);
        RangePlan {
            span,
            ranges,
            stride: (n / 2 / ranges).max(1),
        }
    }

    /// Sorted positions `[start, end)` of range `r`, large or small.
    fn range(&self, r: usize, small: bool) -> (usize, usize) {
        let base = r * self.stride;
        if small {
            let start = base + self.stride * 3 / 4;
            (start, start + SMALL_RANGE_KEYS)
        } else {
            (base, base + self.span)
        }
    }
}

/// Deletes the plan's large ranges, then its small ones; nanoseconds per
/// range of each size. Marks the deleted keys in `gone` (by load index) and
/// checks that each range's first key is gone and the key after it is not.
pub fn delete_ranges<E: Engine>(
    engine: &mut E,
    data: &DataSet,
    sorted: &[u32],
    plan: RangePlan,
    gone: &mut [bool],
) -> Result<(Timed, Timed)> {
    let mut figures = Vec::new();
    for small in [false, true] {
        let start = Instant::now();
        let mut recorder = Recorder::start(plan.ranges);
        for r in 0..plan.ranges {
            let (a, b) = plan.range(r, small);
            let key = |p: usize| data.present.get(sorted[p] as usize);
            engine.delete_range(key(a), key(b))?;
            recorder.tick();
        }
        let per_range = per(start, plan.ranges);
        figures.push(Timed::with(per_range, "range delete", recorder));
        let mut wrong = 0;
        for r in 0..plan.ranges {
            let (a, b) = plan.range(r, small);
            sorted[a..b].iter().for_each(|&i| gone[i as usize] = true);
            wrong += usize::from(engine.get(data.present.get(sorted[a] as usize))?.is_some());
            wrong += usize::from(engine.get(data.present.get(sorted[b] as usize))?.is_none());
        }
        expect_count("range ends read wrong", wrong, 0)?;
    }
    let small = figures.pop().unwrap_or_else(|| Timed::plain(0.0));
    let large = figures.pop().unwrap_or_else(|| Timed::plain(0.0));
    Ok((large, small))
}

/// Deletes every other loaded key (even load index) in batches of
/// [`BATCH`]; nanoseconds per key. Marks them in `gone` and checks a sample.
pub fn delete_heavy<E: Engine>(engine: &mut E, data: &DataSet, gone: &mut [bool]) -> Result<f64> {
    let n = data.present.len();
    let mut keys: Vec<&[u8]> = Vec::with_capacity(BATCH);
    let start = Instant::now();
    for chunk_start in (0..n).step_by(2 * BATCH) {
        keys.clear();
        keys.extend(
            (chunk_start..(chunk_start + 2 * BATCH).min(n))
                .step_by(2)
                .map(|i| data.present.get(i)),
        );
        engine.delete_batch(&keys)?;
    }
    let ns = per(start, n.div_ceil(2));
    let mut wrong = 0;
    for i in (0..n).step_by(101) {
        gone[i] |= i % 2 == 0;
        let found = engine.get(data.present.get(i))?.is_some();
        wrong += usize::from(found == gone[i]);
    }
    (0..n).step_by(2).for_each(|i| gone[i] = true);
    expect_count("keys read wrong after the deletes", wrong, 0)?;
    Ok(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_disjoint_and_in_the_first_half() {
        for n in [20_000, 1_000_000, 10_000_000] {
            let plan = RangePlan::new(n);
            let mut ranges: Vec<(usize, usize)> = (0..plan.ranges)
                .flat_map(|r| [plan.range(r, false), plan.range(r, true)])
                .collect();
            ranges.sort_unstable();
            assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{n} keys");
            assert!(
                ranges.last().is_some_and(|r| r.1 < n / 2 + n / 20),
                "{n} keys"
            );
            assert_eq!(plan.range(0, false).1, RANGE_KEYS.min(n / 40));
        }
    }
}
