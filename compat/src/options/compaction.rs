//! Compaction settings: [`CompactOptions`], [`FifoCompactOptions`],
//! [`UniversalCompactOptions`] and [`WaitForCompactOptions`].
//!
//! AlexDB chooses its own compaction strategy; these settings are accepted
//! so that tuning code compiles, and have no effect unless said otherwise.

use super::enums::{BottommostLevelCompaction, UniversalCompactionStopStyle};
use super::recorded::Recorded;

/// Settings of a manual compaction (`DB::compact_range_opt`).
#[derive(Clone, Debug, Default)]
pub struct CompactOptions {
    /// Raised into the column family's `full_history_ts_low` first.
    pub(crate) full_history_ts_low: Option<Vec<u8>>,
}

impl CompactOptions {
    /// Accepted for compatibility; AlexDB runs one compaction at a time, so
    /// this has no effect.
    pub fn set_exclusive_manual_compaction(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_bottommost_level_compaction(&mut self, _lvl: BottommostLevelCompaction) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_change_level(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_target_level(&mut self, _lvl: i32) {}

    /// Makes the compaction first raise the column family's
    /// `full_history_ts_low` to `ts`, as
    /// `DB::increase_full_history_ts_low` does (only for a compaction of
    /// the whole key range; with a start or end key, or if the raise fails,
    /// the compaction does nothing, as in RocksDB). AlexDB keeps the
    /// versions below it; reads below it fail.
    pub fn set_full_history_ts_low<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.full_history_ts_low = Some(ts.into());
    }
}

/// Settings of FIFO compaction (printed in `LOG` once set on `Options`).
#[derive(Clone, Debug, Default)]
pub struct FifoCompactOptions {
    pub(crate) recorded: Recorded,
}

impl FifoCompactOptions {
    /// Accepted for compatibility; AlexDB does not drop old files by size,
    /// so this has no effect.
    pub fn set_max_table_files_size(&mut self, nbytes: u64) {
        self.recorded
            .set("compaction_options_fifo.max_table_files_size", nbytes);
    }
}

/// Settings of universal compaction (printed in `LOG` once set on
/// `Options`).
#[derive(Clone, Debug, Default)]
pub struct UniversalCompactOptions {
    pub(crate) recorded: Recorded,
}

impl UniversalCompactOptions {
    /// Accepted for compatibility; AlexDB chooses its own compaction, so
    /// this has no effect.
    pub fn set_size_ratio(&mut self, ratio: i32) {
        self.recorded
            .set("compaction_options_universal.size_ratio", ratio);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so
    /// this has no effect.
    pub fn set_min_merge_width(&mut self, num: i32) {
        self.recorded
            .set("compaction_options_universal.min_merge_width", num);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so
    /// this has no effect.
    pub fn set_max_merge_width(&mut self, num: i32) {
        self.recorded
            .set("compaction_options_universal.max_merge_width", num);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so
    /// this has no effect.
    pub fn set_max_size_amplification_percent(&mut self, v: i32) {
        self.recorded.set(
            "compaction_options_universal.max_size_amplification_percent",
            v,
        );
    }

    /// Accepted for compatibility; AlexDB does not compress, so this has no effect.
    pub fn set_compression_size_percent(&mut self, v: i32) {
        self.recorded
            .set("compaction_options_universal.compression_size_percent", v);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so
    /// this has no effect.
    pub fn set_stop_style(&mut self, style: UniversalCompactionStopStyle) {
        let name = match style {
            UniversalCompactionStopStyle::Similar => "kCompactionStopStyleSimilarSize",
            UniversalCompactionStopStyle::Total => "kCompactionStopStyleTotalSize",
        };
        self.recorded
            .set("compaction_options_universal.stop_style", name);
    }
}

/// Settings of `DB::wait_for_compact`.
#[derive(Clone, Debug, Default)]
pub struct WaitForCompactOptions {
    pub(crate) abort_on_pause: bool,
    pub(crate) flush: bool,
    pub(crate) timeout_micros: u64,
}

impl WaitForCompactOptions {
    /// If true, stop waiting when background work is paused.
    pub fn set_abort_on_pause(&mut self, v: bool) {
        self.abort_on_pause = v;
    }

    /// If true, flush every column family before waiting.
    pub fn set_flush(&mut self, v: bool) {
        self.flush = v;
    }

    /// Gives up after `microseconds` (0: wait as long as needed).
    pub fn set_timeout(&mut self, microseconds: u64) {
        self.timeout_micros = microseconds;
    }
}
