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
}

impl fmt::Debug for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comparator")
            .field("name", &self.name)
            .field("timestamp_size", &self.timestamp_size)
            .finish_non_exhaustive()
    }
}
