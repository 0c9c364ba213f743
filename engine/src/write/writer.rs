//! The writer's state, guarded by the writer lock, and the group-commit
//! state beside it. Plain data: the steps that change them are in
//! `write/log_writer.rs` and `write/durable.rs`.

use std::sync::Arc;

use crate::segment::Segment;

/// The writer's state, guarded by the writer lock.
#[derive(Debug)]
pub(crate) struct Writer {
    /// The segment appended to.
    pub active: Arc<Segment>,
    /// Sequence number of the next record.
    pub next_seq: u64,
    /// Total bytes appended since open; orders writes for group commit.
    pub ticket: u64,
    /// The manifest's contents (keyspaces, live segments).
    pub manifest: crate::format::manifest::Manifest,
    /// The largest offset a watermark frame in the active segment names.
    pub watermark_logged: u64,
    /// Reused encoding buffer.
    frame: Vec<u8>,
}

/// Group-commit state: everything up to this ticket is on stable storage.
#[derive(Debug, Default)]
pub(crate) struct SyncState {
    pub synced_ticket: u64,
    /// What the last successful fdatasync of a log segment covered.
    pub durable: Option<crate::format::live_segments::Watermark>,
}

impl Writer {
    pub fn new(
        active: Arc<Segment>,
        next_seq: u64,
        manifest: crate::format::manifest::Manifest,
    ) -> Self {
        Writer {
            active,
            next_seq,
            ticket: 0,
            manifest,
            watermark_logged: 0,
            frame: Vec::new(),
        }
    }

    /// The reusable encoding buffer, emptied; give it back with
    /// [`Self::return_frame_buffer`].
    pub fn take_frame_buffer(&mut self) -> Vec<u8> {
        let mut buffer = std::mem::take(&mut self.frame);
        buffer.clear();
        buffer
    }

    /// Keeps `buffer` for the next write (unless it grew very large).
    pub fn return_frame_buffer(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() <= 1 << 20 {
            self.frame = buffer;
        }
    }
}
