//! [`KeyIndex`]: the newest pending write of each key in a batch, ordered by
//! column family and key, so that a transaction can read its own writes.
//!
//! In a column family with a custom comparator, keys the comparator calls
//! equal are one key (as RocksDB's indexed batch orders by the family's
//! comparator): a lookup answers with the newest write of any form of the
//! key, and a range holds one entry per class (its newest write), in the
//! comparator's order.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::rep::BatchOp;
use crate::comparator::Comparator;

/// What a batch last did to one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PendingWrite {
    /// The key is set to this value.
    Put(Vec<u8>),
    /// The key is deleted.
    Delete,
    /// The key has merge operands pending, with the value they resolve to
    /// when it is known (a transaction resolves them over what it reads;
    /// a bare batch cannot, and reads of the key fail with `Not
    /// implemented`).
    Merge(Option<Vec<u8>>),
}

/// The newest pending write of each `(column family, key)` of a batch.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyIndex {
    /// Each key's newest write, with the number of the write (counting
    /// from 0 in batch order) that made it.
    writes: BTreeMap<(u32, Vec<u8>), (u64, PendingWrite)>,
    /// The number of the next write.
    next: u64,
}

impl KeyIndex {
    /// Records one batch record (range deletes, log data and no-ops leave
    /// the index unchanged: transaction batches have no range deletes).
    pub(crate) fn record(&mut self, op: &BatchOp<'_>) {
        let (cf, key, write) = match *op {
            BatchOp::Put { cf, key, value } => (cf, key, PendingWrite::Put(value.to_vec())),
            BatchOp::Delete { cf, key } | BatchOp::SingleDelete { cf, key } => {
                (cf, key, PendingWrite::Delete)
            }
            BatchOp::Merge { cf, key, .. } => (cf, key, PendingWrite::Merge(None)),
            BatchOp::DeleteRange { .. } | BatchOp::LogData(_) | BatchOp::Noop => return,
        };
        self.insert(cf, key, write);
    }

    /// Records `write` as the newest pending write of `key` in `cf`.
    pub(crate) fn insert(&mut self, cf: u32, key: &[u8], write: PendingWrite) {
        self.writes.insert((cf, key.to_vec()), (self.next, write));
        self.next += 1;
    }

    /// The pending write of `key` in column family `cf`, if any.
    pub(crate) fn get(&self, cf: u32, key: &[u8]) -> Option<&PendingWrite> {
        self.writes.get(&(cf, key.to_vec())).map(|(_, write)| write)
    }

    /// [`Self::get`] in a column family ordered by `order` (if any): the
    /// newest write of any key `order` calls equal to `key`.
    pub(crate) fn get_in(
        &self,
        cf: u32,
        key: &[u8],
        order: Option<&Comparator>,
    ) -> Option<&PendingWrite> {
        let Some(order) = order else {
            return self.get(cf, key);
        };
        self.family(cf)
            .filter(|(k, _)| order.compare_user_keys(k, key).is_eq())
            .max_by_key(|(_, (n, _))| *n)
            .map(|(_, (_, write))| write)
    }

    /// The pending writes of column family `cf` with keys in
    /// `[lower, upper)`, in key order.
    pub(crate) fn range(
        &self,
        cf: u32,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Vec<(Vec<u8>, PendingWrite)> {
        let start = (cf, lower.unwrap_or_default().to_vec());
        self.writes
            .range(start..)
            .take_while(|((c, key), _)| *c == cf && upper.is_none_or(|u| key.as_slice() < u))
            .map(|((_, key), (_, write))| (key.clone(), write.clone()))
            .collect()
    }

    /// [`Self::range`] in a column family ordered by `order` (if any): the
    /// bounds and the result in its order, one entry per class of keys it
    /// calls equal (the class's newest write, under the key it wrote).
    pub(crate) fn range_in(
        &self,
        cf: u32,
        (lower, upper): (Option<&[u8]>, Option<&[u8]>),
        order: Option<&Comparator>,
    ) -> Vec<(Vec<u8>, PendingWrite)> {
        let Some(order) = order else {
            return self.range(cf, lower, upper);
        };
        let cmp = |a: &[u8], b: &[u8]| order.compare_user_keys(a, b);
        let mut within: Vec<(&Vec<u8>, &(u64, PendingWrite))> = self
            .family(cf)
            .filter(|(k, _)| lower.is_none_or(|l| cmp(k, l) != Ordering::Less))
            .filter(|(k, _)| upper.is_none_or(|u| cmp(k, u) == Ordering::Less))
            .collect();
        // Newest first within a class, so that the dedup keeps it.
        within.sort_by(|(a, (na, _)), (b, (nb, _))| cmp(a, b).then(nb.cmp(na)));
        within.dedup_by(|(later, _), (kept, _)| cmp(later, kept).is_eq());
        within
            .into_iter()
            .map(|(key, (_, write))| (key.clone(), write.clone()))
            .collect()
    }

    /// The pending writes of column family `cf`, by key bytes.
    fn family(&self, cf: u32) -> impl Iterator<Item = (&Vec<u8>, &(u64, PendingWrite))> {
        self.writes
            .range((cf, Vec::new())..)
            .take_while(move |((c, _), _)| *c == cf)
            .map(|((_, key), entry)| (key, entry))
    }

    /// Forgets every pending write.
    pub(crate) fn clear(&mut self) {
        self.writes.clear();
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::{KeyIndex, PendingWrite};
    use crate::write_batch::BatchOp;

    #[test]
    fn the_newest_write_of_a_key_wins_and_ranges_stay_in_their_family() {
        let mut index = KeyIndex::default();
        let ops = [
            BatchOp::Put {
                cf: 0,
                key: b"a",
                value: b"1",
            },
            BatchOp::Put {
                cf: 0,
                key: b"b",
                value: b"2",
            },
            BatchOp::Delete { cf: 0, key: b"a" },
            BatchOp::Put {
                cf: 1,
                key: b"a",
                value: b"x",
            },
            BatchOp::Merge {
                cf: 0,
                key: b"c",
                value: b"m",
            },
        ];
        for op in &ops {
            index.record(op);
        }
        assert_eq!(index.get(0, b"a"), Some(&PendingWrite::Delete));
        assert_eq!(index.get(1, b"a"), Some(&PendingWrite::Put(b"x".to_vec())));
        let keys: Vec<Vec<u8>> = index
            .range(0, Some(b"b"), None)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, [b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(index.range(0, None, Some(b"b")).len(), 1);
        assert_eq!(index.range(1, None, None).len(), 1);
    }

    /// Under a case-insensitive comparator the spellings of a key are one
    /// key: a lookup of any answers with the newest write of all, and a
    /// range holds the newest of each class, in the comparator's order.
    #[test]
    fn under_a_comparator_the_newest_write_of_a_class_wins() {
        let mut opts = crate::Options::default();
        opts.set_comparator(
            "case-insensitive",
            Box::new(|a: &[u8], b: &[u8]| a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())),
        );
        let order = opts.comparator.clone();
        let order = order.as_ref();
        let mut index = KeyIndex::default();
        index.insert(0, b"User", PendingWrite::Put(b"1".to_vec()));
        index.insert(0, b"b", PendingWrite::Put(b"b".to_vec()));
        index.insert(0, b"user", PendingWrite::Delete);
        index.insert(0, b"A", PendingWrite::Put(b"a".to_vec()));
        assert_eq!(index.get_in(0, b"USER", order), Some(&PendingWrite::Delete));
        assert_eq!(index.get_in(0, b"USER", None), None);
        index.insert(0, b"USER", PendingWrite::Put(b"2".to_vec()));
        assert_eq!(
            index.get_in(0, b"user", order),
            Some(&PendingWrite::Put(b"2".to_vec()))
        );
        let keys: Vec<Vec<u8>> = index
            .range_in(0, (None, None), order)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, [b"A".to_vec(), b"b".to_vec(), b"USER".to_vec()]);
        let bounded = index.range_in(0, (Some(b"B"), Some(b"v")), order);
        assert_eq!(bounded.len(), 2);
    }
}
