//! Iterator bounds given as ranges: [`IterateBounds`] and [`PrefixRange`],
//! accepted by `ReadOptions::set_iterate_range`.

use std::ops::{Range, RangeFrom, RangeFull, RangeTo};

/// A range usable as iterator bounds: `..`, `a..b`, `a..`, `..b` or
/// [`PrefixRange`]. Inclusive upper bounds are not accepted because
/// RocksDB's upper bound is always exclusive.
pub trait IterateBounds {
    /// Returns the (inclusive) lower and (exclusive) upper bound; `None`
    /// leaves that side unbounded.
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>);
}

impl IterateBounds for RangeFull {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (None, None)
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for Range<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (Some(self.start.into()), Some(self.end.into()))
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for RangeFrom<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (Some(self.start.into()), None)
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for RangeTo<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (None, Some(self.end.into()))
    }
}

/// All keys that start with the given prefix, under bytewise ordering:
/// `PrefixRange("ab")` is `"ab".."ac"`. An empty prefix is the full range,
/// and a prefix of only `0xff` bytes has no upper bound.
#[derive(Debug, Clone, Copy)]
pub struct PrefixRange<K>(pub K);

impl<K: Into<Vec<u8>>> IterateBounds for PrefixRange<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let start = self.0.into();
        if start.is_empty() {
            return (None, None);
        }
        let end = prefix_successor(&start);
        (Some(start), end)
    }
}

/// The smallest key greater than every key starting with `prefix`: drop the
/// trailing `0xff` bytes and increment the last remaining one. `None` when
/// nothing remains.
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let keep = prefix.iter().rposition(|&byte| byte != u8::MAX)?;
    let mut next = prefix[..=keep].to_vec();
    next[keep] += 1;
    Some(next)
}

#[cfg(test)]
mod tests {
    use super::{IterateBounds, PrefixRange};

    #[test]
    fn prefix_bounds() {
        let empty: &[u8] = b"";
        assert_eq!(PrefixRange(empty).into_bounds(), (None, None));
        let bounds = |p: &[u8]| PrefixRange(p).into_bounds();
        assert_eq!(bounds(b"a"), (Some(b"a".to_vec()), Some(b"b".to_vec())));
        assert_eq!(
            bounds(b"a\xff\xff"),
            (Some(b"a\xff\xff".to_vec()), Some(b"b".to_vec()))
        );
        assert_eq!(bounds(b"\xff\xff"), (Some(b"\xff\xff".to_vec()), None));
    }
}
