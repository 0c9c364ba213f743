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

use crate::format::compressed_value::ValueDictionary;
use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind, SealBody};
use crate::format::record::{RecordView, SHORT_RECORD_HEADER_BYTES};
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
    /// The largest offset named by a watermark frame (0: none): bytes below
    /// it were on stable storage before the walk's last watermark was written.
    pub watermark: u64,
}

/// Walks the frames of `bytes` (a whole mapped segment) from the first frame,
/// calling `on_record(offset, record)` for every record of every valid batch
/// frame, in file order.
pub fn scan_frames<'a>(bytes: &'a [u8], on_record: impl FnMut(u64, RecordView<'a>)) -> ScanOutcome {
    scan_frames_from(bytes, SEGMENT_HEADER_BYTES, on_record)
}

/// [`scan_frames`] from the frame that starts at offset `from` (a frame
/// boundary) instead of the first: a reader following a growing segment
/// walks only what was appended since its last walk.
pub fn scan_frames_from<'a>(
    bytes: &'a [u8],
    from: usize,
    mut on_record: impl FnMut(u64, RecordView<'a>),
) -> ScanOutcome {
    let mut at = from;
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
            Ok(Frame::Watermark(offset, len)) => {
                out.watermark = out.watermark.max(offset);
                at += len;
            }
            Ok(Frame::ValueDictionary(len)) if at == SEGMENT_HEADER_BYTES => at += len,
            Ok(Frame::ValueDictionary(_)) => {
                out.damage = Some(Damage {
                    offset: at as u64,
                    reason: "a value dictionary frame after the segment's first frame".into(),
                });
                return out;
            }
            Ok(Frame::Batch(body, len)) => {
                for (rel, record) in records_of(body) {
                    on_record((at + FRAME_HEADER_BYTES + rel) as u64, record);
                    out.records += 1;
                }
                at += len;
            }
        }
    }
}

/// How many records the batch frames of `bytes` (a whole mapped segment)
/// hold by their headers alone, up to the first frame whose header does
/// not read; no body is checked or decoded. A capacity hint (compaction
/// sizes its vectors with it), never trusted beyond what the bodies' length
/// allows.
pub fn records_by_headers(bytes: &[u8]) -> usize {
    let mut at = SEGMENT_HEADER_BYTES;
    let mut records = 0;
    while let Some(Ok(header)) = bytes.get(at..).map(FrameHeader::decode) {
        if matches!(header.kind, FrameKind::Batch) {
            let fits = header.body_len as usize / SHORT_RECORD_HEADER_BYTES;
            records += (header.count as usize).min(fits);
        }
        at += header.frame_len();
    }
    records
}

/// What the valid frames found past a point of damage say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramesAfter {
    /// Offset of the first complete, valid frame, if any.
    pub first_valid: Option<u64>,
    /// The largest offset named by a valid watermark frame (0: none).
    pub watermark: u64,
}

/// Looks for complete, valid frames at every 8-aligned offset of `bytes` at
/// or after `from` (offsets are reported relative to `bytes` plus `base`).
/// Used to tell a torn tail (nothing valid follows) from corruption in the
/// middle of the data (valid frames follow, or a watermark past the damage
/// says the damaged bytes had been synced).
pub fn frames_after(bytes: &[u8], from: usize, base: u64) -> FramesAfter {
    let mut out = FramesAfter::default();
    let mut at = from.next_multiple_of(8);
    while at + FRAME_HEADER_BYTES <= bytes.len() {
        if let Ok(frame) = check_frame(&bytes[at..]) {
            out.first_valid.get_or_insert(base + at as u64);
            if let Frame::Watermark(offset, _) = frame {
                out.watermark = out.watermark.max(offset);
            }
        }
        at += 8;
    }
    out
}

enum Frame<'a> {
    /// A batch frame whose records all parse and fill its body (see
    /// [`check_records`]): the body, and the frame's length.
    Batch(&'a [u8], usize),
    Seal(SealBody, usize),
    SequenceMark(u64, usize),
    Watermark(u64, usize),
    ValueDictionary(usize),
}

fn check_frame(bytes: &[u8]) -> Result<Frame<'_>, String> {
    let header = FrameHeader::decode(bytes)?;
    let len = header.frame_len();
    let body = bytes
        .get(FRAME_HEADER_BYTES..len)
        .ok_or("frame body runs past the end of the segment")?;
    if crate::format::crc::crc32c(body) != header.body_crc {
        return Err("frame body checksum mismatch".into());
    }
    match header.kind {
        FrameKind::Seal => Ok(Frame::Seal(SealBody::decode(body)?, len)),
        FrameKind::Batch => {
            check_records(body, header.count)?;
            Ok(Frame::Batch(body, len))
        }
        FrameKind::SequenceMark => match body.try_into() {
            Ok(seq) => Ok(Frame::SequenceMark(u64::from_le_bytes(seq), len)),
            Err(_) => Err("sequence-mark body is not 8 bytes".into()),
        },
        FrameKind::Watermark => match body.try_into() {
            Ok(offset) => Ok(Frame::Watermark(u64::from_le_bytes(offset), len)),
            Err(_) => Err("watermark body is not 8 bytes".into()),
        },
        FrameKind::ValueDictionary => {
            ValueDictionary::decode_body(body)?;
            Ok(Frame::ValueDictionary(len))
        }
    }
}

/// Checks that `count` records parse one after another and fill `body`
/// exactly, so that a frame's records are handed on all or none. Keeps
/// nothing: [`records_of`] parses them again as they are handed on (a
/// vector of a frame's records, up to some 900 KB, came from the scanning
/// thread's malloc arena, whose freed memory stays resident).
fn check_records(body: &[u8], count: u32) -> Result<(), String> {
    let mut at = 0;
    for _ in 0..count {
        // The body checksum already covers every record's bytes; reads
        // verify each record's own checksum again.
        let record = RecordView::parse(body.get(at..).unwrap_or(&[])).map_err(|d| d.to_string())?;
        at += record.encoded_len;
    }
    if at != body.len() {
        return Err("records do not fill the frame body".into());
    }
    Ok(())
}

/// The records of a frame body that [`check_records`] accepted, with their
/// offsets in the body.
fn records_of(body: &[u8]) -> impl Iterator<Item = (usize, RecordView<'_>)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let record = RecordView::parse(body.get(at..)?).ok()?;
        let item = (at, record);
        at += record.encoded_len;
        Some(item)
    })
}
