//! The checksums RocksDB stores: masked CRC32C on log records, and the
//! per-table choice of CRC32C, xxHash, xxHash64 or XXH3 on table blocks,
//! optionally mixed with the block's offset (format_version 6 and later).

use crate::error::{FormatError, Result};

const CRC_MASK_DELTA: u32 = 0xa282_ead8;
/// Mixes the last byte into an XXH3 block checksum.
const XXH3_LAST_BYTE_PRIME: u32 = 0x6b90_83d9;

/// RocksDB's "masked" CRC32C: rotated and offset so that a CRC of bytes
/// that embed CRCs does not degenerate.
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(CRC_MASK_DELTA)
}

/// The masked CRC32C of the concatenation of `parts`.
pub fn masked_crc32c(parts: &[&[u8]]) -> u32 {
    let crc = parts.iter().fold(0, |crc, p| crc32c::crc32c_append(crc, p));
    mask_crc(crc)
}

/// The checksum function a block-based table declares in its footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumType {
    /// No checksums are stored.
    None,
    /// Masked CRC32C.
    Crc32c,
    /// 32-bit xxHash, seed 0.
    XxHash,
    /// The low 32 bits of xxHash64, seed 0.
    XxHash64,
    /// The low 32 bits of XXH3-64 over all but the last byte, then the last
    /// byte mixed in.
    Xxh3,
}

impl ChecksumType {
    /// The type for a footer's checksum byte.
    pub fn from_byte(byte: u8) -> Result<Self> {
        Ok(match byte {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            other => {
                return Err(FormatError::corrupt(
                    "table footer",
                    format!("unknown checksum type {other}"),
                ));
            }
        })
    }

    /// The checksum of `data` followed by `last` (a block's compression
    /// type byte), as RocksDB computes it for a block trailer.
    pub fn of_block(self, data: &[u8], last: u8) -> u32 {
        match self {
            ChecksumType::None => 0,
            ChecksumType::Crc32c => masked_crc32c(&[data, &[last]]),
            ChecksumType::XxHash => {
                let mut h = xxhash_rust::xxh32::Xxh32::new(0);
                h.update(data);
                h.update(&[last]);
                h.digest()
            }
            ChecksumType::XxHash64 => {
                let mut h = xxhash_rust::xxh64::Xxh64::new(0);
                h.update(data);
                h.update(&[last]);
                h.digest() as u32
            }
            ChecksumType::Xxh3 => {
                let v = xxhash_rust::xxh3::xxh3_64(data) as u32;
                v ^ u32::from(last).wrapping_mul(XXH3_LAST_BYTE_PRIME)
            }
        }
    }

    /// The checksum of all of `data` (used for the format_version 6 footer).
    pub fn of_bytes(self, data: &[u8]) -> u32 {
        match data.split_last() {
            Some((&last, head)) => self.of_block(head, last),
            None if self == ChecksumType::Crc32c => masked_crc32c(&[]),
            None if self == ChecksumType::XxHash => xxhash_rust::xxh32::xxh32(&[], 0),
            None if self == ChecksumType::XxHash64 => xxhash_rust::xxh64::xxh64(&[], 0) as u32,
            None => 0,
        }
    }
}

/// What format_version 6+ adds to a block's checksum so a block read from
/// the wrong file or offset fails: zero when `base` (the footer's base
/// context checksum) is zero.
pub fn context_modifier(base: u32, offset: u64) -> u32 {
    if base == 0 {
        return 0;
    }
    base ^ (offset as u32).wrapping_add((offset >> 32) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_published_check_value() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn masking_is_rotate_then_add() {
        // RocksDB's published example: Mask(0) = 0xa282ead8.
        assert_eq!(mask_crc(0), 0xa282_ead8);
        assert_eq!(mask_crc(1 << 15), 1u32.wrapping_add(0xa282_ead8));
    }

    #[test]
    fn block_checksums_cover_the_type_byte() {
        let data = b"some block bytes";
        for t in [
            ChecksumType::Crc32c,
            ChecksumType::XxHash,
            ChecksumType::XxHash64,
            ChecksumType::Xxh3,
        ] {
            assert_ne!(t.of_block(data, 0), t.of_block(data, 1), "{t:?}");
            let mut whole = data.to_vec();
            whole.push(7);
            assert_eq!(t.of_block(data, 7), t.of_bytes(&whole), "{t:?}");
        }
        let whole: Vec<u8> = [&data[..], &[1]].concat();
        assert_eq!(
            ChecksumType::Crc32c.of_block(data, 1),
            masked_crc32c(&[&whole])
        );
        assert_eq!(
            ChecksumType::XxHash.of_block(data, 1),
            xxhash_rust::xxh32::xxh32(&whole, 0)
        );
    }

    #[test]
    fn context_modifier_is_off_for_a_zero_base() {
        assert_eq!(context_modifier(0, 12345), 0);
        assert_eq!(context_modifier(5, (1 << 32) + 3), 5 ^ 4);
    }

    #[test]
    fn unknown_checksum_type_is_an_error() {
        assert!(ChecksumType::from_byte(9).is_err());
    }
}
