//! Frames: the unit of atomic append.
//!
//! Every write (a single put, a batch) is one frame; a segment is sealed by
//! a final seal frame. A frame is valid only if its header checksum and its
//! body checksum match, so a frame torn by a crash is recognised as a whole.
//!
//! ```text
//! frame header, 24 bytes, 8-aligned in the file:
//! offset size field
//!   0     4   magic 0x584C4641 ("AFLX" little-endian)
//!   4     1   kind: 1 = batch of records, 2 = seal, 3 = sequence mark,
//!                   4 = durable watermark, 5 = value dictionary
//!   5     3   reserved, zero
//!   8     4   body length in bytes (a multiple of 8)
//!  12     4   number of records in the body (0 for a seal)
//!  16     4   CRC-32C of the body
//!  20     4   CRC-32C of bytes 0..20
//! body: records (see `record.rs`) or a seal body:
//!   0     8   records in the segment before the seal
//!   8     4   number n of replaced segment ids
//!  12     4   reserved, zero
//!  16   8*n   ids of the segments this compaction output replaces
//! or a sequence-mark body (a batch whose last operations logged nothing):
//!   0     8   the last sequence number the batch consumed
//! or a watermark body (appended before each fdatasync of a log segment):
//!   0     8   offset below which the segment was already synced
//! or a value-dictionary body (the first frame of a compaction output with
//! compressed values; see `compressed_value.rs`)
//! ```

use super::{read_u32, read_u64};

/// Magic number at the start of every frame.
pub const FRAME_MAGIC: u32 = 0x584C_4641;
/// Size of a frame header.
pub const FRAME_HEADER_BYTES: usize = 24;

const KIND_AT: usize = 4;
const BODY_LEN_AT: usize = 8;
const COUNT_AT: usize = 12;
const BODY_CRC_AT: usize = 16;
const HEADER_CRC_AT: usize = 20;

/// What a frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// Records written together (one atomic batch).
    Batch,
    /// The end of a sealed segment.
    Seal,
    /// The last sequence number a batch consumed, written when its last
    /// operations logged no record (range deletes of empty ranges), so the
    /// number survives a reopen.
    SequenceMark,
    /// An offset below which the segment's bytes were on stable storage
    /// before this frame was written: damage below it is corruption, not a
    /// torn tail.
    Watermark,
    /// The dictionary the segment's compressed values were compressed
    /// with (format version 5): the first frame of a compaction output
    /// with compressed values, and nowhere else.
    ValueDictionary,
}

/// A decoded, checksum-verified frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// What the frame holds.
    pub kind: FrameKind,
    /// Length of the body that follows the header.
    pub body_len: u32,
    /// Number of records in the body.
    pub count: u32,
    /// Checksum of the body.
    pub body_crc: u32,
}

impl FrameHeader {
    /// Builds the header for `body`.
    pub fn for_body(kind: FrameKind, body: &[u8], count: u32) -> Self {
        FrameHeader {
            kind,
            body_len: u32::try_from(body.len()).expect("frame bodies are limited to 2 GiB"),
            count,
            body_crc: crate::format::crc::crc32c(body),
        }
    }

    /// Encodes the header.
    pub fn encode(&self) -> [u8; FRAME_HEADER_BYTES] {
        let mut b = [0u8; FRAME_HEADER_BYTES];
        b[..4].copy_from_slice(&FRAME_MAGIC.to_le_bytes());
        b[KIND_AT] = match self.kind {
            FrameKind::Batch => 1,
            FrameKind::Seal => 2,
            FrameKind::SequenceMark => 3,
            FrameKind::Watermark => 4,
            FrameKind::ValueDictionary => 5,
        };
        b[BODY_LEN_AT..COUNT_AT].copy_from_slice(&self.body_len.to_le_bytes());
        b[COUNT_AT..BODY_CRC_AT].copy_from_slice(&self.count.to_le_bytes());
        b[BODY_CRC_AT..HEADER_CRC_AT].copy_from_slice(&self.body_crc.to_le_bytes());
        let crc = crate::format::crc::crc32c(&b[..HEADER_CRC_AT]);
        b[HEADER_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and verifies a header (not its body).
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < FRAME_HEADER_BYTES {
            return Err("frame header runs past the end of the file".into());
        }
        if read_u32(b, 0) != FRAME_MAGIC {
            return Err("bad frame magic".into());
        }
        if crate::format::crc::crc32c(&b[..HEADER_CRC_AT]) != read_u32(b, HEADER_CRC_AT) {
            return Err("frame header checksum mismatch".into());
        }
        let kind = match b[KIND_AT] {
            1 => FrameKind::Batch,
            2 => FrameKind::Seal,
            3 => FrameKind::SequenceMark,
            4 => FrameKind::Watermark,
            5 => FrameKind::ValueDictionary,
            other => return Err(format!("unknown frame kind {other}")),
        };
        let body_len = read_u32(b, BODY_LEN_AT);
        if !body_len.is_multiple_of(8) {
            return Err(format!("frame body length {body_len} is not 8-aligned"));
        }
        Ok(FrameHeader {
            kind,
            body_len,
            count: read_u32(b, COUNT_AT),
            body_crc: read_u32(b, BODY_CRC_AT),
        })
    }

    /// Total size of the frame in the file.
    pub fn frame_len(&self) -> usize {
        FRAME_HEADER_BYTES + self.body_len as usize
    }
}

/// The body of a seal frame.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SealBody {
    /// Records in the segment before the seal.
    pub record_count: u64,
    /// Segments that this (compaction output) segment replaces.
    pub replaced: Vec<u32>,
}

impl SealBody {
    /// Encodes the seal body (8-aligned).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + 8 * self.replaced.len());
        b.extend_from_slice(&self.record_count.to_le_bytes());
        let n = u32::try_from(self.replaced.len()).expect("replaced list fits in u32");
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        for id in &self.replaced {
            b.extend_from_slice(&u64::from(*id).to_le_bytes());
        }
        b
    }

    /// Decodes a seal body.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < 16 {
            return Err("seal body too short".into());
        }
        let record_count = read_u64(b, 0);
        let n = read_u32(b, 8) as usize;
        if b.len() != 16 + 8 * n {
            return Err("seal body length does not match its id count".into());
        }
        let mut replaced = Vec::with_capacity(n);
        for i in 0..n {
            let id = read_u64(b, 16 + 8 * i);
            replaced.push(u32::try_from(id).map_err(|_| "replaced id out of range")?);
        }
        Ok(SealBody {
            record_count,
            replaced,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_damage() {
        let body = [7u8; 16];
        let h = FrameHeader::for_body(FrameKind::Batch, &body, 2);
        let mut b = h.encode();
        assert_eq!(FrameHeader::decode(&b), Ok(h));
        b[9] ^= 0x10;
        assert!(FrameHeader::decode(&b).is_err());
        assert!(FrameHeader::decode(&[0u8; 24]).is_err());
    }

    #[test]
    fn seal_round_trip() {
        let s = SealBody {
            record_count: 5,
            replaced: vec![3, 9],
        };
        assert_eq!(SealBody::decode(&s.encode()), Ok(s));
        assert!(SealBody::decode(&[0u8; 8]).is_err());
    }
}
