//! The external file format of [`super::SstFileWriter`] (AlexDB's own, not
//! RocksDB's SST: rocksdb's contract is only that `ingest_external_file*`
//! of the file works).
//!
//! All integers little-endian.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ALXDBEXT` |
//! | 8 | 4 | format version = 1 |
//! | 12 | 4 | reserved, 0 |
//! | 16 | … | entries: kind (1), reserved (3), key length (4), value length (4), key, value |
//! | end−16 | 8 | number of entries |
//! | end−8 | 4 | CRC-32C of every byte before it |
//! | end−4 | 4 | reserved, 0 |
//!
//! Kinds: 1 put, 2 delete, 3 range delete (key = start, value = end),
//! 4 merge operand. Point entries are in strictly ascending key order.

use crate::Error;

const MAGIC: &[u8; 8] = b"ALXDBEXT";
const VERSION: u32 = 1;
const HEADER_BYTES: usize = 16;
const TRAILER_BYTES: usize = 16;
const ENTRY_HEADER_BYTES: usize = 12;

/// What an entry does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind {
    Put = 1,
    Delete = 2,
    DeleteRange = 3,
    Merge = 4,
}

impl EntryKind {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            1 => EntryKind::Put,
            2 => EntryKind::Delete,
            3 => EntryKind::DeleteRange,
            4 => EntryKind::Merge,
            _ => return None,
        })
    }
}

/// One decoded entry, borrowing from the file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    pub(crate) kind: EntryKind,
    pub(crate) key: &'a [u8],
    pub(crate) value: &'a [u8],
}

/// The file header.
pub(crate) fn header() -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

/// Appends one entry to `out`. Lengths over `u32::MAX` are refused.
pub(crate) fn append_entry(out: &mut Vec<u8>, entry: Entry<'_>) -> Result<(), Error> {
    let too_long = || Error::invalid_argument("key or value longer than 4 GiB");
    let key_len = u32::try_from(entry.key.len()).map_err(|_| too_long())?;
    let value_len = u32::try_from(entry.value.len()).map_err(|_| too_long())?;
    out.push(entry.kind as u8);
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&key_len.to_le_bytes());
    out.extend_from_slice(&value_len.to_le_bytes());
    out.extend_from_slice(entry.key);
    out.extend_from_slice(entry.value);
    Ok(())
}

/// Appends the trailer for `count` entries to `out`.
pub(crate) fn append_trailer(out: &mut Vec<u8>, count: u64) {
    out.extend_from_slice(&count.to_le_bytes());
    let crc = crc32c::crc32c(out);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
}

/// Decodes a whole file; any damage is RocksDB's `Corruption`.
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Entry<'_>>, Error> {
    let bad = |why: &str| Error::corruption(format_args!("external file: {why}"));
    if bytes.len() < HEADER_BYTES + TRAILER_BYTES || &bytes[..8] != MAGIC {
        return Err(bad("not an AlexDB external file"));
    }
    if read_u32(bytes, 8) != VERSION {
        return Err(bad("unknown format version"));
    }
    let trailer = bytes.len() - TRAILER_BYTES;
    let crc_at = trailer + 8;
    if read_u32(bytes, crc_at + 4) != 0
        || crc32c::crc32c(&bytes[..crc_at]) != read_u32(bytes, crc_at)
    {
        return Err(bad("checksum mismatch"));
    }
    let count = u64::from_le_bytes(bytes[trailer..crc_at].try_into().unwrap_or_default());
    let entries = decode_entries(&bytes[HEADER_BYTES..trailer]).ok_or_else(|| bad("bad entry"))?;
    if entries.len() as u64 != count {
        return Err(bad("entry count mismatch"));
    }
    Ok(entries)
}

/// Decodes the entries filling `body` exactly.
fn decode_entries(mut body: &[u8]) -> Option<Vec<Entry<'_>>> {
    let mut entries = Vec::new();
    while !body.is_empty() {
        let kind = EntryKind::from_byte(*body.first()?)?;
        let key_len = usize::try_from(read_u32(body.get(..ENTRY_HEADER_BYTES)?, 4)).ok()?;
        let value_len = usize::try_from(read_u32(body, 8)).ok()?;
        let rest = &body[ENTRY_HEADER_BYTES..];
        let key = rest.get(..key_len)?;
        let value = rest.get(key_len..key_len.checked_add(value_len)?)?;
        entries.push(Entry { kind, key, value });
        body = &rest[key_len + value_len..];
    }
    Some(entries)
}

/// The little-endian `u32` at `at` (callers check the bounds).
fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::{Entry, EntryKind, append_entry, append_trailer, decode, header};

    fn file() -> Vec<u8> {
        let mut out = header();
        let put = Entry {
            kind: EntryKind::Put,
            key: b"k1",
            value: b"v1",
        };
        append_entry(&mut out, put).unwrap();
        append_trailer(&mut out, 1);
        out
    }

    #[test]
    fn round_trips() {
        let bytes = file();
        let entries = decode(&bytes).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].key, entries[0].value), (&b"k1"[..], &b"v1"[..]));
    }

    #[test]
    fn every_flipped_byte_is_corruption() {
        let good = file();
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            let err = decode(&bad).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Corruption, "byte {at}");
        }
    }

    #[test]
    fn truncation_is_corruption() {
        let good = file();
        for len in 0..good.len() {
            assert!(decode(&good[..len]).is_err(), "length {len}");
        }
    }
}
