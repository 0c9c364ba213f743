//! The fixed-size footer at the end of a block-based table.
//!
//! format_version 2..=5 (53 bytes): `checksum type:u8 | metaindex handle |
//! index handle | zero padding to 40 bytes | format_version:u32 |
//! magic:u64`. format_version 6 and 7 (also 53 bytes): `checksum type:u8 |
//! extended magic 3e 00 7a 00 | footer checksum:u32 | base context
//! checksum:u32 | metaindex size:u32 | 16 unchecked bytes | 8 zero bytes |
//! format_version:u32 | magic:u64`; the metaindex block ends right before
//! the footer and the index handle moves into the metaindex.

use crate::checksum::{ChecksumType, context_modifier};
use crate::coding::Reader;
use crate::error::{FormatError, Result};
use crate::table::handle::{BLOCK_TRAILER_SIZE, BlockHandle};

/// Magic number of block-based tables.
pub const BLOCK_BASED_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
const LEGACY_BLOCK_BASED_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const PLAIN_MAGIC: u64 = 0x8242_2296_63bf_9564;
const LEGACY_PLAIN_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
const CUCKOO_MAGIC: u64 = 0x9267_89d0_c5f1_7873;
/// Size of the footer of format_version 1 and later.
pub const FOOTER_SIZE: usize = 1 + 40 + 4 + 8;
const EXTENDED_MAGIC: [u8; 4] = [0x3e, 0x00, 0x7a, 0x00];
/// The newest format_version we read.
pub const MAX_FORMAT_VERSION: u32 = 7;
const MIN_FORMAT_VERSION: u32 = 2;
const WHAT: &str = "table footer";

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The block checksum function.
    pub checksum: ChecksumType,
    /// The table's format_version.
    pub format_version: u32,
    /// Where the metaindex block is.
    pub metaindex: BlockHandle,
    /// Where the index block is (format_version < 6); later versions name it
    /// in the metaindex.
    pub index: Option<BlockHandle>,
    /// The base of per-block context checksums (0 = none).
    pub base_context: u32,
}

/// Decodes the footer: `tail` is the last [`FOOTER_SIZE`] bytes of a file
/// of `file_size` bytes.
pub fn decode(tail: &[u8], file_size: u64) -> Result<Footer> {
    if tail.len() != FOOTER_SIZE {
        return Err(FormatError::corrupt(WHAT, "file too short to be a table"));
    }
    let mut r = Reader::new(tail, WHAT);
    let checksum_byte = r.u8("checksum type")?;
    let part2 = r.bytes(40, "handles")?;
    let format_version = r.fixed32("format version")?;
    let magic = r.fixed64("magic")?;
    check_magic(magic)?;
    if !(MIN_FORMAT_VERSION..=MAX_FORMAT_VERSION).contains(&format_version) {
        return Err(FormatError::unsupported(format!(
            "block-based table format_version {format_version} (this reader knows 2 to 7)"
        )));
    }
    let checksum = ChecksumType::from_byte(checksum_byte)?;
    let footer_offset = file_size.saturating_sub(FOOTER_SIZE as u64);
    if format_version >= 6 {
        decode_v6(tail, part2, checksum, format_version, footer_offset)
    } else {
        let mut h = Reader::new(part2, WHAT);
        let metaindex = BlockHandle::decode(&mut h)?;
        let index = BlockHandle::decode(&mut h)?;
        Ok(Footer {
            checksum,
            format_version,
            metaindex,
            index: Some(index),
            base_context: 0,
        })
    }
}

fn check_magic(magic: u64) -> Result<()> {
    match magic {
        BLOCK_BASED_MAGIC => Ok(()),
        LEGACY_BLOCK_BASED_MAGIC => Err(FormatError::unsupported(
            "legacy block-based tables (format_version 0/1, RocksDB before 4.6)",
        )),
        PLAIN_MAGIC | LEGACY_PLAIN_MAGIC => Err(FormatError::unsupported("PlainTable SST files")),
        CUCKOO_MAGIC => Err(FormatError::unsupported("CuckooTable SST files")),
        other => Err(FormatError::corrupt(
            WHAT,
            format!("bad magic number {other:#018x}"),
        )),
    }
}

fn decode_v6(
    tail: &[u8],
    part2: &[u8],
    checksum: ChecksumType,
    format_version: u32,
    footer_offset: u64,
) -> Result<Footer> {
    let mut r = Reader::new(part2, WHAT);
    if r.bytes(4, "extended magic")? != EXTENDED_MAGIC {
        return Err(FormatError::corrupt(WHAT, "bad extended magic"));
    }
    let stored = r.fixed32("footer checksum")?;
    let base_context = r.fixed32("base context checksum")?;
    let metaindex_size = r.fixed32("metaindex size")?;
    r.bytes(16, "reserved")?;
    if r.fixed64("reserved")? != 0 {
        return Err(FormatError::unsupported(
            "a table footer feature newer than this reader",
        ));
    }
    if checksum != ChecksumType::None {
        verify_footer_checksum(tail, checksum, stored, base_context, footer_offset)?;
    }
    let end = footer_offset
        .checked_sub(BLOCK_TRAILER_SIZE)
        .and_then(|e| e.checked_sub(u64::from(metaindex_size)))
        .ok_or_else(|| FormatError::corrupt(WHAT, "metaindex larger than the file"))?;
    Ok(Footer {
        checksum,
        format_version,
        metaindex: BlockHandle {
            offset: end,
            size: u64::from(metaindex_size),
        },
        index: None,
        base_context,
    })
}

fn verify_footer_checksum(
    tail: &[u8],
    checksum: ChecksumType,
    stored: u32,
    base_context: u32,
    footer_offset: u64,
) -> Result<()> {
    let mut copy = [0u8; FOOTER_SIZE];
    copy.copy_from_slice(tail);
    copy[5..9].fill(0);
    let got = checksum
        .of_bytes(&copy)
        .wrapping_add(context_modifier(base_context, footer_offset));
    if got != stored {
        return Err(FormatError::ChecksumMismatch {
            what: WHAT.into(),
            got,
            expected: stored,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v5_footer(magic: u64) -> Vec<u8> {
        let mut f = vec![1u8, 10, 20, 30, 40];
        f.resize(41, 0);
        f.extend_from_slice(&5u32.to_le_bytes());
        f.extend_from_slice(&magic.to_le_bytes());
        f
    }

    #[test]
    fn decodes_a_version_5_footer() {
        let f = decode(&v5_footer(BLOCK_BASED_MAGIC), 1000).unwrap();
        assert_eq!(
            f.metaindex,
            BlockHandle {
                offset: 10,
                size: 20
            }
        );
        assert_eq!(
            f.index,
            Some(BlockHandle {
                offset: 30,
                size: 40
            })
        );
        assert_eq!(f.checksum, ChecksumType::Crc32c);
    }

    #[test]
    fn other_table_kinds_are_named() {
        for magic in [PLAIN_MAGIC, CUCKOO_MAGIC, LEGACY_BLOCK_BASED_MAGIC] {
            assert!(matches!(
                decode(&v5_footer(magic), 1000),
                Err(FormatError::Unsupported { .. })
            ));
        }
        assert!(matches!(
            decode(&v5_footer(7), 1000),
            Err(FormatError::Corrupt { .. })
        ));
        assert!(decode(&[0; 10], 1000).is_err());
    }
}
