//! Decoding a `WriteBatch`, the payload of a WAL record:
//! `sequence:u64 | count:u32 | records`, each record a tag byte then its
//! fields (column family varint32 for the `ColumnFamily*` tags; keys and
//! values length-prefixed). Each write takes the next sequence number.

use crate::coding::Reader;
use crate::error::{FormatError, Result};
use crate::internal_key::ValueKind;

const WHAT: &str = "WAL write batch";
const HEADER_SIZE: usize = 12;

/// One write of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// The column family id.
    pub family: u32,
    /// The write's sequence number.
    pub sequence: u64,
    /// What the write does.
    pub kind: ValueKind,
    /// The key (a range deletion's start).
    pub key: Vec<u8>,
    /// The value, merge operand or range deletion end; empty for deletes.
    pub value: Vec<u8>,
}

/// Decodes every write of the batch `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Vec<Write>> {
    if bytes.len() < HEADER_SIZE {
        return Err(FormatError::corrupt(
            WHAT,
            "shorter than its 12-byte header",
        ));
    }
    let mut r = Reader::new(bytes, WHAT);
    let first = r.fixed64("sequence")?;
    let count = r.fixed32("count")?;
    let mut out = Vec::new();
    while !r.is_empty() {
        let tag = r.u8("record tag")?;
        let Some((family, kind)) = decode_tag(&mut r, tag)? else {
            continue;
        };
        let key = r.length_prefixed("key")?.to_vec();
        let value = match kind {
            ValueKind::Value | ValueKind::Merge | ValueKind::RangeDelete => {
                r.length_prefixed("value")?.to_vec()
            }
            ValueKind::Delete | ValueKind::SingleDelete => Vec::new(),
        };
        let sequence = first + out.len() as u64;
        out.push(Write {
            family,
            sequence,
            kind,
            key,
            value,
        });
    }
    if out.len() as u64 != u64::from(count) {
        return Err(FormatError::corrupt(
            WHAT,
            format!("header counts {count} writes, {} found", out.len()),
        ));
    }
    Ok(out)
}

/// The family and kind of a write tag; `None` for records that are not
/// writes (log data, no-ops), after skipping them.
fn decode_tag(r: &mut Reader<'_>, tag: u8) -> Result<Option<(u32, ValueKind)>> {
    let kind = match tag {
        0x0 | 0x4 => ValueKind::Delete,
        0x1 | 0x5 => ValueKind::Value,
        0x2 | 0x6 => ValueKind::Merge,
        0x7 | 0x8 => ValueKind::SingleDelete,
        0xF | 0xE => ValueKind::RangeDelete,
        0x3 => {
            r.length_prefixed("log data")?;
            return Ok(None);
        }
        0xD => return Ok(None),
        0x9 | 0xA | 0xB | 0xC | 0x12 | 0x13 | 0x15 => {
            return Err(FormatError::unsupported(
                "two-phase-commit transaction markers in the WAL (prepared transactions)",
            ));
        }
        0x10 | 0x11 => return Err(FormatError::unsupported("BlobDB blob indexes in the WAL")),
        0x14 => {
            return Err(FormatError::unsupported(
                "user-defined timestamps in the WAL",
            ));
        }
        0x16 | 0x17 => return Err(FormatError::unsupported("wide-column entities (PutEntity)")),
        0x18 | 0x19 => {
            return Err(FormatError::unsupported(
                "values with a preferred sequence number (TimedPut)",
            ));
        }
        other => {
            return Err(FormatError::corrupt(
                WHAT,
                format!("unknown record tag {other:#x}"),
            ));
        }
    };
    let family = if matches!(tag, 0x4 | 0x5 | 0x6 | 0x8 | 0xE) {
        r.varint32("column family")?
    } else {
        0
    };
    Ok(Some((family, kind)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(seq: u64, count: u32, body: &[u8]) -> Vec<u8> {
        let mut out = seq.to_le_bytes().to_vec();
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn writes_take_consecutive_sequences() {
        let body = [
            &[0x1, 1, b'a', 1, b'1'][..],
            &[0x3, 2, b'x', b'y'],
            &[0x8, 3, 1, b'b'],
            &[0xE, 2, 1, b'c', 1, b'd'],
        ]
        .concat();
        let writes = decode(&batch(100, 3, &body)).unwrap();
        assert_eq!(writes.len(), 3);
        assert_eq!(
            (writes[0].sequence, writes[0].kind),
            (100, ValueKind::Value)
        );
        assert_eq!(
            (writes[1].family, writes[1].kind),
            (3, ValueKind::SingleDelete)
        );
        assert_eq!(
            (writes[2].sequence, writes[2].value.as_slice()),
            (102, &b"d"[..])
        );
    }

    #[test]
    fn damaged_batches_are_errors() {
        assert!(decode(&[0; 5]).is_err());
        assert!(decode(&batch(1, 2, &[0x1, 1, b'a', 1, b'1'])).is_err());
        assert!(decode(&batch(1, 1, &[0x1, 9, b'a'])).is_err());
        assert!(decode(&batch(1, 1, &[0x42])).is_err());
        assert!(matches!(
            decode(&batch(1, 0, &[0x9])),
            Err(FormatError::Unsupported { .. })
        ));
    }
}
