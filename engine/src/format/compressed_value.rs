//! Compressed values (format version 5): the value-dictionary frame's body
//! and the encoding of one compressed value.
//!
//! ```text
//! value-dictionary frame body (frame kind 5, first frame of a segment):
//! offset size field
//!   0     1   codec: 1 = LZ4 block format with an external dictionary
//!   1     3   reserved, zero
//!   4     4   dictionary length d (at most MAX_DICTIONARY_BYTES)
//!   8     d   the dictionary, then zero padding to 8 bytes
//!
//! a compressed value (a short put's value field, value encoding 1):
//!   LEB128 varint   the value's length as written
//!   LZ4 block       the value, compressed with the dictionary as the
//!                   history before its first byte
//! ```

use super::{align8, read_u32};

/// Codec byte of the one codec this version writes and reads.
const CODEC_LZ4: u8 = 1;
/// Size of the dictionary body's fixed part.
const DICTIONARY_HEADER_BYTES: usize = 8;
/// The largest dictionary a segment may hold (LZ4 refers back at most
/// 64 KiB).
pub const MAX_DICTIONARY_BYTES: usize = 64 << 10;

/// The most an LZ4 block's decoded bytes can outnumber its own.
const MAX_EXPANSION: usize = 255;

/// A segment's value dictionary, decoded from its frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueDictionary {
    bytes: Vec<u8>,
}

impl ValueDictionary {
    /// A dictionary of `bytes` (cut to [`MAX_DICTIONARY_BYTES`]).
    pub fn new(mut bytes: Vec<u8>) -> Self {
        bytes.truncate(MAX_DICTIONARY_BYTES);
        ValueDictionary { bytes }
    }

    /// The dictionary's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The frame body holding this dictionary.
    pub fn encode_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(align8(DICTIONARY_HEADER_BYTES + self.bytes.len()));
        out.push(CODEC_LZ4);
        out.extend_from_slice(&[0u8; 3]);
        let len = u32::try_from(self.bytes.len()).expect("dictionaries are at most 64 KiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&self.bytes);
        out.resize(align8(out.len()), 0);
        out
    }

    /// Decodes a dictionary frame's body (its checksum already checked).
    pub fn decode_body(body: &[u8]) -> Result<Self, String> {
        if body.len() < DICTIONARY_HEADER_BYTES {
            return Err("value dictionary body too short".into());
        }
        if body[0] != CODEC_LZ4 {
            return Err(format!("unknown value codec {}", body[0]));
        }
        if body[1..4] != [0, 0, 0] {
            return Err("value dictionary reserved bytes are not zero".into());
        }
        let len = read_u32(body, 4) as usize;
        if len > MAX_DICTIONARY_BYTES {
            return Err(format!("value dictionary of {len} bytes, over the limit"));
        }
        let end = DICTIONARY_HEADER_BYTES + len;
        if align8(end) != body.len() || body[end..].iter().any(|&b| b != 0) {
            return Err("value dictionary length does not match its frame".into());
        }
        Ok(ValueDictionary {
            bytes: body[DICTIONARY_HEADER_BYTES..end].to_vec(),
        })
    }

    /// `value` compressed with this dictionary, if that saves at least an
    /// eighth of its bytes (RocksDB's rule for a block worth compressing);
    /// `None` means store it as written.
    pub fn compress(&self, value: &[u8]) -> Option<Vec<u8>> {
        if value.len() < 16 {
            return None;
        }
        let mut out = Vec::with_capacity(value.len());
        push_varint(&mut out, value.len() as u64);
        let at = out.len();
        out.resize(
            at + lz4_flex::block::get_maximum_output_size(value.len()),
            0,
        );
        let n =
            lz4_flex::block::compress_into_with_dict(value, &mut out[at..], &self.bytes).ok()?;
        out.truncate(at + n);
        (out.len() <= value.len() - value.len() / 8).then_some(out)
    }

    /// Decodes a compressed value (see the module comment). Damage (a bad
    /// varint, a block that does not decode to the declared length) is an
    /// error, never a panic.
    pub fn decompress(&self, stored: &[u8], limit: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.decompress_onto(stored, limit, &mut out)?;
        Ok(out)
    }

    /// [`Self::decompress`], appending the value to `out` (which is left
    /// as it was on an error).
    pub fn decompress_onto(
        &self,
        stored: &[u8],
        limit: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let (len, used) = read_varint(stored).ok_or("compressed value length does not read")?;
        // An LZ4 block expands at most 255-fold: a larger claim is damage,
        // and must not cost an allocation of that size.
        let limit = limit.min(stored.len().saturating_mul(MAX_EXPANSION));
        let len = usize::try_from(len)
            .ok()
            .filter(|&n| n <= limit)
            .ok_or_else(|| format!("compressed value declares {len} bytes, over the limit"))?;
        let start = out.len();
        out.resize(start + len, 0);
        let decoded = lz4_flex::block::decompress_into_with_dict(
            &stored[used..],
            &mut out[start..],
            &self.bytes,
        );
        let checked = match decoded {
            Ok(n) if n == len => Ok(()),
            Ok(n) => Err(format!(
                "compressed value decodes to {n} bytes, its header says {len}"
            )),
            Err(e) => Err(format!("compressed value does not decode: {e}")),
        };
        if checked.is_err() {
            out.truncate(start);
        }
        checked
    }
}

/// The length a compressed value declares for itself (its first field),
/// if that reads.
pub fn declared_len(stored: &[u8]) -> Option<usize> {
    read_varint(stored).and_then(|(n, _)| usize::try_from(n).ok())
}

fn push_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A LEB128 varint at the start of `bytes` and the bytes it took.
fn read_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut n = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        n |= u64::from(b & 0x7f).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(i: u32) -> Vec<u8> {
        format!(
            "{{\"id\":{i},\"name\":\"user{i:06}\",\"created\":\"2026-11-{:02}\",\"active\":true}}",
            i % 28 + 1
        )
        .into_bytes()
    }

    fn dictionary() -> ValueDictionary {
        ValueDictionary::new((0..40).flat_map(|i| json(i * 1_000)).collect())
    }

    #[test]
    fn values_round_trip_through_the_dictionary_and_shrink() {
        let dict = dictionary();
        for i in 0..200 {
            let value = json(i * 7);
            let stored = dict.compress(&value).expect("a JSON value compresses");
            assert!(
                stored.len() < value.len() / 2,
                "{} -> {}",
                value.len(),
                stored.len()
            );
            assert_eq!(dict.decompress(&stored, 1 << 20).unwrap(), value);
        }
    }

    #[test]
    fn incompressible_and_tiny_values_are_stored_as_written() {
        let dict = dictionary();
        let mut rng = crate::test_rng::TestRng::new(0x2545_f491_4f6c_dd1d);
        let random: Vec<u8> = (0..400).map(|_| rng.next_u64() as u8).collect();
        assert!(dict.compress(&random).is_none());
        assert!(dict.compress(b"short").is_none());
    }

    #[test]
    fn the_dictionary_body_round_trips_and_rejects_damage() {
        let dict = dictionary();
        let body = dict.encode_body();
        assert_eq!(body.len() % 8, 0);
        assert_eq!(ValueDictionary::decode_body(&body).unwrap(), dict);
        let mut bad = body.clone();
        bad[0] = 9;
        assert!(ValueDictionary::decode_body(&bad).is_err());
        let mut bad = body.clone();
        bad[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ValueDictionary::decode_body(&bad).is_err());
        assert!(ValueDictionary::decode_body(&body[..4]).is_err());
    }

    #[test]
    fn damaged_compressed_values_are_errors_not_panics() {
        let dict = dictionary();
        let stored = dict.compress(&json(3)).unwrap();
        for i in 0..stored.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = stored.clone();
                bad[i] ^= flip;
                // A flip in a literal may decode to other bytes (the
                // record's checksum catches those); none may panic.
                let _ = dict.decompress(&bad, 1 << 20);
            }
        }
        assert!(
            dict.decompress(&stored[..stored.len() / 2], 1 << 20)
                .is_err()
        );
        assert!(dict.decompress(&[0xff; 12], 1 << 20).is_err());
        assert!(dict.decompress(&stored, 3).is_err(), "over the limit");
    }
}
