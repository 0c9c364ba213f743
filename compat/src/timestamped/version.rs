//! The stored value of one timestamped version, and which version a read
//! at a timestamp sees.
//!
//! ```text
//! put:    0x01 | value (then the TTL stamp, in a database opened with a TTL)
//! delete: 0x02
//! ```
//!
//! A delete at a timestamp is a version of its own (a tombstone at that
//! timestamp): reads at or after it see nothing, reads before it see the
//! older versions, as in RocksDB.

use std::cmp::Ordering;

use crate::comparator::Comparator;

/// First byte of a put's stored value.
const PUT: u8 = 0x01;
/// The stored value of a delete.
const DELETE: u8 = 0x02;

/// The stored value of a put of `value`.
pub(crate) fn put_value(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 1);
    out.push(PUT);
    out.extend_from_slice(value);
    out
}

/// The stored value of a delete.
pub(crate) fn delete_value() -> &'static [u8] {
    &[DELETE]
}

/// The user's value in `stored`, or `None` for a delete (or a value that
/// is neither, which no write produces).
pub(crate) fn user_value(stored: &[u8]) -> Option<&[u8]> {
    match stored.split_first() {
        Some((&PUT, value)) => Some(value),
        _ => None,
    }
}

/// Keeps the newest of the versions offered whose timestamp is not after
/// the read timestamp.
pub(crate) struct Newest<'c, T> {
    comparator: &'c Comparator,
    read_ts: &'c [u8],
    best: Option<(Vec<u8>, T)>,
}

impl<'c, T> Newest<'c, T> {
    /// Looks for versions visible at `read_ts` by `comparator`'s timestamp
    /// order.
    pub(crate) fn new(comparator: &'c Comparator, read_ts: &'c [u8]) -> Self {
        Self {
            comparator,
            read_ts,
            best: None,
        }
    }

    /// Considers the version at `ts`, holding `version`.
    pub(crate) fn offer(&mut self, ts: &[u8], version: impl FnOnce() -> T) {
        let cmp = self.comparator;
        if cmp.compare_timestamps(ts, self.read_ts) == Ordering::Greater {
            return;
        }
        let newer = self
            .best
            .as_ref()
            .is_none_or(|(best, _)| cmp.compare_timestamps(ts, best) == Ordering::Greater);
        if newer {
            self.best = Some((ts.to_vec(), version()));
        }
    }

    /// The newest visible version and its timestamp, if any.
    pub(crate) fn take(&mut self) -> Option<(Vec<u8>, T)> {
        self.best.take()
    }
}
