//! Internal keys: a user key followed by an 8-byte little-endian trailer
//! `sequence << 8 | value type`. They sort by user key ascending, then by
//! trailer descending (newest first).

use std::cmp::Ordering;

use crate::error::{FormatError, Result};

/// Size of the trailer.
pub const TRAILER_SIZE: usize = 8;
/// The largest sequence number (RocksDB's kMaxSequenceNumber).
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;

/// What an entry means for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueKind {
    /// A deletion.
    Delete,
    /// A value.
    Value,
    /// A merge operand.
    Merge,
    /// A single deletion (deletes exactly one earlier put).
    SingleDelete,
    /// A range tombstone: the key is its start, the value its end.
    RangeDelete,
}

impl ValueKind {
    /// The kind for a stored type byte, refusing features we do not read.
    pub fn from_byte(t: u8) -> Result<Self> {
        Ok(match t {
            0x0 => ValueKind::Delete,
            0x1 => ValueKind::Value,
            0x2 => ValueKind::Merge,
            0x7 => ValueKind::SingleDelete,
            0xF => ValueKind::RangeDelete,
            0x11 => {
                return Err(FormatError::unsupported(
                    "BlobDB blob indexes (kTypeBlobIndex)",
                ));
            }
            0x14 => {
                return Err(FormatError::unsupported(
                    "user-defined timestamps (kTypeDeletionWithTimestamp)",
                ));
            }
            0x16 => return Err(FormatError::unsupported("wide-column entities (PutEntity)")),
            0x18 => {
                return Err(FormatError::unsupported(
                    "values with a preferred sequence number (kTypeValuePreferredSeqno)",
                ));
            }
            other => {
                return Err(FormatError::corrupt(
                    "internal key",
                    format!("invalid value type {other:#x}"),
                ));
            }
        })
    }

    /// The type byte RocksDB stores for this kind.
    pub fn to_byte(self) -> u8 {
        match self {
            ValueKind::Delete => 0x0,
            ValueKind::Value => 0x1,
            ValueKind::Merge => 0x2,
            ValueKind::SingleDelete => 0x7,
            ValueKind::RangeDelete => 0xF,
        }
    }
}

/// A parsed internal key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalKey {
    /// The user key.
    pub user_key: Vec<u8>,
    /// The sequence number.
    pub sequence: u64,
    /// The entry's kind.
    pub kind: ValueKind,
}

/// Splits an encoded internal key into user key, sequence and raw type.
pub fn split(key: &[u8]) -> Result<(&[u8], u64, u8)> {
    let Some(at) = key.len().checked_sub(TRAILER_SIZE) else {
        return Err(FormatError::corrupt(
            "internal key",
            format!("{} bytes is shorter than the 8-byte trailer", key.len()),
        ));
    };
    let (user, trailer) = key.split_at(at);
    let mut t = [0u8; 8];
    t.copy_from_slice(trailer);
    let packed = u64::from_le_bytes(t);
    Ok((user, packed >> 8, packed as u8))
}

/// Parses an encoded internal key.
pub fn parse(key: &[u8]) -> Result<InternalKey> {
    let (user, sequence, t) = split(key)?;
    Ok(InternalKey {
        user_key: user.to_vec(),
        sequence,
        kind: ValueKind::from_byte(t)?,
    })
}

/// Internal key order: user key ascending, then sequence and kind
/// descending.
pub fn compare(a: (&[u8], u64, ValueKind), b: (&[u8], u64, ValueKind)) -> Ordering {
    a.0.cmp(b.0)
        .then_with(|| b.1.cmp(&a.1))
        .then_with(|| b.2.to_byte().cmp(&a.2.to_byte()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_packs_sequence_and_type() {
        let mut key = b"k".to_vec();
        key.extend_from_slice(&((5u64 << 8) | 1).to_le_bytes());
        let k = parse(&key).unwrap();
        assert_eq!(
            (k.user_key.as_slice(), k.sequence, k.kind),
            (&b"k"[..], 5, ValueKind::Value)
        );
        assert!(parse(b"short").is_err());
    }

    #[test]
    fn newer_sorts_first() {
        let newer = (&b"a"[..], 9, ValueKind::Value);
        let older = (&b"a"[..], 3, ValueKind::Value);
        assert_eq!(compare(newer, older), Ordering::Less);
        assert_eq!(
            compare(
                (&b"a"[..], 1, ValueKind::Value),
                (&b"b"[..], 9, ValueKind::Value)
            ),
            Ordering::Less
        );
    }

    #[test]
    fn unsupported_types_name_their_feature() {
        assert!(matches!(
            ValueKind::from_byte(0x11),
            Err(FormatError::Unsupported { .. })
        ));
        assert!(matches!(
            ValueKind::from_byte(0x16),
            Err(FormatError::Unsupported { .. })
        ));
        assert!(matches!(
            ValueKind::from_byte(0x55),
            Err(FormatError::Corrupt { .. })
        ));
    }
}
