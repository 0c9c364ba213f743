//! Reading the log back as the batches that were written: [`BatchLog`],
//! from [`crate::Db::batches_since`].
//!
//! Every write is one batch frame in a log segment, so the log segments,
//! walked in id order, are the write history. A frame's records are packed
//! back to back in its body, and consecutive frames are separated by at
//! least a frame header, so the records `scan_frames` delivers belong to
//! one batch exactly while each starts where the previous one ended.
//!
//! Compaction replaces log segments with compaction outputs, which hold
//! live records but no history. Log segment *n* covers the sequence numbers
//! from its header's sequence floor up to the next log segment's floor; when
//! a log segment between two remaining ones is gone, the history has a gap,
//! and reading across it is an [`Error::HistoryGone`].

use std::collections::VecDeque;
use std::sync::Arc;

use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::record::{RecordKind, RecordView};
use crate::format::segment_header::SegmentKind;
use crate::segment::Segment;
use crate::segment::scan::scan_frames;

/// One record of a logged batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedRecord {
    /// Put, delete, merge, range delete or log data.
    pub kind: RecordKind,
    /// The keyspace written.
    pub keyspace: u32,
    /// The key.
    pub key: Vec<u8>,
    /// The value (empty for a delete, the operand of a merge, the first key
    /// kept by a range delete, whose `key` is the first key deleted, the
    /// blob of log data, whose `key` is empty).
    pub value: Vec<u8>,
}

/// One batch as the log holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedBatch {
    /// Sequence number of its first record (each record but log data takes
    /// one; a batch of log data alone has the number its next write would
    /// have taken).
    pub seq: u64,
    /// Its records, in order.
    pub records: Vec<LoggedRecord>,
}

/// The batches whose first sequence number lies after a given one, oldest
/// first, up to the sequence number visible when the walk began. Reads one
/// log segment at a time.
#[derive(Debug)]
pub struct BatchLog {
    /// Log segments not read yet, oldest first.
    segments: VecDeque<Arc<Segment>>,
    /// Batches of the segment being read.
    pending: VecDeque<LoggedBatch>,
    /// Only batches starting after this sequence number are returned.
    after: u64,
    /// Nothing above this sequence number is returned.
    visible: u64,
    /// The sequence number the next log segment should start at.
    expected_floor: Option<u64>,
    /// Set once an error was returned: the walk ends.
    failed: bool,
}

/// Starts a walk of the log of `shared` after sequence number `after`.
pub(crate) fn batches_since(shared: &Shared, after: u64) -> Result<BatchLog> {
    let mut segments: Vec<Arc<Segment>> = shared
        .segments
        .load()
        .iter()
        .filter(|s| s.kind() == SegmentKind::Log)
        .cloned()
        .collect();
    segments.sort_by_key(|s| s.id());
    let visible = shared.visible();
    let oldest = segments
        .first()
        .map_or(visible + 1, |s| s.header().seq_floor);
    if after < visible && after.saturating_add(1) < oldest {
        return Err(Error::HistoryGone {
            requested: after + 1,
            oldest,
        });
    }
    Ok(BatchLog {
        segments: segments.into(),
        pending: VecDeque::new(),
        after,
        visible,
        expected_floor: None,
        failed: false,
    })
}

impl BatchLog {
    /// Reads the next log segment's batches into `pending`.
    fn read_segment(&mut self, segment: &Segment) -> Result<()> {
        let floor = segment.header().seq_floor;
        if let Some(expected) = self.expected_floor
            && floor > expected
            && floor > self.after + 1
        {
            return Err(Error::HistoryGone {
                requested: expected.max(self.after + 1),
                oldest: floor,
            });
        }
        let bytes = segment.bytes();
        let written =
            usize::try_from(segment.written()).map_or(bytes.len(), |w| w.min(bytes.len()));
        let mut batches: Vec<LoggedBatch> = Vec::new();
        let mut frame_end = None;
        let mut last_seq = floor.saturating_sub(1);
        let outcome = scan_frames(&bytes[..written], |offset, record| {
            if record.kind != RecordKind::LogData {
                last_seq = last_seq.max(record.seq);
            }
            if frame_end != Some(offset) {
                batches.push(LoggedBatch {
                    seq: record.seq,
                    records: Vec::new(),
                });
            }
            frame_end = Some(offset + record.encoded_len as u64);
            if let Some(batch) = batches.last_mut() {
                batch.records.push(logged(&record));
            }
        });
        if let Some(damage) = outcome.damage {
            return Err(Error::corruption(
                segment.path(),
                damage.offset,
                damage.reason,
            ));
        }
        self.expected_floor = Some(last_seq.max(outcome.sequence_mark) + 1);
        let (after, visible) = (self.after, self.visible);
        self.pending.extend(
            batches
                .into_iter()
                .filter(|b| b.seq > after && b.seq <= visible_end(b, visible)),
        );
        Ok(())
    }
}

/// The last sequence number `batch` may start at to be returned: a batch of
/// log data alone takes no sequence number, so it starts just above the
/// sequence number visible when it was written.
fn visible_end(batch: &LoggedBatch, visible: u64) -> u64 {
    if batch.records.iter().all(|r| r.kind == RecordKind::LogData) {
        visible + 1
    } else {
        visible
    }
}

/// An owned copy of `record`.
fn logged(record: &RecordView<'_>) -> LoggedRecord {
    LoggedRecord {
        kind: record.kind,
        keyspace: record.keyspace,
        key: record.key.to_vec(),
        // A merge is logged as the operand the user wrote (the record also
        // holds the value it resolved to).
        value: match record.kind {
            RecordKind::Merge => record.operand.to_vec(),
            _ => record.value.to_vec(),
        },
    }
}

impl Iterator for BatchLog {
    type Item = Result<LoggedBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            if let Some(batch) = self.pending.pop_front() {
                return Some(Ok(batch));
            }
            let segment = self.segments.pop_front()?;
            if let Err(err) = self.read_segment(&segment) {
                self.failed = true;
                return Some(Err(err));
            }
        }
        None
    }
}
