//! How long this machine keeps a running thread from running: the floor
//! under every "longest stall" figure of a report.
//!
//! A thread spins reading the clock and records the longest gap between two
//! reads, first alone, then while one more thread per other logical CPU
//! spins too. On a dedicated machine both gaps are far below a millisecond.
//! On a shared virtual machine whose host caps the guest's CPU time, the
//! second one is not: on a 2-vCPU cloud VM a thread pinned
//! alone to one vCPU lost 3–19 ms at a time, with no CPU time charged to it
//! and no switch seen by the guest's scheduler, whenever the other vCPU was
//! busy; alone, never over 3 ms. An engine whose background work keeps a
//! second core busy cannot show a longest put below that.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The longest gaps a spinning thread saw, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuStalls {
    /// Spinning alone.
    pub alone_ms: f64,
    /// Spinning while every other logical CPU had a spinning thread too.
    pub all_busy_ms: f64,
    /// How long each of the two measurements ran, in seconds.
    pub seconds: f64,
}

impl CpuStalls {
    /// Measures both gaps, `each` long.
    pub fn measure(each: Duration) -> CpuStalls {
        let others = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        CpuStalls {
            alone_ms: longest_gap(each, 0),
            all_busy_ms: longest_gap(each, others),
            seconds: each.as_secs_f64(),
        }
    }

    /// One line for reports.
    pub fn summary(&self) -> String {
        format!(
            "longest gap a spinning thread saw in {:.0} s: {:.2} ms alone, {:.2} ms with every core busy",
            self.seconds, self.alone_ms, self.all_busy_ms
        )
    }
}

/// The longest gap, in milliseconds, between two clock reads of a thread
/// spinning for `length` while `busy` other threads spin.
fn longest_gap(length: Duration, busy: usize) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..busy)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let gap = spin_and_time(length);
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        let _ = s.join();
    }
    gap.as_secs_f64() * 1e3
}

/// Spins for `length`; returns the longest gap between two clock reads.
fn spin_and_time(length: Duration) -> Duration {
    let start = Instant::now();
    let mut last = start;
    let mut longest = Duration::ZERO;
    while last - start < length {
        let now = Instant::now();
        longest = longest.max(now - last);
        last = now;
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_measured_alone_and_with_every_core_busy() {
        let s = CpuStalls::measure(Duration::from_millis(50));
        assert!(s.alone_ms > 0.0, "{s:?}");
        assert!(s.all_busy_ms > 0.0, "{s:?}");
        assert!(s.summary().contains("every core busy"));
    }
}
