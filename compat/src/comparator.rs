//! Custom key orderings, set with `Options::set_comparator`.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// Orders two keys.
pub type CompareFn = dyn Fn(&[u8], &[u8]) -> Ordering;

/// Orders two timestamps.
pub type CompareTsFn = dyn Fn(&[u8], &[u8]) -> Ordering;

/// Orders two keys, each flagged with whether it carries a timestamp.
pub type CompareWithoutTsFn = dyn Fn(&[u8], bool, &[u8], bool) -> Ordering;

/// A named custom comparator, as stored in the options.
#[derive(Clone)]
pub(crate) struct Comparator {
    pub(crate) name: String,
    pub(crate) compare: Arc<CompareFn>,
    /// The timestamp size, for a timestamp-aware comparator.
    pub(crate) timestamp_size: usize,
    /// A timestamp-aware comparator's functions (`None` for the others).
    pub(crate) with_ts: Option<TimestampOrder>,
}

/// How a timestamp-aware comparator orders timestamps, and user keys
/// without their timestamps.
#[derive(Clone)]
pub(crate) struct TimestampOrder {
    pub(crate) compare_ts: Arc<CompareTsFn>,
    pub(crate) compare_without_ts: Arc<CompareWithoutTsFn>,
}

// SAFETY: rocksdb 0.25's `CompareFn` has no `Send + Sync` bound, yet its
// `Options` (which holds the comparator) is `Send + Sync` and the comparator
// is called from whichever thread reads or compacts. A drop-in must accept
// the same closures and keep `Options: Send + Sync`, so it takes on the same
// contract as rocksdb: the closure given to `set_comparator` must be safe to
// call from several threads (a pure function of its arguments, as every
// comparator is). AlexDB only ever calls it through `&self`.
unsafe impl Send for Comparator {}
// SAFETY: as for `Send` above.
unsafe impl Sync for Comparator {}

impl Comparator {
    /// Orders `a` and `b`.
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        (self.compare)(a, b)
    }

    /// Orders two user keys as an iterator does: for a timestamp-aware
    /// comparator, keys without their timestamps; else [`Self::compare`].
    pub(crate) fn compare_user_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.with_ts {
            Some(order) => (order.compare_without_ts)(a, false, b, false),
            None => self.compare(a, b),
        }
    }

    /// Orders two timestamps (bytewise for a comparator without them).
    pub(crate) fn compare_timestamps(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.with_ts {
            Some(order) => (order.compare_ts)(a, b),
            None => a.cmp(b),
        }
    }
}

/// The engine orders a column family's range deletes by its comparator
/// (see `ordered_keys/range.rs`); the name is what RocksDB records too.
impl alexdb_engine::key_order::KeyOrder for Comparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_user_keys(a, b)
    }
}

impl Comparator {
    /// The order the engine gives the range deletes of a column family
    /// with `comparator`: its own for a custom comparator without user
    /// timestamps (whose keys the engine holds as they are), else the
    /// bytes'.
    pub(crate) fn range_order(
        comparator: Option<&Comparator>,
    ) -> alexdb_engine::key_order::RangeOrder {
        use alexdb_engine::key_order::RangeOrder;
        match comparator {
            Some(c) if c.timestamp_size == 0 => RangeOrder::Custom(Arc::new(c.clone())),
            _ => RangeOrder::Bytewise,
        }
    }
}

impl fmt::Debug for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comparator")
            .field("name", &self.name)
            .field("timestamp_size", &self.timestamp_size)
            .finish_non_exhaustive()
    }
}
