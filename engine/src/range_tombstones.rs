//! Range tombstones: a range delete is one record, `[start, end)` at one
//! sequence number, whatever the number of keys it covers.
//!
//! Each keyspace keeps its live range tombstones in memory, sorted by start
//! key and published through `arc-swap` (rebuilt by recovery from the log).
//! A version of a key is hidden from a reader at sequence number `s` when a
//! tombstone with a sequence number in `(version, s]` covers the key.
//!
//! Compaction *applies* a tombstone once no snapshot is older than it: it
//! removes the index entries of the keys it covers whose newest version is
//! older (so the index forgets deleted keys and their records become dead
//! bytes), then marks it applied. It drops the tombstone itself once it is
//! applied and no record older than it survives outside the compaction's
//! inputs (see `compaction/rewrite.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// One range delete.
#[derive(Debug)]
pub struct RangeTombstone {
    /// First key deleted.
    pub start: Vec<u8>,
    /// First key kept.
    pub end: Vec<u8>,
    /// Sequence number of the range delete.
    pub seq: u64,
    /// Whether compaction has removed the index entries it covers.
    applied: AtomicBool,
}

impl RangeTombstone {
    /// A tombstone for `[start, end)` at `seq`.
    pub fn new(start: Vec<u8>, end: Vec<u8>, seq: u64, applied: bool) -> Self {
        RangeTombstone {
            start,
            end,
            seq,
            applied: AtomicBool::new(applied),
        }
    }

    /// Whether `key` lies in `[start, end)`.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.start.as_slice() <= key && key < self.end.as_slice()
    }

    /// Whether compaction has removed the index entries it covers.
    pub fn is_applied(&self) -> bool {
        self.applied.load(Ordering::Acquire)
    }

    pub(crate) fn mark_applied(&self) {
        self.applied.store(true, Ordering::Release);
    }
}

/// A keyspace's live range tombstones, sorted by start key then sequence
/// number. Immutable once published; writers publish a new list.
#[derive(Debug, Default, Clone)]
pub struct RangeTombstones {
    list: Vec<Arc<RangeTombstone>>,
}

impl RangeTombstones {
    /// A list of these tombstones.
    pub fn new(mut list: Vec<Arc<RangeTombstone>>) -> Self {
        list.sort_by(|a, b| a.start.cmp(&b.start).then(a.seq.cmp(&b.seq)));
        RangeTombstones { list }
    }

    /// Whether there are none (the readers' fast path).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Number of tombstones.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Every tombstone, by start key.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<RangeTombstone>> {
        self.list.iter()
    }

    /// The tombstone that hides a version of `key` written at `version_seq`
    /// from a reader at `read_seq`, if any: the one with the highest sequence
    /// number in `(version_seq, read_seq]` that covers `key`.
    pub fn covering(&self, key: &[u8], version_seq: u64, read_seq: u64) -> Option<&RangeTombstone> {
        let candidates = self.list.partition_point(|t| t.start.as_slice() <= key);
        self.list[..candidates]
            .iter()
            .filter(|t| t.seq > version_seq && t.seq <= read_seq && key < t.end.as_slice())
            .max_by_key(|t| t.seq)
            .map(|t| &**t)
    }

    /// Whether a version of `key` written at `version_seq` is hidden from a
    /// reader at `read_seq`.
    pub fn hides(&self, key: &[u8], version_seq: u64, read_seq: u64) -> bool {
        !self.list.is_empty() && self.covering(key, version_seq, read_seq).is_some()
    }

    /// This list with `tombstone` added.
    pub fn with(&self, tombstone: Arc<RangeTombstone>) -> Self {
        let mut list = self.list.clone();
        list.push(tombstone);
        Self::new(list)
    }

    /// This list without the tombstones whose sequence numbers are in `seqs`.
    pub fn without(&self, seqs: &[u64]) -> Self {
        RangeTombstones {
            list: self
                .list
                .iter()
                .filter(|t| !seqs.contains(&t.seq))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> RangeTombstones {
        RangeTombstones::new(vec![
            Arc::new(RangeTombstone::new(b"b".to_vec(), b"d".to_vec(), 10, false)),
            Arc::new(RangeTombstone::new(b"a".to_vec(), b"c".to_vec(), 20, false)),
        ])
    }

    #[test]
    fn hides_only_older_versions_from_readers_that_see_the_tombstone() {
        let l = list();
        assert!(l.hides(b"b", 5, 10));
        assert!(!l.hides(b"b", 5, 9), "the reader is older than both");
        assert!(!l.hides(b"b", 25, 30), "the version is newer than both");
        assert!(l.hides(b"b", 15, 20), "only the newer tombstone covers it");
        assert!(!l.hides(b"c", 15, 30), "c is past the newer one's end");
        assert!(!l.hides(b"d", 1, 30), "the end is exclusive");
        assert_eq!(l.covering(b"b", 1, 30).map(|t| t.seq), Some(20));
    }

    #[test]
    fn removing_by_sequence_number() {
        let l = list().without(&[20]);
        assert_eq!(l.len(), 1);
        assert!(!l.hides(b"a", 1, 30));
        assert!(l.hides(b"b", 1, 30));
    }
}
