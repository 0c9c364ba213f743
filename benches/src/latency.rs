//! Per-operation latency: a recorder that costs one clock read per
//! operation, and the percentiles a report shows.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Times consecutive operations: each [`Recorder::tick`] records the time
/// since the previous one (or since [`Recorder::start`]), so a loop pays
/// one clock read per operation and its total time stays comparable.
#[derive(Debug)]
pub struct Recorder {
    last: Instant,
    nanos: Vec<u32>,
}

impl Recorder {
    /// A recorder for about `ops` operations, started now.
    pub fn start(ops: usize) -> Recorder {
        Recorder {
            last: Instant::now(),
            nanos: Vec::with_capacity(ops),
        }
    }

    /// Records the operation that just finished.
    #[inline]
    pub fn tick(&mut self) {
        let ns = self.lap();
        self.push(ns);
    }

    /// Nanoseconds since the previous lap (or the start), restarting the
    /// clock: for a loop that files its operations under several recorders.
    #[inline]
    pub fn lap(&mut self) -> u32 {
        let now = Instant::now();
        let ns = now.duration_since(self.last).as_nanos();
        self.last = now;
        u32::try_from(ns).unwrap_or(u32::MAX)
    }

    /// Records one operation of `ns` nanoseconds.
    #[inline]
    pub fn push(&mut self, ns: u32) {
        self.nanos.push(ns);
    }

    /// Adds another recorder's operations (another thread's).
    pub fn merge(&mut self, other: Recorder) {
        self.nanos.extend(other.nanos);
    }

    /// The percentiles of what was recorded (None if nothing was).
    pub fn latency(mut self) -> Option<Latency> {
        if self.nanos.is_empty() {
            return None;
        }
        self.nanos.sort_unstable();
        let at = |q: f64| {
            let last = self.nanos.len() - 1;
            f64::from(self.nanos[((last as f64) * q).round() as usize])
        };
        Some(Latency {
            p50: at(0.5),
            p99: at(0.99),
            p999: at(0.999),
            max: at(1.0),
        })
    }
}

/// Latency percentiles of one kind of operation, nanoseconds. `max` is the
/// longest single operation: the longest stall a caller saw.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// The longest operation.
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut r = Recorder::start(1_000);
        r.nanos = (1..=1_000).rev().collect();
        let l = r.latency().unwrap();
        assert_eq!(
            (l.p50, l.p99, l.p999, l.max),
            (501.0, 990.0, 999.0, 1_000.0)
        );
        assert!(Recorder::start(0).latency().is_none());
    }

    #[test]
    fn ticks_record_one_sample_per_operation() {
        let mut a = Recorder::start(2);
        a.tick();
        a.tick();
        let mut b = Recorder::start(1);
        b.tick();
        a.merge(b);
        assert_eq!(a.nanos.len(), 3);
    }
}
