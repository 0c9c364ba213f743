//! Range tombstones: a range delete is one record, `[start, end)` at one
//! sequence number, whatever the number of keys it covers.
//!
//! Each keyspace keeps its live range tombstones in memory, sorted by start
//! key in the keyspace's [`RangeOrder`] and published through `arc-swap`
//! (rebuilt by recovery from the log).
//! A version of a key is hidden from a reader at sequence number `s` when a
//! tombstone with a sequence number in `(version, s]` covers the key.
//!
//! Compaction *applies* a tombstone once no snapshot is older than it: it
//! removes the index entries of the keys it covers whose newest version is
//! older (so the index forgets deleted keys and their records become dead
//! bytes), then marks it applied. It drops the tombstone itself once it is
//! applied and no record older than it survives outside the compaction's
//! inputs (see `compaction/rewrite.rs`).

use std::cmp::Ordering as KeyOrdering;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::key_order::RangeOrder;

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

    /// Whether `key` lies in `[start, end)` in `order`.
    pub fn contains(&self, order: &RangeOrder, key: &[u8]) -> bool {
        order.covers(&self.start, &self.end, key)
    }

    /// Whether compaction has removed the index entries it covers.
    pub fn is_applied(&self) -> bool {
        self.applied.load(Ordering::Acquire)
    }

    pub(crate) fn mark_applied(&self) {
        self.applied.store(true, Ordering::Release);
    }
}

/// A keyspace's live range tombstones, sorted by start key (in the
/// keyspace's [`RangeOrder`]) then sequence number. Immutable once
/// published; writers publish a new list.
///
/// The list is cut into chunks of at most 128 tombstones (`CHUNK_MOST`), each
/// shared (`Arc`) between successive lists: a range delete copies the
/// chunk it lands in and the chunk handles, not the whole list (a list of
/// 10,000 tombstones copied whole made each range delete cost ~110 µs).
///
/// A lookup finds the tombstones starting at or before a key by binary
/// search, then walks them backwards only while one of them reaches past
/// the key: within a chunk `reach[i]` is the position of the tombstone with
/// the largest end among its first `i + 1`, and across chunks
/// `chunk_reach[c]` is the chunk with the largest end among the first
/// `c + 1`, so the walk stops as soon as none of the rest can cover the key
/// (after one step for disjoint ranges, however many there are).
#[derive(Debug, Default, Clone)]
pub struct RangeTombstones {
    order: RangeOrder,
    chunks: Vec<Arc<Chunk>>,
    chunk_reach: Vec<u32>,
    len: usize,
}

/// Most tombstones in one chunk; a fuller one splits in two.
const CHUNK_MOST: usize = 128;

/// A run of the list, in order, with its own reach.
#[derive(Debug)]
struct Chunk {
    list: Vec<Arc<RangeTombstone>>,
    reach: Vec<u32>,
}

impl Chunk {
    /// A chunk of these tombstones (in order, at least one).
    fn new(order: &RangeOrder, list: Vec<Arc<RangeTombstone>>) -> Chunk {
        let reach = widest_so_far(order, list.len(), |i| &list[i].end);
        Chunk { list, reach }
    }

    /// The largest end of the chunk's tombstones.
    fn widest_end(&self) -> &[u8] {
        self.reach
            .last()
            .map_or(&[][..], |&r| self.list[r as usize].end.as_slice())
    }

    /// The tombstone among the first `upto` that hides a version of `key`
    /// at `version_seq` from a reader at `read_seq`, walking back from
    /// `upto`; `best` is the best found so far in later chunks.
    fn covering<'a>(
        &'a self,
        order: &RangeOrder,
        upto: usize,
        key: &[u8],
        (version_seq, read_seq): (u64, u64),
        mut best: Option<&'a RangeTombstone>,
    ) -> Option<&'a RangeTombstone> {
        let mut i = upto;
        while i > 0 {
            i -= 1;
            if order
                .compare(&self.list[self.reach[i] as usize].end, key)
                .is_le()
            {
                break;
            }
            let t = &*self.list[i];
            let visible = t.seq > version_seq && t.seq <= read_seq;
            let before_end = order.compare(key, &t.end).is_lt();
            if visible && before_end && best.is_none_or(|b| t.seq > b.seq) {
                best = Some(t);
            }
        }
        best
    }
}

/// For each of `n` items, the position of the one with the largest end
/// (`end_of`) among it and those before it: the reach a backward walk
/// stops at.
fn widest_so_far<'a>(order: &RangeOrder, n: usize, end_of: impl Fn(usize) -> &'a [u8]) -> Vec<u32> {
    let mut reach: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n {
        let widest = match reach.last() {
            Some(&r) if order.compare(end_of(r as usize), end_of(i)).is_ge() => r,
            _ => i as u32,
        };
        reach.push(widest);
    }
    reach
}

/// The order of the list: by start key in `order`, then sequence number.
fn list_order(order: &RangeOrder, a: &RangeTombstone, b: &RangeTombstone) -> KeyOrdering {
    order.compare(&a.start, &b.start).then(a.seq.cmp(&b.seq))
}

impl RangeTombstones {
    /// A list of these tombstones, whose ranges are in `order`.
    pub fn new(order: RangeOrder, mut list: Vec<Arc<RangeTombstone>>) -> Self {
        list.sort_by(|a, b| list_order(&order, a, b));
        Self::sorted(order, list)
    }

    /// An empty list whose ranges are in `order`.
    pub fn empty(order: RangeOrder) -> Self {
        Self::new(order, Vec::new())
    }

    /// A list of tombstones already in order, cut into half-full chunks.
    fn sorted(order: RangeOrder, list: Vec<Arc<RangeTombstone>>) -> Self {
        let chunks = list
            .chunks(CHUNK_MOST / 2)
            .map(|part| Arc::new(Chunk::new(&order, part.to_vec())))
            .collect();
        Self::of_chunks(order, chunks)
    }

    /// The list made of `chunks` (in order, none empty), with the reach
    /// across them computed.
    fn of_chunks(order: RangeOrder, chunks: Vec<Arc<Chunk>>) -> Self {
        let chunk_reach = widest_so_far(&order, chunks.len(), |c| chunks[c].widest_end());
        let len = chunks.iter().map(|c| c.list.len()).sum();
        RangeTombstones {
            order,
            chunks,
            chunk_reach,
            len,
        }
    }

    /// The order the ranges are in.
    pub fn order(&self) -> &RangeOrder {
        &self.order
    }

    /// Whether `t` (one of this list's kind) covers `key`.
    pub fn contains(&self, t: &RangeTombstone, key: &[u8]) -> bool {
        t.contains(&self.order, key)
    }

    /// Whether there are none (the readers' fast path).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of tombstones.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every tombstone, by start key.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<RangeTombstone>> {
        self.chunks.iter().flat_map(|c| c.list.iter())
    }

    /// The tombstone that hides a version of `key` written at `version_seq`
    /// from a reader at `read_seq`, if any: the one with the highest sequence
    /// number in `(version_seq, read_seq]` that covers `key`.
    pub fn covering(&self, key: &[u8], version_seq: u64, read_seq: u64) -> Option<&RangeTombstone> {
        // Chunks whose first tombstone starts at or before the key; of the
        // last one, only its tombstones that do.
        let order = &self.order;
        let mut c = self
            .chunks
            .partition_point(|chunk| order.compare(&chunk.list[0].start, key).is_le());
        let mut best = None;
        let mut last = true;
        while c > 0 {
            c -= 1;
            let widest = self.chunks[self.chunk_reach[c] as usize].widest_end();
            if order.compare(widest, key).is_le() {
                break;
            }
            let chunk = &self.chunks[c];
            let upto = match last {
                true => chunk
                    .list
                    .partition_point(|t| order.compare(&t.start, key).is_le()),
                false => chunk.list.len(),
            };
            last = false;
            best = chunk.covering(order, upto, key, (version_seq, read_seq), best);
        }
        best
    }

    /// Whether a version of `key` written at `version_seq` is hidden from a
    /// reader at `read_seq`.
    pub fn hides(&self, key: &[u8], version_seq: u64, read_seq: u64) -> bool {
        !self.is_empty() && self.covering(key, version_seq, read_seq).is_some()
    }

    /// This list with `tombstone` added in its place: a copy of the chunk it
    /// lands in (split in two once over 128) and of the chunk
    /// handles, not of the whole list.
    pub fn with(&self, tombstone: Arc<RangeTombstone>) -> Self {
        let order = &self.order;
        let before = |chunk: &Arc<Chunk>| list_order(order, &chunk.list[0], &tombstone).is_le();
        let at = self.chunks.partition_point(before).saturating_sub(1);
        let mut list = match self.chunks.get(at) {
            Some(chunk) => chunk.list.clone(),
            None => Vec::new(),
        };
        let pos = list.partition_point(|t| list_order(order, t, &tombstone).is_le());
        list.insert(pos, tombstone);
        let mut chunks = Vec::with_capacity(self.chunks.len() + 1);
        chunks.extend_from_slice(&self.chunks[..at]);
        if list.len() > CHUNK_MOST {
            let upper = list.split_off(list.len() / 2);
            chunks.push(Arc::new(Chunk::new(order, list)));
            chunks.push(Arc::new(Chunk::new(order, upper)));
        } else {
            chunks.push(Arc::new(Chunk::new(order, list)));
        }
        chunks.extend_from_slice(self.chunks.get(at + 1..).unwrap_or_default());
        Self::of_chunks(self.order.clone(), chunks)
    }

    /// This list without the tombstones whose sequence numbers are in `seqs`.
    pub fn without(&self, seqs: &[u64]) -> Self {
        let mut seqs = seqs.to_vec();
        seqs.sort_unstable();
        let list = self
            .iter()
            .filter(|t| seqs.binary_search(&t.seq).is_err())
            .cloned()
            .collect();
        Self::sorted(self.order.clone(), list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> RangeTombstones {
        RangeTombstones::new(
            RangeOrder::Bytewise,
            vec![
                Arc::new(RangeTombstone::new(b"b".to_vec(), b"d".to_vec(), 10, false)),
                Arc::new(RangeTombstone::new(b"a".to_vec(), b"c".to_vec(), 20, false)),
            ],
        )
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

    /// A range delete shares every chunk of the list but the one it lands
    /// in: its cost does not grow with the number of live tombstones.
    #[test]
    fn adding_a_tombstone_copies_one_chunk() {
        let key = |k: u64| k.to_be_bytes().to_vec();
        let mut list = RangeTombstones::default();
        for seq in 1..=5_000u64 {
            let start = seq.wrapping_mul(0x9E37_79B9) % 1_000_000;
            let next = list.with(Arc::new(RangeTombstone::new(
                key(start),
                key(start + 3),
                seq,
                false,
            )));
            let shared = next
                .chunks
                .iter()
                .filter(|c| list.chunks.iter().any(|old| Arc::ptr_eq(c, old)))
                .count();
            assert!(
                shared + 2 >= next.chunks.len(),
                "seq {seq}: {shared} of {}",
                next.chunks.len()
            );
            assert!(shared + 1 >= list.chunks.len(), "seq {seq}");
            list = next;
        }
        assert_eq!(list.len(), 5_000);
        assert!(list.chunks.len() >= 5_000 / CHUNK_MOST);
        assert!(
            list.iter()
                .zip(list.iter().skip(1))
                .all(|(a, b)| list_order(&RangeOrder::Bytewise, a, b).is_lt())
        );
    }

    #[test]
    fn removing_by_sequence_number() {
        let l = list().without(&[20]);
        assert_eq!(l.len(), 1);
        assert!(!l.hides(b"a", 1, 30));
        assert!(l.hides(b"b", 1, 30));
    }

    /// Orders keys by their bytes read from the last: the keys a range
    /// covers are scattered through the bytes' order.
    struct LastByteFirst;

    impl crate::mvcc::key_order::KeyOrder for LastByteFirst {
        fn name(&self) -> &str {
            "last-byte-first"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> KeyOrdering {
            a.iter().rev().cmp(b.iter().rev())
        }
    }

    /// The walk that stops at the reach must find what a scan of every
    /// tombstone finds: nested, overlapping, disjoint and equal ranges,
    /// added one at a time as range deletes are.
    #[test]
    fn lookups_match_a_scan_of_every_tombstone() {
        lookups_match_a_scan_in(RangeOrder::Bytewise);
    }

    /// The same in an order of the keyspace's own, where a range's keys
    /// are not neighbours in the bytes' order.
    #[test]
    fn lookups_match_a_scan_in_a_custom_order() {
        lookups_match_a_scan_in(RangeOrder::Custom(Arc::new(LastByteFirst)));
    }

    fn lookups_match_a_scan_in(order: RangeOrder) {
        let mut rng = crate::test_rng::TestRng::new(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| rng.below(m);
        // Keys whose order is the number's in either order.
        let key = |k: u64| match order.is_bytewise() {
            true => k.to_be_bytes().to_vec(),
            false => k.to_le_bytes().to_vec(),
        };
        let mut list = RangeTombstones::empty(order.clone());
        let mut all = Vec::new();
        for seq in 1..=1_200u64 {
            let start = next(1000);
            let end = start + 1 + next(if seq % 10 == 0 { 400 } else { 8 });
            let t = Arc::new(RangeTombstone::new(key(start), key(end), seq, false));
            all.push(t.clone());
            list = list.with(t);
            for _ in 0..8 {
                let k = key(next(1500));
                let (version, read) = (next(seq + 1), next(seq + 2));
                let expected = all
                    .iter()
                    .filter(|t| t.seq > version && t.seq <= read && t.contains(&order, &k))
                    .max_by_key(|t| t.seq)
                    .map(|t| t.seq);
                let found = list.covering(&k, version, read).map(|t| t.seq);
                assert_eq!(found, expected, "key {k:?} version {version} read {read}");
            }
        }
        assert!(list.chunks.len() > 10, "{} chunks", list.chunks.len());
        assert!(list.chunks.iter().all(|c| c.list.len() <= CHUNK_MOST));
        let dropped: Vec<u64> = (1..=1_200).filter(|s| s % 3 == 0).collect();
        let kept = list.without(&dropped);
        assert_eq!(kept.len(), 800);
        assert_eq!(kept.iter().count(), 800);
        for seq in (1..=1_200u64).step_by(7) {
            let key = all[seq as usize - 1].start.clone();
            let expected = all
                .iter()
                .filter(|t| t.seq % 3 != 0 && t.contains(&order, &key))
                .map(|t| t.seq)
                .max();
            assert_eq!(kept.covering(&key, 0, u64::MAX).map(|t| t.seq), expected);
        }
    }
}
