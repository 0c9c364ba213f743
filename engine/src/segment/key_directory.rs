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
//! over 8. A key-ordered run is already in order; a log segment is sorted
//! once. Range deletes and log data are left out: neither is a version of a
//! key that a dropped range delete could let back in.

use std::cmp::Ordering;

use crate::format::record::{RecordKind, RecordView};
use crate::segment::scan::scan_frames;

/// A sealed segment's keyed records in `(keyspace, key)` order.
#[derive(Debug)]
pub struct KeyDirectory {
    /// Record offsets over 8 (records are 8-byte aligned), in key order.
    slots: Vec<u32>,
}

impl KeyDirectory {
    /// The directory of the records in `bytes` (the segment's written
    /// bytes, header included).
    pub fn build(bytes: &[u8]) -> Self {
        let mut keyed: Vec<(u32, &[u8], u32)> = Vec::new();
        let mut sorted = true;
        scan_frames(bytes, |offset, r| {
            if matches!(r.kind, RecordKind::RangeDelete | RecordKind::LogData) {
                return;
            }
            // A segment cannot exceed `MAX_SEGMENT_BYTES` (2^34): the
            // offset over 8 fits in 32 bits.
            let slot = (offset >> 3) as u32;
            if let Some(&(ks, key, _)) = keyed.last() {
                sorted &= (ks, key) <= (r.keyspace, r.key);
            }
            keyed.push((r.keyspace, r.key, slot));
        });
        if !sorted {
            keyed.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        }
        KeyDirectory {
            slots: keyed.into_iter().map(|(_, _, slot)| slot).collect(),
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
        let at = |slot: u32| {
            let offset = (slot as usize) << 3;
            bytes.get(offset..).and_then(|b| RecordView::parse(b).ok())
        };
        let first = self.slots.partition_point(|&slot| {
            at(slot).is_some_and(|r| (r.keyspace, r.key).cmp(&(keyspace, start)) == Ordering::Less)
        });
        for &slot in &self.slots[first..] {
            let Some(r) = at(slot) else { return true };
            if r.keyspace != keyspace || r.key >= end {
                return false;
            }
            if r.seq < seq {
                return true;
            }
        }
        false
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use crate::format::segment_header::SegmentKind;
    use crate::keyspace::KeyspaceId;
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
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
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
                }
            }
        };
        check(&db, SegmentKind::Log, &mut next);
        db.compact().unwrap();
        check(&db, SegmentKind::Compacted, &mut next);
    }
}
