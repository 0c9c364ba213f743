//! The set of live snapshots.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Live snapshots by sequence number.
///
/// Registration reads the visible sequence number under the registry's
/// lock, and compaction captures the set together with the visible sequence
/// under the same lock, so a snapshot registered after a capture always has
/// a sequence number at least as large as the captured one. The lock is
/// held for a few instructions and never by a reader of data.
#[derive(Debug, Default)]
pub struct SnapshotRegistry {
    live: Mutex<BTreeMap<u64, (usize, Instant)>>,
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
        live.entry(seq).or_insert((0, Instant::now())).0 += 1;
        seq
    }

    /// Adds one more registration at `seq`, which must already be live
    /// (a cursor created from a snapshot shares its sequence number).
    pub fn register_at(&self, seq: u64) {
        self.lock().entry(seq).or_insert((0, Instant::now())).0 += 1;
    }

    /// Releases one registration of `seq`.
    pub fn release(&self, seq: u64) {
        let mut live = self.lock();
        if let Some(entry) = live.get_mut(&seq) {
            entry.0 -= 1;
            if entry.0 == 0 {
                live.remove(&seq);
            }
        }
    }

    /// Copies the live set and the visible sequence number atomically.
    pub fn capture(&self, visible: &AtomicU64) -> SnapshotSet {
        let live = self.lock();
        SnapshotSet {
            seqs: live.keys().copied().collect(),
            visible: visible.load(Ordering::Acquire),
        }
    }

    /// Number of open snapshots (iterators included).
    pub fn open_count(&self) -> usize {
        self.lock().values().map(|e| e.0).sum()
    }

    /// Sequence number of the oldest live snapshot.
    pub fn oldest_seq(&self) -> Option<u64> {
        self.lock().keys().next().copied()
    }

    /// Age of the oldest live snapshot.
    pub fn oldest_age(&self) -> Option<Duration> {
        self.lock().values().map(|e| e.1).min().map(|t| t.elapsed())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, (usize, Instant)>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
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
}
