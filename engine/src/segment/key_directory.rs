//! The keyed records of a sealed segment, sorted by keyspace and key, so
//! that compaction can tell exactly whether the segment holds a record a
//! range delete covers (a key in `[start, end)` older than the delete).
//!
//! A key span (smallest..largest key) cannot tell: a run that keeps live
//! keys on both sides of a deleted range spans it for ever, and a range
//! delete it seems to hold was never dropped (a fuzz run's database kept
//! 126,170 of them for 24 live keys). A Bloom filter cannot answer for a
//! range at all.
//!
//! Built in memory on first use, from one walk of the segment (sealed
//! segments never change): four bytes per keyed record, the record's offset
//! over 8, and the smallest sequence number of every 64 records. A
//! key-ordered run is already in order; a log segment is sorted once. A
//! question costs two binary searches (a record parse per step), then at
//! most two partial blocks of records and one number per whole block. Range deletes and log data are left out: neither is a version of a
//! key that a dropped range delete could let back in.

use std::cmp::Ordering;

use crate::format::record::{RecordKind, RecordView};
use crate::segment::scan::scan_frames;

/// Records per block of [`KeyDirectory::block_min_seq`].
const BLOCK: usize = 64;

/// A sealed segment's keyed records in `(keyspace, key)` order.
#[derive(Debug)]
pub struct KeyDirectory {
    /// Record offsets over 8 (records are 8-byte aligned), in key order.
    slots: Vec<u32>,
    /// The smallest sequence number of each block of [`BLOCK`] slots, so
    /// that a question about a wide range whose records are all newer (a
    /// range deleted, then written again) reads two partial blocks and a
    /// number per block, not every record.
    block_min_seq: Vec<u64>,
}

impl KeyDirectory {
    /// Heap bytes of the directory.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 4 + self.block_min_seq.len() * 8
    }

    /// The directory of the records in `bytes` (the segment's written
    /// bytes, header included).
    pub fn build(bytes: &[u8]) -> Self {
        let mut keyed: Vec<(u32, &[u8], u32, u64)> = Vec::new();
        let mut sorted = true;
        scan_frames(bytes, |offset, r| {
            if matches!(r.kind, RecordKind::RangeDelete | RecordKind::LogData) {
                return;
            }
            // A segment cannot exceed `MAX_SEGMENT_BYTES` (2^34): the
            // offset over 8 fits in 32 bits.
            let slot = (offset >> 3) as u32;
            if let Some(&(ks, key, _, _)) = keyed.last() {
                sorted &= (ks, key) <= (r.keyspace, r.key);
            }
            keyed.push((r.keyspace, r.key, slot, r.seq));
        });
        if !sorted {
            keyed.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        }
        let block_min_seq = keyed
            .chunks(BLOCK)
            .map(|block| block.iter().map(|k| k.3).min().unwrap_or(u64::MAX))
            .collect();
        KeyDirectory {
            slots: keyed.into_iter().map(|k| k.2).collect(),
            block_min_seq,
        }
    }

    /// Whether a record of `keyspace` with a key in `[start, end)` and a
    /// sequence number below `seq` is in `bytes` (the same segment's bytes).
    /// A record that cannot be read counts as such a record.
    pub fn holds_older_in(
        &self,
        bytes: &[u8],
        keyspace: u32,
        start: &[u8],
        end: &[u8],
        seq: u64,
    ) -> bool {
        let first = self.position(bytes, keyspace, start);
        let end = self.position(bytes, keyspace, end).max(first);
        let mut i = first;
        while i < end {
            let whole_block = i.is_multiple_of(BLOCK) && i + BLOCK <= end;
            if whole_block {
                if self.block_min_seq[i / BLOCK] < seq {
                    return true;
                }
                i += BLOCK;
                continue;
            }
            match record_at(bytes, self.slots[i]) {
                Some(r) if r.seq >= seq => i += 1,
                _ => return true,
            }
        }
        false
    }

    /// Whether a record of `keyspace` with a sequence number below `seq`
    /// and a key `covered` accepts is in `bytes` (the same segment's
    /// bytes): every record of the keyspace is a candidate, but a block
    /// whose records are all newer is passed over whole. A record that
    /// cannot be read counts as such a record.
    pub fn holds_older_where(
        &self,
        bytes: &[u8],
        keyspace: u32,
        seq: u64,
        covered: &dyn Fn(&[u8]) -> bool,
    ) -> bool {
        let first = self.position(bytes, keyspace, &[]);
        let end = match keyspace.checked_add(1) {
            Some(next) => self.position(bytes, next, &[]),
            None => self.slots.len(),
        };
        let mut i = first;
        while i < end {
            if i.is_multiple_of(BLOCK) && self.block_min_seq[i / BLOCK] >= seq {
                i += BLOCK;
                continue;
            }
            match record_at(bytes, self.slots[i]) {
                Some(r) if r.seq >= seq || !covered(r.key) => i += 1,
                _ => return true,
            }
        }
        false
    }

    /// The position of the first record at or after `(keyspace, key)`.
    fn position(&self, bytes: &[u8], keyspace: u32, key: &[u8]) -> usize {
        self.slots.partition_point(|&slot| {
            record_at(bytes, slot)
                .is_some_and(|r| (r.keyspace, r.key).cmp(&(keyspace, key)) == Ordering::Less)
        })
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * 4 + self.block_min_seq.capacity() * 8
    }
}

/// The record at `slot` (its offset over 8), if it can be read.
fn record_at(bytes: &[u8], slot: u32) -> Option<RecordView<'_>> {
    let offset = (slot as usize) << 3;
    bytes.get(offset..).and_then(|b| RecordView::parse(b).ok())
}

#[cfg(test)]
mod tests {
    use crate::db::keyspace::KeyspaceId;
    use crate::format::segment_header::SegmentKind;
    use crate::segment::Segment;
    use crate::segment::scan::scan_frames;
    use crate::{Db, Options, WriteBatch, WriteOptions};

    /// What the directory must answer, found by reading every record.
    fn holds_by_scan(s: &Segment, start: &[u8], end: &[u8], seq: u64) -> bool {
        let mut found = false;
        scan_frames(s.written_bytes(), |_, r| {
            let keyed = !matches!(
                r.kind,
                crate::format::record::RecordKind::RangeDelete
                    | crate::format::record::RecordKind::LogData
            );
            found |= keyed && r.keyspace == 0 && start <= r.key && r.key < end && r.seq < seq;
        });
        found
    }

    /// Every sealed segment answers as a scan of its records does, in log
    /// order (sorted by the directory) and in key order (a compacted run).
    #[test]
    fn answers_as_a_scan_of_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            segment_bytes: 64 << 10,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        let mut rng = crate::test_rng::TestRng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = |m: u64| rng.below(m);
        let key = |i: u64| (i as u16).to_be_bytes();
        for i in 0..1_500u64 {
            let k = key(next(900));
            match i % 9 {
                0 => db.delete(ks, &k, &w).unwrap(),
                1 => {
                    let mut b = WriteBatch::new();
                    b.delete_range(ks, &k, &key(next(900)));
                    db.write(&b, &w).unwrap();
                }
                _ => db.put(ks, &k, &[1; 30], &w).unwrap(),
            }
        }
        let check = |db: &Db, kind: SegmentKind, next: &mut dyn FnMut(u64) -> u64| {
            let shared = db.shared();
            let active = shared.lock_writer().active.id();
            let table = shared.segments.load_full();
            let sealed: Vec<_> = table.iter().filter(|s| s.id() != active).collect();
            assert!(sealed.iter().any(|s| s.kind() == kind));
            for s in sealed {
                for _ in 0..300 {
                    let (a, b) = (next(950), next(950));
                    let (start, end) = (key(a.min(b)), key(a.max(b) + next(3)));
                    let seq = next(1_600);
                    assert_eq!(
                        s.sealed_holds_older_in(0, &start, &end, seq),
                        holds_by_scan(s, &start, &end, seq),
                        "segment {} [{start:?}, {end:?}) below {seq}",
                        s.id()
                    );
                    // The same keys picked by a predicate (a range in an
                    // order other than the bytes').
                    let covered = |k: &[u8]| start.as_slice() <= k && k < end.as_slice();
                    assert_eq!(
                        s.sealed_holds_older_where(0, seq, &covered),
                        holds_by_scan(s, &start, &end, seq),
                        "segment {} where [{start:?}, {end:?}) below {seq}",
                        s.id()
                    );
                }
            }
        };
        check(&db, SegmentKind::Log, &mut next);
        db.compact().unwrap();
        check(&db, SegmentKind::Compacted, &mut next);
    }
}
