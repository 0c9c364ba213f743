//! RocksDB's primitive encodings: little-endian fixed-width integers,
//! LEB128 varints, zigzag signed varints and length-prefixed slices, read
//! from a bounds-checked cursor.

use crate::error::{FormatError, Result};

/// A cursor over untrusted bytes; every read is bounds-checked and a short
/// input is a [`FormatError::Corrupt`] naming `what`.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `bytes`, which hold a `what`.
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn short(&self, field: &str) -> FormatError {
        FormatError::corrupt(self.what, format!("truncated {field}"))
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        if n > self.bytes.len() {
            return Err(self.short(field));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    /// One byte.
    pub fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.bytes(1, field)?[0])
    }

    /// A little-endian `u16`.
    pub fn fixed16(&mut self, field: &str) -> Result<u16> {
        let b = self.bytes(2, field)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// A little-endian `u32`.
    pub fn fixed32(&mut self, field: &str) -> Result<u32> {
        let b = self.bytes(4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A little-endian `u64`.
    pub fn fixed64(&mut self, field: &str) -> Result<u64> {
        let b = self.bytes(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A varint of at most 64 bits.
    pub fn varint64(&mut self, field: &str) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8(field)?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(FormatError::corrupt(
            self.what,
            format!("{field}: varint too long"),
        ))
    }

    /// A varint that must fit 32 bits.
    pub fn varint32(&mut self, field: &str) -> Result<u32> {
        let value = self.varint64(field)?;
        u32::try_from(value)
            .map_err(|_| FormatError::corrupt(self.what, format!("{field}: varint32 overflows")))
    }

    /// A zigzag-encoded signed varint.
    pub fn varsigned64(&mut self, field: &str) -> Result<i64> {
        let v = self.varint64(field)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A varint32 length followed by that many bytes.
    pub fn length_prefixed(&mut self, field: &str) -> Result<&'a [u8]> {
        let n = self.varint32(field)?;
        self.bytes(n as usize, field)
    }
}

/// Appends `value` as a varint (tests and fixtures build bytes with it).
pub fn put_varint64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Decodes a whole slice as one varint64 (RocksDB's integer properties).
pub fn varint64_of(bytes: &[u8], what: &'static str) -> Result<u64> {
    Reader::new(bytes, what).varint64("value")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        for v in [0u64, 1, 127, 128, 300, 1 << 21, u32::MAX as u64, u64::MAX] {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(Reader::new(&buf, "t").varint64("v").unwrap(), v);
        }
    }

    #[test]
    fn truncated_and_overlong_varints_are_errors() {
        assert!(Reader::new(&[0x80], "t").varint64("v").is_err());
        assert!(Reader::new(&[0xff; 11], "t").varint64("v").is_err());
        let mut buf = Vec::new();
        put_varint64(&mut buf, 1 << 33);
        assert!(Reader::new(&buf, "t").varint32("v").is_err());
    }

    #[test]
    fn zigzag_decodes_negative_deltas() {
        assert_eq!(Reader::new(&[3], "t").varsigned64("v").unwrap(), -2);
        assert_eq!(Reader::new(&[4], "t").varsigned64("v").unwrap(), 2);
    }

    #[test]
    fn length_prefix_past_the_end_is_an_error() {
        assert!(Reader::new(&[5, 1, 2], "t").length_prefixed("v").is_err());
        assert_eq!(
            Reader::new(&[2, 1, 2], "t").length_prefixed("v").unwrap(),
            &[1, 2]
        );
    }
}
