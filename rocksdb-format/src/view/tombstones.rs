//! Range tombstones applied in one ascending sweep over user keys: those
//! that start at or before the current key are active until their end.

use crate::table::RangeTombstone;

/// The range tombstones of a column family, consulted in key order.
pub struct TombstoneSweep {
    pending: std::vec::IntoIter<RangeTombstone>,
    next: Option<RangeTombstone>,
    active: Vec<RangeTombstone>,
}

impl TombstoneSweep {
    /// A sweep over `tombstones` (any order).
    pub fn new(mut tombstones: Vec<RangeTombstone>) -> Self {
        tombstones.retain(|t| t.start < t.end);
        tombstones.sort_by(|a, b| a.start.cmp(&b.start));
        let mut pending = tombstones.into_iter();
        let next = pending.next();
        TombstoneSweep {
            pending,
            next,
            active: Vec::new(),
        }
    }

    /// The newest sequence of a tombstone covering `key`, 0 if none; keys
    /// must be asked for in ascending order.
    pub fn covering_sequence(&mut self, key: &[u8]) -> u64 {
        while self
            .next
            .as_ref()
            .is_some_and(|t| t.start.as_slice() <= key)
        {
            if let Some(t) = self.next.take() {
                self.active.push(t);
            }
            self.next = self.pending.next();
        }
        self.active.retain(|t| t.end.as_slice() > key);
        self.active.iter().map(|t| t.sequence).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: &str, sequence: u64) -> RangeTombstone {
        RangeTombstone {
            start: start.into(),
            end: end.into(),
            sequence,
        }
    }

    #[test]
    fn newest_covering_tombstone_wins_and_ends_are_exclusive() {
        let mut s = TombstoneSweep::new(vec![t("b", "d", 5), t("c", "f", 9)]);
        assert_eq!(s.covering_sequence(b"a"), 0);
        assert_eq!(s.covering_sequence(b"b"), 5);
        assert_eq!(s.covering_sequence(b"c"), 9);
        assert_eq!(s.covering_sequence(b"d"), 9);
        assert_eq!(s.covering_sequence(b"f"), 0);
    }
}
