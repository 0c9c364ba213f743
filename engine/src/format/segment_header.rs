//! The 64-byte header at the start of every segment file.
//!
//! ```text
//! offset size field
//!   0     8   magic  b"ALXDBSEG"
//!   8     4   format version (1)
//!  12     4   kind: 1 = log segment, 2 = compaction output
//!  16     8   segment id
//!  24     8   sequence floor: every sequence number issued before this
//!             segment was created is below it
//!  32    28   reserved, zero
//!  60     4   CRC-32C of bytes 0..60
//! ```

use super::{read_u32, read_u64};

/// Magic bytes that open every segment file.
pub const SEGMENT_MAGIC: [u8; 8] = *b"ALXDBSEG";
/// The segment format version this code writes (see `FORMAT.md`).
pub const SEGMENT_VERSION: u32 = 6;
/// The oldest segment format version this code reads.
pub const OLDEST_SEGMENT_VERSION: u32 = 1;
/// Size of the segment header; the first frame starts here.
pub const SEGMENT_HEADER_BYTES: usize = 64;

const VERSION_AT: usize = 8;
const KIND_AT: usize = VERSION_AT + 4;
const ID_AT: usize = KIND_AT + 4;
const SEQ_FLOOR_AT: usize = ID_AT + 8;
const CRC_AT: usize = SEGMENT_HEADER_BYTES - 4;

/// The format version in the (already validated) header at the start of
/// `bytes`.
pub fn version_of(bytes: &[u8]) -> u32 {
    read_u32(bytes, VERSION_AT)
}

/// What a segment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// Part of the write-ahead log, written in sequence order.
    Log,
    /// Live records copied by compaction; valid only once sealed.
    Compacted,
}

/// A decoded segment header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// What the segment holds.
    pub kind: SegmentKind,
    /// The segment's id (also in its file name).
    pub id: u32,
    /// Sequence numbers issued before the segment was created are below this.
    pub seq_floor: u64,
}

impl SegmentHeader {
    /// Encodes the header into its 64 bytes.
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_BYTES] {
        let mut b = [0u8; SEGMENT_HEADER_BYTES];
        b[..8].copy_from_slice(&SEGMENT_MAGIC);
        b[VERSION_AT..KIND_AT].copy_from_slice(&SEGMENT_VERSION.to_le_bytes());
        let kind: u32 = match self.kind {
            SegmentKind::Log => 1,
            SegmentKind::Compacted => 2,
        };
        b[KIND_AT..ID_AT].copy_from_slice(&kind.to_le_bytes());
        b[ID_AT..SEQ_FLOOR_AT].copy_from_slice(&u64::from(self.id).to_le_bytes());
        b[SEQ_FLOOR_AT..SEQ_FLOOR_AT + 8].copy_from_slice(&self.seq_floor.to_le_bytes());
        let crc = crate::format::crc::crc32c(&b[..CRC_AT]);
        b[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a header, or says what is wrong with it.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < SEGMENT_HEADER_BYTES {
            return Err(format!(
                "file too short for a segment header ({} bytes)",
                b.len()
            ));
        }
        if b[..8] != SEGMENT_MAGIC {
            return Err("bad segment magic".into());
        }
        if crate::format::crc::crc32c(&b[..CRC_AT]) != read_u32(b, CRC_AT) {
            return Err("segment header checksum mismatch".into());
        }
        let version = read_u32(b, VERSION_AT);
        if !(OLDEST_SEGMENT_VERSION..=SEGMENT_VERSION).contains(&version) {
            return Err(format!("unsupported segment format version {version}"));
        }
        let kind = match read_u32(b, KIND_AT) {
            1 => SegmentKind::Log,
            2 => SegmentKind::Compacted,
            other => return Err(format!("unknown segment kind {other}")),
        };
        let id = u32::try_from(read_u64(b, ID_AT)).map_err(|_| "segment id out of range")?;
        let seq_floor = read_u64(b, SEQ_FLOOR_AT);
        Ok(SegmentHeader {
            kind,
            id,
            seq_floor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_detects_damage() {
        let h = SegmentHeader {
            kind: SegmentKind::Compacted,
            id: 42,
            seq_floor: 9,
        };
        let mut b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Ok(h));
        b[20] ^= 1;
        assert!(SegmentHeader::decode(&b).is_err());
    }
}
