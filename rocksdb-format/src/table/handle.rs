//! A block handle: where a block lies in a table file (varint64 offset,
//! varint64 size, the size excluding the 5-byte block trailer).

use crate::coding::Reader;
use crate::error::Result;

/// The trailer after every block: compression type byte and checksum.
pub const BLOCK_TRAILER_SIZE: u64 = 5;

/// The position and size of a block in a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Size of the block, without its trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Decodes a handle from `r`.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let offset = r.varint64("block handle offset")?;
        let size = r.varint64("block handle size")?;
        Ok(BlockHandle { offset, size })
    }

    /// Decodes a handle that is a whole value (a meta index entry).
    pub fn from_value(value: &[u8], what: &'static str) -> Result<Self> {
        BlockHandle::decode(&mut Reader::new(value, what))
    }

    /// The offset just after the block and its trailer.
    pub fn end_with_trailer(&self) -> u64 {
        self.offset
            .saturating_add(self.size)
            .saturating_add(BLOCK_TRAILER_SIZE)
    }
}
