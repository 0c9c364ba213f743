//! Counters a user can read.

use std::time::Duration;

/// A point-in-time reading of the database's counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Keys with a value, over all keyspaces.
    pub live_keys: u64,
    /// Index entries, including deleted keys whose tombstones are still kept.
    pub index_entries: u64,
    /// Heap bytes held by the indexes.
    pub index_bytes: u64,
    /// The memory all indexes of the process allocate from (shared by
    /// every open database): bytes in use, kept free for reuse, and mapped.
    pub index_heap: crate::index::NodeHeapUsage,
    /// Bytes of segment files mapped into memory (their current lengths).
    pub mapped_bytes: u64,
    /// Bytes of records in segments (live and dead).
    pub data_bytes: u64,
    /// Bytes of records no reader can reach any more.
    pub dead_bytes: u64,
    /// Live segment files.
    pub segments: u64,
    /// Write batches applied since open.
    pub writes: u64,
    /// Batch operations applied since open.
    pub keys_written: u64,
    /// Compactions run since open.
    pub compactions: u64,
    /// Of those, the passes that put sealed log segments in key order or
    /// merged key-ordered runs (see `Options::key_order_run_bytes`).
    pub key_order_passes: u64,
    /// Segments whose records lie in log (write) order: the active segment
    /// and sealed log segments not yet put in key order.
    pub log_segments: u64,
    /// The id of the oldest of those (the file the log's replay starts
    /// from), if any.
    pub oldest_log_segment: Option<u32>,
    /// Times the set of segment files changed since open (a log rotation,
    /// a compaction's install, a segment dropped).
    pub segment_table_changes: u64,
    /// Bytes freed by compaction since open.
    pub bytes_reclaimed: u64,
    /// Compaction passes that failed since open.
    pub compaction_errors: u64,
    /// Sleeps writers took since open because compaction was behind (see
    /// `Options::write_slowdown_debt_bytes`).
    pub slowed_write_sleeps: u64,
    /// Open snapshots (cursors, which hold their versions as snapshots
    /// do, are not counted, as RocksDB's iterators are not).
    pub snapshots_open: u64,
    /// Sequence number and age of the oldest open snapshot.
    pub oldest_snapshot: Option<(u64, Duration)>,
    /// Old versions kept in new places for open snapshots.
    pub relocated_versions: u64,
    /// The last sequence number made visible.
    pub latest_sequence: u64,
    /// Range deletes still kept (not yet dropped by compaction).
    pub range_tombstones: u64,
    /// Records the open that started this handle read from the segments:
    /// all of them without a usable index checkpoint, else only those
    /// written after its cut.
    pub records_read_at_open: u64,
    /// What the database holds against a memory budget (see
    /// [`crate::memory_budget`]), whether or not it has one.
    pub memory_use: crate::MemoryUse,
    /// Times the database was found over its memory budget and its
    /// rebuildable memory dropped, its index packed, its heap trimmed.
    pub memory_budget_actions: u64,
    /// Whether, at the last check, it was still over its budget after that
    /// (its packed index alone is more than the budget).
    pub memory_over_budget: bool,
}

impl Stats {
    /// Bytes of records that are still reachable.
    pub fn live_bytes(&self) -> u64 {
        self.data_bytes.saturating_sub(self.dead_bytes)
    }
}
