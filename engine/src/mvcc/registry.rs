//! The set of live snapshots.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Live snapshots by sequence number.
///
/// A sorted vector of (sequence number, registrations, first registered):
/// a new registration is nearly always at the newest sequence number, so it
/// appends or bumps the last entry, and the vector keeps its capacity, so
/// creating and dropping a cursor allocates nothing here.
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
    count: usize,
    since: Instant,
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
    /// Registers a snapshot at the current visible sequence number.
    pub fn register(&self, visible: &AtomicU64) -> u64 {
        let mut live = self.lock();
        let seq = visible.load(Ordering::Acquire);
        add(&mut live, seq);
        seq
    }

    /// Adds one more registration at `seq`, which must already be live
    /// (a cursor created from a snapshot shares its sequence number).
    pub fn register_at(&self, seq: u64) {
        add(&mut self.lock(), seq);
    }

    /// Releases one registration of `seq`.
    pub fn release(&self, seq: u64) {
        let mut live = self.lock();
        if let Ok(i) = live.binary_search_by_key(&seq, |l| l.seq) {
            live[i].count -= 1;
            if live[i].count == 0 {
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

    /// Number of open snapshots (iterators included).
    pub fn open_count(&self) -> usize {
        self.lock().iter().map(|l| l.count).sum()
    }

    /// Sequence number of the oldest live snapshot.
    pub fn oldest_seq(&self) -> Option<u64> {
        self.lock().first().map(|l| l.seq)
    }

    /// Age of the oldest live snapshot.
    pub fn oldest_age(&self) -> Option<Duration> {
        self.lock()
            .iter()
            .map(|l| l.since)
            .min()
            .map(|t| t.elapsed())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<LiveSeq>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Adds a registration at `seq`, keeping `live` sorted; the newest
/// sequence number (the common case) needs no search.
fn add(live: &mut Vec<LiveSeq>, seq: u64) {
    match live.last_mut() {
        Some(last) if last.seq == seq => last.count += 1,
        Some(last) if last.seq > seq => match live.binary_search_by_key(&seq, |l| l.seq) {
            Ok(i) => live[i].count += 1,
            Err(i) => live.insert(i, LiveSeq::new(seq)),
        },
        _ => live.push(LiveSeq::new(seq)),
    }
}

impl LiveSeq {
    fn new(seq: u64) -> Self {
        LiveSeq {
            seq,
            count: 1,
            since: Instant::now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_release_and_ranges() {
        let reg = SnapshotRegistry::default();
        let visible = AtomicU64::new(5);
        assert_eq!(reg.register(&visible), 5);
        assert_eq!(reg.register(&visible), 5);
        visible.store(9, Ordering::Release);
        assert_eq!(reg.register(&visible), 9);
        assert_eq!(reg.open_count(), 3);
        let set = reg.capture(&visible);
        assert_eq!(set.seqs, vec![5, 9]);
        assert!(set.any_in(5, 6));
        assert!(!set.any_in(6, 9));
        assert!(set.any_below(6));
        reg.release(5);
        reg.release(5);
        assert_eq!(reg.oldest_seq(), Some(9));
    }

    /// A registration below the newest live one (a cursor of an old
    /// snapshot) joins its own sequence number, keeping the order.
    #[test]
    fn registrations_out_of_order_stay_sorted() {
        let reg = SnapshotRegistry::default();
        let visible = AtomicU64::new(3);
        reg.register(&visible);
        visible.store(7, Ordering::Release);
        reg.register(&visible);
        reg.register_at(3);
        reg.register_at(5);
        assert_eq!(reg.capture(&visible).seqs, vec![3, 5, 7]);
        assert_eq!(reg.open_count(), 4);
        reg.release(3);
        reg.release(3);
        reg.release(4);
        assert_eq!(reg.capture(&visible).seqs, vec![5, 7]);
        reg.release(5);
        reg.release(7);
        assert_eq!(reg.oldest_seq(), None);
        assert_eq!(reg.open_count(), 0);
    }
}
