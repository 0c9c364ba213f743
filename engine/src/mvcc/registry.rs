//! The set of live snapshots.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a registration holds a sequence number for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// An explicit snapshot: counted by [`SnapshotRegistry::snapshot_count`]
    /// and timed for [`SnapshotRegistry::oldest_snapshot`].
    Snapshot,
    /// A cursor: it keeps its versions from compaction like a snapshot,
    /// but is neither counted nor timed (as RocksDB's iterators are not in
    /// its snapshot list), so creating one reads no clock.
    Cursor,
}

/// Live snapshots by sequence number.
///
/// A sorted vector of (sequence number, registrations, explicit snapshots,
/// first snapshot registered): a new registration is nearly always at the
/// newest sequence number, so it appends or bumps the last entry, and the
/// vector keeps its capacity, so creating and dropping a cursor allocates
/// nothing here.
///
/// Registration reads the visible sequence number under the registry's
/// lock, and compaction captures the set together with the visible sequence
/// under the same lock, so a snapshot registered after a capture always has
/// a sequence number at least as large as the captured one. The lock is
/// held for a few instructions and never by a reader of data.
#[derive(Debug, Default)]
pub struct SnapshotRegistry {
    live: Mutex<Vec<LiveSeq>>,
}

/// The registrations at one sequence number.
#[derive(Debug)]
struct LiveSeq {
    seq: u64,
    /// Every registration, cursors included.
    count: usize,
    /// The explicit snapshots among them.
    snapshots: usize,
    /// When the first of the explicit snapshots now live was registered.
    since: Option<Instant>,
}

/// A consistent copy of the registry, taken by compaction.
#[derive(Clone, Debug, Default)]
pub struct SnapshotSet {
    /// Sequence numbers of the live snapshots, ascending.
    pub seqs: Vec<u64>,
    /// The visible sequence number when the copy was taken; snapshots
    /// registered later see at least this.
    pub visible: u64,
}

impl SnapshotSet {
    /// Whether some captured snapshot `s` has `lo <= s < hi`.
    pub fn any_in(&self, lo: u64, hi: u64) -> bool {
        let i = self.seqs.partition_point(|&s| s < lo);
        self.seqs.get(i).is_some_and(|&s| s < hi)
    }

    /// Whether some captured snapshot is older than `seq`.
    pub fn any_below(&self, seq: u64) -> bool {
        self.seqs.first().is_some_and(|&s| s < seq)
    }
}

impl SnapshotRegistry {
    /// Registers `holder` at the current visible sequence number.
    pub fn register(&self, visible: &AtomicU64, holder: Holder) -> u64 {
        let mut live = self.lock();
        let seq = visible.load(Ordering::Acquire);
        add(&mut live, seq, holder);
        seq
    }

    /// Adds one more registration at `seq`, which must already be live
    /// (a cursor created from a snapshot shares its sequence number).
    pub fn register_at(&self, seq: u64, holder: Holder) {
        add(&mut self.lock(), seq, holder);
    }

    /// Releases one registration of `holder` at `seq`.
    pub fn release(&self, seq: u64, holder: Holder) {
        let mut live = self.lock();
        if let Ok(i) = live.binary_search_by_key(&seq, |l| l.seq) {
            let entry = &mut live[i];
            entry.count = entry.count.saturating_sub(1);
            if holder == Holder::Snapshot {
                entry.snapshots = entry.snapshots.saturating_sub(1);
                if entry.snapshots == 0 {
                    entry.since = None;
                }
            }
            if entry.count == 0 {
                live.remove(i);
            }
        }
    }

    /// Copies the live set and the visible sequence number atomically.
    pub fn capture(&self, visible: &AtomicU64) -> SnapshotSet {
        let live = self.lock();
        SnapshotSet {
            seqs: live.iter().map(|l| l.seq).collect(),
            visible: visible.load(Ordering::Acquire),
        }
    }

    /// Number of open explicit snapshots (cursors not counted).
    pub fn snapshot_count(&self) -> usize {
        self.lock().iter().map(|l| l.snapshots).sum()
    }

    /// Sequence number of the oldest registration, cursors included: what
    /// compaction must keep.
    pub fn oldest_seq(&self) -> Option<u64> {
        self.lock().first().map(|l| l.seq)
    }

    /// Sequence number and age of the oldest open explicit snapshot.
    pub fn oldest_snapshot(&self) -> Option<(u64, Duration)> {
        let live = self.lock();
        let oldest = live.iter().find(|l| l.snapshots > 0)?;
        Some((
            oldest.seq,
            oldest.since.map_or(Duration::ZERO, |t| t.elapsed()),
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LiveSeq>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Adds a registration of `holder` at `seq`, keeping `live` sorted; the
/// newest sequence number (the common case) needs no search.
fn add(live: &mut Vec<LiveSeq>, seq: u64, holder: Holder) {
    let at = match live.last() {
        Some(last) if last.seq == seq => live.len() - 1,
        Some(last) if last.seq > seq => match live.binary_search_by_key(&seq, |l| l.seq) {
            Ok(i) => i,
            Err(i) => {
                live.insert(i, LiveSeq::new(seq));
                i
            }
        },
        _ => {
            live.push(LiveSeq::new(seq));
            live.len() - 1
        }
    };
    let entry = &mut live[at];
    entry.count += 1;
    if holder == Holder::Snapshot {
        entry.snapshots += 1;
        entry.since.get_or_insert_with(Instant::now);
    }
}

impl LiveSeq {
    fn new(seq: u64) -> Self {
        LiveSeq {
            seq,
            count: 0,
            snapshots: 0,
            since: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Holder::{Cursor, Snapshot};

    #[test]
    fn register_release_and_ranges() {
        let reg = SnapshotRegistry::default();
        let visible = AtomicU64::new(5);
        assert_eq!(reg.register(&visible, Snapshot), 5);
        assert_eq!(reg.register(&visible, Snapshot), 5);
        visible.store(9, Ordering::Release);
        assert_eq!(reg.register(&visible, Snapshot), 9);
        assert_eq!(reg.snapshot_count(), 3);
        let set = reg.capture(&visible);
        assert_eq!(set.seqs, vec![5, 9]);
        assert!(set.any_in(5, 6));
        assert!(!set.any_in(6, 9));
        assert!(set.any_below(6));
        reg.release(5, Snapshot);
        reg.release(5, Snapshot);
        assert_eq!(reg.oldest_seq(), Some(9));
    }

    /// A registration below the newest live one (a cursor of an old
    /// snapshot) joins its own sequence number, keeping the order.
    #[test]
    fn registrations_out_of_order_stay_sorted() {
        let reg = SnapshotRegistry::default();
        let visible = AtomicU64::new(3);
        reg.register(&visible, Snapshot);
        visible.store(7, Ordering::Release);
        reg.register(&visible, Snapshot);
        reg.register_at(3, Snapshot);
        reg.register_at(5, Snapshot);
        assert_eq!(reg.capture(&visible).seqs, vec![3, 5, 7]);
        assert_eq!(reg.snapshot_count(), 4);
        reg.release(3, Snapshot);
        reg.release(3, Snapshot);
        reg.release(4, Snapshot);
        assert_eq!(reg.capture(&visible).seqs, vec![5, 7]);
        reg.release(5, Snapshot);
        reg.release(7, Snapshot);
        assert_eq!(reg.oldest_seq(), None);
        assert_eq!(reg.snapshot_count(), 0);
    }

    /// Cursors hold their sequence numbers from compaction but are neither
    /// counted nor timed as snapshots, as in RocksDB, where an iterator is
    /// not in the snapshot list.
    #[test]
    fn cursors_are_kept_but_not_counted_as_snapshots() {
        let reg = SnapshotRegistry::default();
        let visible = AtomicU64::new(4);
        reg.register(&visible, Cursor);
        assert_eq!(reg.oldest_seq(), Some(4));
        assert_eq!(reg.snapshot_count(), 0);
        assert_eq!(reg.oldest_snapshot(), None);
        visible.store(8, Ordering::Release);
        reg.register(&visible, Snapshot);
        reg.register_at(8, Cursor);
        assert_eq!(reg.capture(&visible).seqs, vec![4, 8]);
        assert_eq!(reg.snapshot_count(), 1);
        assert_eq!(reg.oldest_snapshot().map(|(seq, _)| seq), Some(8));
        reg.release(8, Snapshot);
        assert_eq!(reg.oldest_snapshot(), None);
        assert_eq!(reg.capture(&visible).seqs, vec![4, 8]);
        reg.release(8, Cursor);
        reg.release(4, Cursor);
        assert_eq!(reg.oldest_seq(), None);
    }
}
