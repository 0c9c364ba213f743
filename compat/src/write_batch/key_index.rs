//! [`KeyIndex`]: the newest pending write of each key in a batch, ordered by
//! column family and key, so that a transaction can read its own writes.

use std::collections::BTreeMap;

use super::rep::BatchOp;

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
    writes: BTreeMap<(u32, Vec<u8>), PendingWrite>,
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
        self.writes.insert((cf, key.to_vec()), write);
    }

    /// The pending write of `key` in column family `cf`, if any.
    pub(crate) fn get(&self, cf: u32, key: &[u8]) -> Option<&PendingWrite> {
        self.writes.get(&(cf, key.to_vec()))
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
            .map(|((_, key), write)| (key.clone(), write.clone()))
            .collect()
    }

    /// Forgets every pending write.
    pub(crate) fn clear(&mut self) {
        self.writes.clear();
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
}
