//! The entries of a block: `shared:varint32 | non_shared:varint32 |
//! value_len:varint32 | key delta | value`, each key sharing `shared`
//! leading bytes with the previous one; then `restart offsets:u32 ×n`,
//! optionally a data-block hash index (`buckets:u8 ×m | m:u16`), and a
//! packed `u32`: n in the low 28 bits, bit 31 = hash index present,
//! bit 29 = uniform keys (a hint), bit 28 = separated keys and values.
//!
//! Index blocks of format_version 4+ may omit `value_len`: the value is a
//! block handle, whole at a restart point (shared = 0) and otherwise only
//! the size as a signed delta from the previous handle's.

use std::ops::Range;

use crate::coding::Reader;
use crate::error::{FormatError, Result};
use crate::table::handle::{BLOCK_TRAILER_SIZE, BlockHandle};

const HASH_INDEX_BIT: u32 = 1 << 31;
const UNIFORM_KEYS_BIT: u32 = 1 << 29;
const SEPARATED_KV_BIT: u32 = 1 << 28;
const MAX_RESTARTS: u32 = (1 << 28) - 1;

/// One decoded entry: its full key and where its value lies in the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's key (an internal key in data blocks).
    pub key: Vec<u8>,
    /// The value's byte range within the block.
    pub value: Range<usize>,
}

/// The byte range of a block's entries (before its restart array).
pub fn entries_end(block: &[u8], what: &'static str) -> Result<usize> {
    let Some(split) = block.len().checked_sub(4) else {
        return Err(FormatError::corrupt(what, "block shorter than its footer"));
    };
    let mut r = Reader::new(&block[split..], what);
    let mut packed = r.fixed32("block footer")?;
    if packed & SEPARATED_KV_BIT != 0 {
        return Err(FormatError::unsupported(
            "blocks with separated keys and values",
        ));
    }
    let hashed = packed & HASH_INDEX_BIT != 0;
    packed &= !(HASH_INDEX_BIT | UNIFORM_KEYS_BIT);
    if packed > MAX_RESTARTS {
        return Err(FormatError::unsupported(
            "a block footer feature newer than this reader",
        ));
    }
    let mut end = split;
    if hashed {
        end = hash_index_start(block, end, what)?;
    }
    (packed as usize)
        .checked_mul(4)
        .and_then(|n| end.checked_sub(n))
        .ok_or_else(|| FormatError::corrupt(what, "restart array larger than the block"))
}

/// Where the data-block hash index starting before `end` begins.
fn hash_index_start(block: &[u8], end: usize, what: &'static str) -> Result<usize> {
    let buckets_field = end
        .checked_sub(2)
        .and_then(|at| block.get(at..end))
        .ok_or_else(|| FormatError::corrupt(what, "hash index truncated"))?;
    let buckets = usize::from(u16::from_le_bytes([buckets_field[0], buckets_field[1]]));
    end.checked_sub(2 + buckets)
        .filter(|_| buckets > 0)
        .ok_or_else(|| FormatError::corrupt(what, "hash index larger than the block"))
}

/// Decodes every entry of a block whose entries carry a value length.
pub fn entries(block: &[u8], what: &'static str) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    for_each_entry(block, what, |key, value| {
        out.push(Entry {
            key: key.to_vec(),
            value,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Calls `visit` with each entry's full key and its value's byte range, in
/// order, without copying keys.
pub fn for_each_entry(
    block: &[u8],
    what: &'static str,
    mut visit: impl FnMut(&[u8], Range<usize>) -> Result<()>,
) -> Result<()> {
    let end = entries_end(block, what)?;
    let mut r = Reader::new(&block[..end], what);
    let mut key = Vec::new();
    while !r.is_empty() {
        let (shared, non_shared) = key_sizes(&mut r, &key, what)?;
        let value_len = r.varint32("value length")? as usize;
        extend_key(&mut key, shared, r.bytes(non_shared, "key")?);
        let start = end - r.rest().len();
        r.bytes(value_len, "value")?;
        visit(&key, start..start + value_len)?;
    }
    Ok(())
}

fn key_sizes(r: &mut Reader<'_>, prev: &[u8], what: &'static str) -> Result<(usize, usize)> {
    let shared = r.varint32("shared key length")? as usize;
    let non_shared = r.varint32("key length")? as usize;
    if shared > prev.len() {
        return Err(FormatError::corrupt(
            what,
            format!("key shares {shared} bytes with a {}-byte key", prev.len()),
        ));
    }
    Ok((shared, non_shared))
}

fn extend_key(key: &mut Vec<u8>, shared: usize, delta: &[u8]) {
    key.truncate(shared);
    key.extend_from_slice(delta);
}

/// The entries of an index block, in order: each block's separator key
/// (at least the block's last key) and handle. `delta_values` says whether
/// values are delta-encoded handles without a length (format_version 4+
/// with `index_value_is_delta_encoded`).
pub fn index_handles(
    block: &[u8],
    delta_values: bool,
    what: &'static str,
) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
    if !delta_values {
        let entries = entries(block, what)?;
        return entries
            .into_iter()
            .map(|e| {
                let h = BlockHandle::decode(&mut Reader::new(&block[e.value.clone()], what))?;
                Ok((e.key, h))
            })
            .collect();
    }
    let end = entries_end(block, what)?;
    let mut r = Reader::new(&block[..end], what);
    let mut key = Vec::new();
    let mut out: Vec<(Vec<u8>, BlockHandle)> = Vec::new();
    while !r.is_empty() {
        let (shared, non_shared) = key_sizes(&mut r, &key, what)?;
        extend_key(&mut key, shared, r.bytes(non_shared, "key")?);
        let handle = match (shared, out.last()) {
            (0, _) => BlockHandle::decode(&mut r)?,
            (_, Some((_, prev))) => delta_handle(prev, r.varsigned64("size delta")?, what)?,
            (_, None) => return Err(FormatError::corrupt(what, "first index entry shares a key")),
        };
        out.push((key.clone(), handle));
    }
    Ok(out)
}

fn delta_handle(prev: &BlockHandle, delta: i64, what: &'static str) -> Result<BlockHandle> {
    let size = prev
        .size
        .checked_add_signed(delta)
        .ok_or_else(|| FormatError::corrupt(what, "index size delta out of range"))?;
    Ok(BlockHandle {
        offset: prev.offset + prev.size + BLOCK_TRAILER_SIZE,
        size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    /// Builds a block with restart interval `interval`.
    fn build(pairs: &[(&[u8], &[u8])], interval: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut restarts = Vec::new();
        let mut prev: &[u8] = b"";
        for (i, (k, v)) in pairs.iter().enumerate() {
            let shared = if i % interval == 0 {
                restarts.push(out.len() as u32);
                0
            } else {
                prev.iter()
                    .zip(k.iter())
                    .take_while(|(a, b)| a == b)
                    .count()
            };
            put_varint64(&mut out, shared as u64);
            put_varint64(&mut out, (k.len() - shared) as u64);
            put_varint64(&mut out, v.len() as u64);
            out.extend_from_slice(&k[shared..]);
            out.extend_from_slice(v);
            prev = k;
        }
        for r in &restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        out
    }

    #[test]
    fn shared_prefixes_rebuild_keys() {
        let pairs: [(&[u8], &[u8]); 3] = [(b"apple", b"1"), (b"apricot", b"22"), (b"banana", b"")];
        let block = build(&pairs, 2);
        let got = entries(&block, "t").unwrap();
        assert_eq!(got.len(), 3);
        for (e, (k, v)) in got.iter().zip(pairs) {
            assert_eq!(e.key, k);
            assert_eq!(&block[e.value.clone()], v);
        }
    }

    #[test]
    fn hash_index_trailer_is_skipped() {
        let mut block = build(&[(b"k", b"v")], 1);
        let n = u32::from_le_bytes(block[block.len() - 4..].try_into().unwrap());
        block.truncate(block.len() - 4);
        block.extend_from_slice(&[9, 9, 9]); // three buckets
        block.extend_from_slice(&3u16.to_le_bytes());
        block.extend_from_slice(&(n | HASH_INDEX_BIT).to_le_bytes());
        let got = entries(&block, "t").unwrap();
        assert_eq!(got[0].key, b"k");
    }

    #[test]
    fn damaged_blocks_are_errors() {
        let block = build(&[(b"apple", b"1"), (b"apricot", b"2")], 16);
        for cut in 0..block.len() {
            let _ = entries(&block[..cut], "t");
        }
        assert!(entries(&[1, 2], "t").is_err());
        let mut huge = block.clone();
        let at = huge.len() - 4;
        huge[at..].copy_from_slice(&1000u32.to_le_bytes());
        assert!(entries(&huge, "t").is_err());
        let mut bad_shared = block;
        bad_shared[0] = 3; // first key claims a shared prefix
        assert!(entries(&bad_shared, "t").is_err());
    }

    #[test]
    fn delta_encoded_index_values_follow_the_previous_handle() {
        let mut out = Vec::new();
        // entry 1: restart, full handle (0, 100)
        out.extend_from_slice(&[0, 1, b'a', 0, 100]);
        // entry 2: shares 1 byte, size delta -4 (zigzag 7)
        out.extend_from_slice(&[1, 1, b'b', 7]);
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        let handles = index_handles(&out, true, "t").unwrap();
        assert_eq!(
            handles[1].1,
            BlockHandle {
                offset: 105,
                size: 96
            }
        );
    }
}
