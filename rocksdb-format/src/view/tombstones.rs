//! Range tombstones applied in one ascending sweep over user keys: those
//! that start at or before the current key are active until their end.

use crate::internal_key::{self, MAX_SEQUENCE};
use crate::table::RangeTombstone;

/// The type byte of a range deletion in an internal key.
const RANGE_DELETION: u8 = 0xF;

/// `tombstone`, read from a table whose smallest and largest internal keys
/// are `smallest` and `largest`, cut to the user keys that table covers,
/// as RocksDB's readers cut it: a table's tombstone may extend past the
/// table (compaction writes it whole into every output it spans), but
/// speaks only for the table's range, since keys beyond it may since have
/// been compacted below it with their sequence numbers zeroed. The largest
/// key is exclusive when it is a range-deletion sentinel (the next table
/// starts there), inclusive otherwise. `None` if nothing is left.
pub fn truncate_to_table(
    mut tombstone: RangeTombstone,
    smallest: &[u8],
    largest: &[u8],
) -> Option<RangeTombstone> {
    if let Ok((first, _, _)) = internal_key::split(smallest)
        && tombstone.start.as_slice() < first
    {
        tombstone.start = first.to_vec();
    }
    if let Ok((last, sequence, kind)) = internal_key::split(largest) {
        let mut end = last.to_vec();
        if sequence != MAX_SEQUENCE || kind != RANGE_DELETION {
            end.push(0);
        }
        if end < tombstone.end {
            tombstone.end = end;
        }
    }
    (tombstone.start < tombstone.end).then_some(tombstone)
}

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
    use crate::internal_key::MAX_SEQUENCE;

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

    fn ikey(user: &str, sequence: u64, kind: u8) -> Vec<u8> {
        let mut key = user.as_bytes().to_vec();
        key.extend_from_slice(&((sequence << 8) | u64::from(kind)).to_le_bytes());
        key
    }

    #[test]
    fn a_tombstone_speaks_only_for_its_table() {
        // The table holds keys "c"..="m"; the tombstone was written whole.
        let cut = super::truncate_to_table(t("a", "z", 9), &ikey("c", 5, 1), &ikey("m", 3, 1));
        let cut = cut.unwrap();
        assert_eq!(
            (cut.start.as_slice(), cut.end.as_slice()),
            (&b"c"[..], &b"m\0"[..])
        );
        // A range-deletion sentinel as the largest key: the next table
        // starts at "m", which this one's tombstone does not cover.
        let sentinel = ikey("m", MAX_SEQUENCE, 0xF);
        let cut = super::truncate_to_table(t("a", "z", 9), &ikey("c", 5, 1), &sentinel).unwrap();
        assert_eq!(cut.end, b"m");
        // Inside the table: unchanged.
        let cut = super::truncate_to_table(t("d", "f", 9), &ikey("c", 5, 1), &ikey("m", 3, 1));
        assert_eq!(cut.unwrap().end, b"f");
        // Entirely outside: gone.
        assert!(super::truncate_to_table(t("n", "p", 9), &ikey("c", 5, 1), &sentinel).is_none());
    }
}
