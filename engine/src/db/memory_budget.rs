//! A bound on the memory the engine holds of its own, shared by cloning
//! (several databases may share one, as RocksDB's `WriteBufferManager` is
//! shared), and what a database holds against it.
//!
//! What counts ([`MemoryUse`]):
//! - the database's index: its nodes and leaves, by the index's own count;
//! - the free memory the index heap keeps resident (one heap serves every
//!   database of the process, so its free memory counts against each
//!   database's budget);
//! - the key filters and key directories compaction built for sealed
//!   segments (rebuildable from the segments).
//!
//! What does not: the mapped segment files (the kernel's page cache holds
//! those and gives them up under pressure; a memory control group charges
//! them to the process, see `io::os`), the buffers of a write in
//! progress, and iterators' and snapshots' pins.
//!
//! How it is kept (by the compaction thread, `compaction::budget`): over
//! the budget, it drops the segments' filters and directories, packs the
//! index's full leaves without waiting for the keyspace to be quiet, and
//! gives the heap's free small pages back. The index itself is never
//! evicted: a database whose packed index alone is over the budget stays
//! over it, and [`crate::Stats::memory_over_budget`] says so. Writes are
//! never stalled for the budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A memory budget in bytes, shared by cloning; 0 means unlimited.
#[derive(Clone, Debug, Default)]
pub struct MemoryBudget(Arc<AtomicU64>);

impl MemoryBudget {
    /// A budget of `bytes` (0: unlimited).
    pub fn new(bytes: u64) -> Self {
        MemoryBudget(Arc::new(AtomicU64::new(bytes)))
    }

    /// The budget in bytes (0: unlimited).
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Changes the budget, for every clone.
    pub fn set_bytes(&self, bytes: u64) {
        self.0.store(bytes, Ordering::Relaxed);
    }

    /// Whether `used` is over the budget (never, if unlimited).
    pub fn is_exceeded_by(&self, used: &MemoryUse) -> bool {
        let budget = self.bytes();
        budget != 0 && used.total() > budget
    }
}

/// What a database holds against its memory budget (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// Bytes of the database's indexes, by their own count.
    pub index_bytes: u64,
    /// Free bytes the index heap keeps resident (shared by every database
    /// of the process), pages kept ready for writers included.
    pub index_heap_free_bytes: u64,
    /// Bytes of the key filters and key directories built for sealed
    /// segments.
    pub segment_filter_bytes: u64,
}

impl MemoryUse {
    /// Everything that counts against the budget.
    pub fn total(&self) -> u64 {
        self.index_bytes + self.index_heap_free_bytes + self.segment_filter_bytes
    }
}
