//! Statistics settings.

/// How much statistics collection costs, from nothing to everything.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(u8)]
pub enum StatsLevel {
    /// Collect nothing.
    DisableAll = 0,
    /// Skip histograms and timers.
    ExceptHistogramOrTimers = 2,
    /// Skip timers.
    ExceptTimers,
    /// Skip timers of mutex waits and compression.
    ExceptDetailedTimers,
    /// Skip the timers that read the clock under a mutex.
    ExceptTimeForMutex,
    /// Collect everything.
    All,
}
