//! Walking the frames of a segment: used by recovery (to rebuild the index
//! and to find where a torn tail starts) and by compaction (to copy live
//! records).
//!
//! A frame is accepted only as a whole: its header checksum and its body
//! checksum (which covers every record) must match and the records must
//! exactly fill the body. Where the walk stops early it reports the offset
//! and the reason; the caller decides whether that is a torn tail (only
//! possible at the end of the active log segment, with no valid frame after
//! it) or corruption.

use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind, SealBody};
use crate::format::record::RecordView;
use crate::format::segment_header::SEGMENT_HEADER_BYTES;

/// Where and why a walk stopped before a clean end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Offset of the frame that failed.
    pub offset: u64,
    /// The check that failed.
    pub reason: String,
}

/// The result of walking a segment's frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// Offset just past the last valid frame (where the next one would go).
    pub end: u64,
    /// The seal, if the segment is sealed.
    pub seal: Option<SealBody>,
    /// Set if the walk stopped at an invalid frame rather than at the seal or
    /// at zeroed, never-written space.
    pub damage: Option<Damage>,
    /// Records delivered to the callback.
    pub records: u64,
    /// The largest sequence number named by a sequence-mark frame (0: none).
    pub sequence_mark: u64,
}

/// Walks the frames of `bytes` (a whole mapped segment) from the first frame,
/// calling `on_record(offset, record)` for every record of every valid batch
/// frame, in file order.
pub fn scan_frames<'a>(
    bytes: &'a [u8],
    mut on_record: impl FnMut(u64, RecordView<'a>),
) -> ScanOutcome {
    let mut at = SEGMENT_HEADER_BYTES;
    let mut out = ScanOutcome::default();
    loop {
        out.end = at as u64;
        let rest = &bytes[at.min(bytes.len())..];
        if rest.len() < FRAME_HEADER_BYTES || rest[..FRAME_HEADER_BYTES].iter().all(|&b| b == 0) {
            if rest.iter().any(|&b| b != 0) {
                out.damage = Some(Damage {
                    offset: at as u64,
                    reason: "non-zero bytes after the last frame".into(),
                });
            }
            return out;
        }
        match check_frame(rest) {
            Err(reason) => {
                out.damage = Some(Damage {
                    offset: at as u64,
                    reason,
                });
                return out;
            }
            Ok(Frame::Seal(seal, len)) => {
                out.seal = Some(seal);
                out.end = (at + len) as u64;
                return out;
            }
            Ok(Frame::SequenceMark(seq, len)) => {
                out.sequence_mark = out.sequence_mark.max(seq);
                at += len;
            }
            Ok(Frame::Batch(records, len)) => {
                for (rel, record) in records {
                    on_record((at + rel) as u64, record);
                    out.records += 1;
                }
                at += len;
            }
        }
    }
}

/// Whether any complete, valid frame starts at an 8-aligned offset at or
/// after `from`. Used to tell a torn tail (nothing valid follows) from
/// corruption in the middle of the data (valid frames follow).
pub fn valid_frame_after(bytes: &[u8], from: u64) -> Option<u64> {
    let mut at = usize::try_from(from).ok()?.next_multiple_of(8);
    while at + FRAME_HEADER_BYTES <= bytes.len() {
        if check_frame(&bytes[at..]).is_ok() {
            return Some(at as u64);
        }
        at += 8;
    }
    None
}

enum Frame<'a> {
    Batch(Vec<(usize, RecordView<'a>)>, usize),
    Seal(SealBody, usize),
    SequenceMark(u64, usize),
}

fn check_frame(bytes: &[u8]) -> Result<Frame<'_>, String> {
    let header = FrameHeader::decode(bytes)?;
    let len = header.frame_len();
    let body = bytes
        .get(FRAME_HEADER_BYTES..len)
        .ok_or("frame body runs past the end of the segment")?;
    if crc32c::crc32c(body) != header.body_crc {
        return Err("frame body checksum mismatch".into());
    }
    match header.kind {
        FrameKind::Seal => Ok(Frame::Seal(SealBody::decode(body)?, len)),
        FrameKind::Batch => Ok(Frame::Batch(check_records(body, header.count)?, len)),
        FrameKind::SequenceMark => match body.try_into() {
            Ok(seq) => Ok(Frame::SequenceMark(u64::from_le_bytes(seq), len)),
            Err(_) => Err("sequence-mark body is not 8 bytes".into()),
        },
    }
}

fn check_records(body: &[u8], count: u32) -> Result<Vec<(usize, RecordView<'_>)>, String> {
    let mut records = Vec::with_capacity(count.min(1 << 16) as usize);
    let mut at = 0;
    for _ in 0..count {
        // The body checksum already covers every record's bytes; reads
        // verify each record's own checksum again.
        let record = RecordView::parse(body.get(at..).unwrap_or(&[]))?;
        records.push((FRAME_HEADER_BYTES + at, record));
        at += record.encoded_len;
    }
    if at != body.len() {
        return Err("records do not fill the frame body".into());
    }
    Ok(records)
}
