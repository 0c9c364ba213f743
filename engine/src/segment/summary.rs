//! What each segment file holds of each keyspace, for tools that list a
//! database's data files (the drop-in's `live_files`).

use std::collections::BTreeMap;

use crate::db::keyspace::KeyspaceId;
use crate::error::{Error, Result};
use crate::format::record::RecordKind;
use crate::segment::Segment;
use crate::segment::scan::scan_frames;

/// One keyspace's records in one segment file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSummary {
    /// The segment's id (its file's number).
    pub segment_id: u32,
    /// The segment file's name in the database directory.
    pub file_name: String,
    /// The file's length in bytes (its written data and header).
    pub file_bytes: u64,
    /// Whether the segment is a compaction output (records in key order)
    /// rather than a log segment (records in write order).
    pub compacted: bool,
    /// The keyspace.
    pub keyspace: KeyspaceId,
    /// The smallest key of its records here.
    pub smallest_key: Vec<u8>,
    /// The largest key of its records here (a range delete counts its
    /// first key).
    pub largest_key: Vec<u8>,
    /// Its records here: puts, merges and deletes, whether still live or
    /// not.
    pub entries: u64,
    /// Of those, the deletes (point and range).
    pub deletions: u64,
    /// Of the deletes, the range deletes.
    pub range_deletions: u64,
    /// Of the records, the merges.
    pub merges: u64,
    /// Bytes of the records' keys (a range delete's first key).
    pub key_bytes: u64,
    /// Bytes of the records' values and merge operands (a range delete's
    /// end key), as stored: a compressed value counts its stored bytes.
    pub value_bytes: u64,
    /// The smallest and the largest sequence number of its records here.
    pub seq_range: (u64, u64),
}

/// Summarizes every keyspace `live` accepts in `segment`, reading its
/// written records. Damage is a [`Error::Corruption`] naming the file.
pub(crate) fn summarize(
    segment: &Segment,
    live: impl Fn(KeyspaceId) -> bool,
) -> Result<Vec<SegmentSummary>> {
    let mut per_keyspace: BTreeMap<u32, SegmentSummary> = BTreeMap::new();
    let scan = scan_frames(segment.written_bytes(), |_, r| {
        if r.kind == RecordKind::LogData || !live(KeyspaceId(r.keyspace)) {
            return;
        }
        let s = per_keyspace
            .entry(r.keyspace)
            .or_insert_with(|| SegmentSummary {
                segment_id: segment.id(),
                file_name: crate::segment::file_name(segment.id()),
                file_bytes: segment.written(),
                compacted: segment.kind() != crate::format::segment_header::SegmentKind::Log,
                keyspace: KeyspaceId(r.keyspace),
                smallest_key: r.key.to_vec(),
                largest_key: r.key.to_vec(),
                entries: 0,
                deletions: 0,
                range_deletions: 0,
                merges: 0,
                key_bytes: 0,
                value_bytes: 0,
                seq_range: (r.seq, r.seq),
            });
        if r.key < s.smallest_key.as_slice() {
            s.smallest_key = r.key.to_vec();
        }
        if r.key > s.largest_key.as_slice() {
            s.largest_key = r.key.to_vec();
        }
        s.entries += 1;
        s.deletions += u64::from(matches!(
            r.kind,
            RecordKind::Delete | RecordKind::RangeDelete
        ));
        s.range_deletions += u64::from(r.kind == RecordKind::RangeDelete);
        s.merges += u64::from(r.kind == RecordKind::Merge);
        s.key_bytes += r.key.len() as u64;
        s.value_bytes += (r.value.len() + r.operand.len()) as u64;
        s.seq_range = (s.seq_range.0.min(r.seq), s.seq_range.1.max(r.seq));
    });
    if let Some(d) = scan.damage {
        return Err(Error::corruption(segment.path(), d.offset, d.reason));
    }
    Ok(per_keyspace.into_values().collect())
}
