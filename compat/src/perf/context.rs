//! The per-thread perf level and counters, and [`PerfContext`].

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;

use super::metric::{METRIC_NAMES, PerfMetric};

/// How much a thread's perf counters count.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(i32)]
pub enum PerfStatsLevel {
    /// Not set: counts nothing.
    Uninitialized = 0,
    /// Counts nothing.
    Disable,
    /// Counts counters, not times.
    EnableCount,
    /// Counts counters and times, except mutex waits.
    EnableTimeExceptForMutex,
    /// Also CPU times, except mutex waits.
    EnableTimeAndCPUTimeExceptForMutex,
    /// Counts counters and times.
    EnableTime,
    /// Out of range; must stay last.
    OutOfBound,
}

const METRICS: usize = PerfMetric::TotalMetricCount as usize;

thread_local! {
    static LEVEL: Cell<PerfStatsLevel> = const { Cell::new(PerfStatsLevel::Disable) };
    static COUNTERS: RefCell<[u64; METRICS]> = const { RefCell::new([0; METRICS]) };
}

/// Sets the perf level of the calling thread.
pub fn set_perf_stats(lvl: PerfStatsLevel) {
    LEVEL.with(|level| level.set(lvl));
}

/// Adds each `(metric, n)` of `counts` for the calling thread, if its level
/// counts (the level is read once).
pub(crate) fn count(counts: &[(PerfMetric, u64)]) {
    let counting = LEVEL.with(|level| {
        let level = level.get() as i32;
        level >= PerfStatsLevel::EnableCount as i32 && level < PerfStatsLevel::OutOfBound as i32
    });
    if counting {
        COUNTERS.with(|c| {
            let mut counters = c.borrow_mut();
            for &(metric, n) in counts {
                let slot = &mut counters[metric as usize];
                *slot = slot.saturating_add(n);
            }
        });
    }
}

/// The calling thread's perf counters.
#[derive(Debug, Default)]
pub struct PerfContext {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl PerfContext {
    /// Sets every counter of the calling thread to 0.
    pub fn reset(&mut self) {
        COUNTERS.with(|c| *c.borrow_mut() = [0; METRICS]);
    }

    /// The counters as RocksDB prints them: `name = value, ` for each (or
    /// only the nonzero ones with `exclude_zero_counters`).
    pub fn report(&self, exclude_zero_counters: bool) -> String {
        let values = COUNTERS.with(|c| *c.borrow());
        let mut text = String::new();
        for (name, value) in METRIC_NAMES.iter().zip(values) {
            if !exclude_zero_counters || value > 0 {
                let _ = write!(text, "{name} = {value}, ");
            }
        }
        text
    }

    /// The value of `id` for the calling thread.
    pub fn metric(&self, id: PerfMetric) -> u64 {
        let index = id as usize;
        COUNTERS.with(|c| c.borrow().get(index).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::{PerfContext, PerfMetric, PerfStatsLevel, count, set_perf_stats};

    #[test]
    fn counts_only_when_enabled() {
        let mut ctx = PerfContext::default();
        ctx.reset();
        set_perf_stats(PerfStatsLevel::Disable);
        count(&[(PerfMetric::GetReadBytes, 5)]);
        assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 0);
        set_perf_stats(PerfStatsLevel::EnableCount);
        count(&[(PerfMetric::GetReadBytes, 5)]);
        assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 5);
        assert_eq!(ctx.report(true), "get_read_bytes = 5, ");
        assert!(
            ctx.report(false)
                .starts_with("user_key_comparison_count = 0, ")
        );
        ctx.reset();
        assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 0);
    }
}
