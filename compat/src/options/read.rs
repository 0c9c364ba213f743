//! [`ReadOptions`]: per-read settings for `get_opt`, `iterator_opt`, ...

use std::sync::Arc;

use crate::db::DBAccess;
use crate::iter_range::IterateBounds;
use crate::snapshot::SnapshotWithThreadMode;

use super::enums::ReadTier;

/// Settings of one read or iterator.
///
/// AlexDB honours the iteration bounds, `prefix_same_as_start`,
/// `total_order_seek`, the read tier and timestamps (the database layer reads
/// them); the cache, checksum and prefetch settings are accepted and have no
/// effect, because AlexDB reads through memory maps and always verifies
/// checksums.
///
/// A snapshot set with [`ReadOptions::set_snapshot`] is held by the
/// options (not just pointed to, as in RocksDB), so reads through them stay
/// valid even if the `Snapshot` value is dropped first.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    pub(crate) iterate_lower_bound: Option<Vec<u8>>,
    pub(crate) iterate_upper_bound: Option<Vec<u8>>,
    pub(crate) prefix_same_as_start: bool,
    pub(crate) total_order_seek: bool,
    pub(crate) read_tier: ReadTier,
    pub(crate) tailing: bool,
    pub(crate) timestamp: Option<Vec<u8>>,
    pub(crate) iter_start_ts: Option<Vec<u8>>,
    pub(crate) snapshot: Option<Arc<alexdb_engine::Snapshot>>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            iterate_lower_bound: None,
            iterate_upper_bound: None,
            prefix_same_as_start: false,
            total_order_seek: false,
            read_tier: ReadTier::All,
            tailing: false,
            timestamp: None,
            iter_start_ts: None,
            snapshot: None,
        }
    }
}

impl ReadOptions {
    /// Makes reads and iterators see the database as of `snapshot`.
    pub fn set_snapshot<D: DBAccess>(&mut self, snapshot: &SnapshotWithThreadMode<'_, D>) {
        self.snapshot = snapshot.engine_snapshot();
    }

    /// Accepted for compatibility; AlexDB has no block cache to fill, so
    /// this has no effect.
    pub fn fill_cache(&mut self, _v: bool) {}

    /// Makes iterators skip keys below `key` (inclusive lower bound).
    pub fn set_iterate_lower_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.iterate_lower_bound = Some(key.into());
    }

    /// Makes iterators stop before `key` (exclusive upper bound).
    pub fn set_iterate_upper_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.iterate_upper_bound = Some(key.into());
    }

    /// Sets both iteration bounds from a range (`..`, `a..b`, `a..`, `..b`
    /// or [`crate::PrefixRange`]); a side the range leaves open is cleared.
    pub fn set_iterate_range(&mut self, range: impl IterateBounds) {
        let (lower, upper) = range.into_bounds();
        self.iterate_lower_bound = lower;
        self.iterate_upper_bound = upper;
    }

    /// Restricts reads to the given storage tiers.
    pub fn set_read_tier(&mut self, tier: ReadTier) {
        self.read_tier = tier;
    }

    /// Makes prefix iterators stop when the key prefix (under the prefix
    /// extractor) changes from the seek key's.
    pub fn set_prefix_same_as_start(&mut self, v: bool) {
        self.prefix_same_as_start = v;
    }

    /// Makes iterators ignore the prefix extractor and visit keys in total order.
    pub fn set_total_order_seek(&mut self, v: bool) {
        self.total_order_seek = v;
    }

    /// Accepted for compatibility; AlexDB iterators never give up early, so
    /// this has no effect.
    pub fn set_max_skippable_internal_keys(&mut self, _num: u64) {}

    /// Accepted for compatibility; AlexDB reclaims files on its own, so this
    /// has no effect.
    pub fn set_background_purge_on_iterator_cleanup(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB always applies range deletions, so
    /// this has no effect.
    pub fn set_ignore_range_deletions(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB always verifies checksums, so this
    /// has no effect.
    pub fn set_verify_checksums(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this
    /// has no effect.
    pub fn set_readahead_size(&mut self, _v: usize) {}

    /// Accepted for compatibility. In RocksDB a best-effort deadline (in
    /// microseconds since the epoch) checked while a read waits on file
    /// I/O; AlexDB's reads never issue file I/O requests (they read mapped
    /// memory), so there is nothing to time out.
    pub fn set_deadline(&mut self, _microseconds: u64) {}

    /// Accepted for compatibility: RocksDB's timeout of each file read
    /// request; AlexDB's reads issue none (see [`Self::set_deadline`]).
    pub fn set_io_timeout(&mut self, _microseconds: u64) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this
    /// has no effect.
    pub fn set_auto_readahead_size(&mut self, _v: bool) {}

    /// Makes a tailing iterator, which also sees writes made after it was created.
    pub fn set_tailing(&mut self, v: bool) {
        self.tailing = v;
    }

    /// Accepted for compatibility; AlexDB keys stay mapped while an iterator
    /// lives, so this has no effect.
    pub fn set_pin_data(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this
    /// has no effect.
    pub fn set_async_io(&mut self, _v: bool) {}

    /// Reads the data visible at user timestamp `ts`.
    pub fn set_timestamp<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.timestamp = Some(ts.into());
    }

    /// Makes iterators return every version from timestamp `ts` on.
    pub fn set_iter_start_ts<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.iter_start_ts = Some(ts.into());
    }
}
