//! Records: one key's put or delete, with its sequence number and a pointer
//! to the key's previous version (the MVCC version chain).
//!
//! ```text
//! record header, 40 bytes, 8-aligned:
//! offset size field
//!   0     4   CRC-32C of bytes 4..(40 + key length + value length)
//!   4     1   kind: 1 = put, 2 = delete
//!   5     3   reserved, zero
//!   8     4   keyspace id
//!  12     4   key length
//!  16     4   value length (0 for a delete)
//!  20     4   reserved, zero
//!  24     8   sequence number
//!  32     8   location of the previous version of this key, or u64::MAX
//!  40     -   key bytes, then value bytes, then zero padding to 8 bytes
//! ```

use super::{align8, read_u32, read_u64};
use crate::location::Location;

/// Size of a record header.
pub const RECORD_HEADER_BYTES: usize = 40;

const KIND_AT: usize = 4;
const KEYSPACE_AT: usize = 8;
const KEY_LEN_AT: usize = 12;
const VALUE_LEN_AT: usize = 16;
const SEQ_AT: usize = 24;
const PREV_AT: usize = 32;

/// Whether a record sets or deletes its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// The key is set to the value.
    Put,
    /// The key is deleted (a tombstone).
    Delete,
}

/// The fields of a record to encode.
#[derive(Clone, Copy, Debug)]
pub struct RecordFields<'a> {
    /// Put or delete.
    pub kind: RecordKind,
    /// Keyspace the key belongs to.
    pub keyspace: u32,
    /// Sequence number of the write.
    pub seq: u64,
    /// The key's previous version.
    pub prev: Location,
    /// The key.
    pub key: &'a [u8],
    /// The value (empty for a delete).
    pub value: &'a [u8],
}

/// Encoded size of a record with these key and value lengths.
pub fn encoded_len(key_len: usize, value_len: usize) -> usize {
    align8(RECORD_HEADER_BYTES + key_len + value_len)
}

/// Appends the encoded record to `out`.
pub fn encode_into(r: &RecordFields<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    out.push(match r.kind {
        RecordKind::Put => 1,
        RecordKind::Delete => 2,
    });
    out.extend_from_slice(&[0u8; 3]);
    out.extend_from_slice(&r.keyspace.to_le_bytes());
    out.extend_from_slice(&len_u32(r.key.len()).to_le_bytes());
    out.extend_from_slice(&len_u32(r.value.len()).to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&r.seq.to_le_bytes());
    out.extend_from_slice(&r.prev.0.to_le_bytes());
    out.extend_from_slice(r.key);
    out.extend_from_slice(r.value);
    let crc = crc32c::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
    out.resize(start + align8(out.len() - start), 0);
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("key and value lengths are checked against their maximums")
}

/// A record read in place from a mapped segment.
#[derive(Clone, Copy, Debug)]
pub struct RecordView<'a> {
    /// Put or delete.
    pub kind: RecordKind,
    /// Keyspace id.
    pub keyspace: u32,
    /// Sequence number.
    pub seq: u64,
    /// Previous version's location.
    pub prev: Location,
    /// The key, borrowed from the map.
    pub key: &'a [u8],
    /// The value, borrowed from the map.
    pub value: &'a [u8],
    /// Encoded length including padding.
    pub encoded_len: usize,
    /// The stored checksum.
    crc: u32,
    /// The bytes the checksum covers.
    covered: &'a [u8],
}

impl<'a> RecordView<'a> {
    /// Parses the record at the start of `bytes` without verifying its
    /// checksum. Never reads out of bounds; a bad length is an error.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, String> {
        if bytes.len() < RECORD_HEADER_BYTES {
            return Err("record header runs past the end of its frame".into());
        }
        let kind = match bytes[KIND_AT] {
            1 => RecordKind::Put,
            2 => RecordKind::Delete,
            other => return Err(format!("unknown record kind {other}")),
        };
        let key_len = read_u32(bytes, KEY_LEN_AT) as usize;
        let value_len = read_u32(bytes, VALUE_LEN_AT) as usize;
        let end = RECORD_HEADER_BYTES
            .checked_add(key_len)
            .and_then(|n| n.checked_add(value_len))
            .filter(|&n| n <= bytes.len())
            .ok_or_else(|| format!("record lengths ({key_len}, {value_len}) run past its frame"))?;
        let key_end = RECORD_HEADER_BYTES + key_len;
        Ok(RecordView {
            kind,
            keyspace: read_u32(bytes, KEYSPACE_AT),
            seq: read_u64(bytes, SEQ_AT),
            prev: Location(read_u64(bytes, PREV_AT)),
            key: &bytes[RECORD_HEADER_BYTES..key_end],
            value: &bytes[key_end..end],
            encoded_len: align8(end).min(bytes.len()),
            crc: read_u32(bytes, 0),
            covered: &bytes[4..end],
        })
    }

    /// Whether the stored checksum matches the record's bytes.
    pub fn checksum_ok(&self) -> bool {
        crc32c::crc32c(self.covered) == self.crc
    }

    /// The whole encoded record (for verbatim copies by compaction).
    pub fn raw(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[..self.encoded_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(out: &mut Vec<u8>) {
        encode_into(
            &RecordFields {
                kind: RecordKind::Put,
                keyspace: 3,
                seq: 77,
                prev: Location::new(1, 64, false),
                key: b"key",
                value: b"value!",
            },
            out,
        );
    }

    #[test]
    fn round_trip() {
        let mut out = Vec::new();
        sample(&mut out);
        assert_eq!(out.len(), encoded_len(3, 6));
        let r = RecordView::parse(&out).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.key, r.value, r.seq, r.keyspace),
            (&b"key"[..], &b"value!"[..], 77, 3)
        );
        assert_eq!(r.prev, Location::new(1, 64, false));
        assert_eq!(r.kind, RecordKind::Put);
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let mut out = Vec::new();
        sample(&mut out);
        for i in 0..RECORD_HEADER_BYTES + 9 {
            let mut bad = out.clone();
            bad[i] ^= 0x40;
            if let Ok(r) = RecordView::parse(&bad) {
                assert!(!r.checksum_ok(), "flip at {i} went unnoticed");
            }
        }
    }

    #[test]
    fn huge_lengths_are_errors_not_panics() {
        let mut out = Vec::new();
        sample(&mut out);
        out[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(RecordView::parse(&out).is_err());
    }
}
