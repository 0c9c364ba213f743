//! Slowing writers down while compaction is behind, as RocksDB's delayed
//! writes do.
//!
//! Every overwrite and delete leaves dead bytes that only compaction gives
//! back, and a writer can make them faster than one compaction thread can
//! reclaim them: a single thread overwriting 2M keys in batches (120 MB/s
//! of log) kept 1.0–2.0 GB on disk for 290 MB of live data, and more the
//! longer it ran. So the compaction thread, each time it plans, weighs the
//! dead bytes that are due for reclaiming (in segments past the dead ratio,
//! as the planner weighs them: versions a snapshot still reads count until
//! a rewrite has moved them aside) against a limit of the larger of
//! [`crate::Options::write_slowdown_debt_bytes`] and half the live bytes. While they exceed it, each write first sleeps
//! for its bytes at [`SLOWED_BYTES_PER_SEC`] (small writes add up what they
//! owe and the one that brings it to [`SHORTEST_SLEEP`] sleeps for all), so
//! the writer leaves the compaction thread the time to catch up. Writes
//! are never stopped, only slowed: a compaction that fails or is paused
//! lifts the slowdown, and nothing is slowed without a background
//! compaction thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};

/// The rate a slowed writer is held to: RocksDB's default delayed write
/// rate.
pub(crate) const SLOWED_BYTES_PER_SEC: u64 = 16 << 20;

/// The shortest sleep a slowed write takes; smaller delays are added up.
pub(crate) const SHORTEST_SLEEP: Duration = Duration::from_millis(1);

/// Bytes a batch operation costs in the log beyond its key and value (its
/// record header, about).
const RECORD_OVERHEAD: u64 = 32;

/// Whether writes are slowed now, and what slowed writes owe.
#[derive(Debug, Default)]
pub(crate) struct WriteThrottle {
    slowed: AtomicBool,
    /// Nanoseconds of delay owed by writes too small to sleep alone.
    owed_nanos: AtomicU64,
    /// Sleeps taken by slowed writes since open.
    sleeps: AtomicU64,
}

impl WriteThrottle {
    /// Slows writes down (`true`) or lets them run.
    pub fn set(&self, slowed: bool) {
        self.slowed.store(slowed, Ordering::Relaxed);
    }

    /// Whether writes are slowed now.
    pub fn is_slowed(&self) -> bool {
        self.slowed.load(Ordering::Relaxed)
    }

    /// Sleeps taken by slowed writes since open.
    pub fn sleeps(&self) -> u64 {
        self.sleeps.load(Ordering::Relaxed)
    }

    /// Called by a writer before it writes `ops` operations of
    /// `payload_bytes` keys and values: sleeps for them while writes are
    /// slowed, or fails with [`Error::WriteStall`] if it asked for
    /// `no_slowdown`.
    pub fn pace(&self, ops: usize, payload_bytes: usize, no_slowdown: bool) -> Result<()> {
        if !self.is_slowed() {
            return Ok(());
        }
        if no_slowdown {
            return Err(Error::WriteStall);
        }
        let bytes = payload_bytes as u64 + ops as u64 * RECORD_OVERHEAD;
        let nanos = bytes.saturating_mul(1_000_000_000) / SLOWED_BYTES_PER_SEC;
        let owed = self.owed_nanos.fetch_add(nanos, Ordering::Relaxed) + nanos;
        if owed < SHORTEST_SLEEP.as_nanos() as u64 {
            return Ok(());
        }
        // This write pays for everything owed so far.
        let taken = self.owed_nanos.swap(0, Ordering::Relaxed);
        if taken > 0 {
            self.sleeps.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_nanos(taken));
        }
        Ok(())
    }
}

/// The dead bytes due for reclaiming above which writes are slowed, for a
/// database of `live_bytes` with a configured floor of `floor_bytes`
/// (`None` when `floor_bytes` is 0: never slowed).
pub(crate) fn slowdown_limit(floor_bytes: u64, live_bytes: u64) -> Option<u64> {
    (floor_bytes > 0).then(|| floor_bytes.max(live_bytes / 2))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn writes_run_freely_unless_slowed() {
        let throttle = WriteThrottle::default();
        throttle.pace(1_000, 1 << 20, true).unwrap();
        assert_eq!(throttle.sleeps(), 0);
    }

    /// 1 MiB at 16 MiB/s is at least 62.5 ms of sleep, whether written at
    /// once or in 1,000 small writes that each owe less than a sleep.
    #[test]
    fn slowed_writes_sleep_for_their_bytes_small_ones_together() {
        let throttle = WriteThrottle::default();
        throttle.set(true);
        let start = Instant::now();
        throttle
            .pace(1, (1 << 20) - RECORD_OVERHEAD as usize, false)
            .unwrap();
        assert!(start.elapsed() >= Duration::from_micros(62_500));
        assert_eq!(throttle.sleeps(), 1);

        let start = Instant::now();
        let one = (1 << 20) / 1_000 - RECORD_OVERHEAD as usize;
        for _ in 0..1_000 {
            throttle.pace(1, one, false).unwrap();
        }
        assert!(start.elapsed() >= Duration::from_millis(60));
        let sleeps = throttle.sleeps() - 1;
        assert!((50..=70).contains(&sleeps), "{sleeps} sleeps");
        assert!(matches!(throttle.pace(1, 10, true), Err(Error::WriteStall)));
        assert_eq!(
            throttle.sleeps() - 1,
            sleeps,
            "a no_slowdown write does not sleep"
        );
    }

    #[test]
    fn the_limit_grows_with_the_live_data_and_zero_turns_it_off() {
        assert_eq!(slowdown_limit(256 << 20, 100 << 20), Some(256 << 20));
        assert_eq!(slowdown_limit(256 << 20, 2 << 30), Some(1 << 30));
        assert_eq!(slowdown_limit(0, 2 << 30), None);
    }
}
