//! The on-disk format, byte by byte (see `engine/FORMAT.md`).
//!
//! All integers are little-endian. Offsets are named constants derived from
//! each other so the layout is written down once.

pub mod byte_sink;
pub mod compressed_value;
pub mod crc;
pub mod frame;
pub mod index_checkpoint;
pub mod live_segments;
pub mod location;
pub mod manifest;
pub mod record;
pub mod segment_header;

/// Reads a little-endian `u32` at `at`. The caller has checked the bounds.
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

/// Reads a little-endian `u64` at `at`. The caller has checked the bounds.
pub(crate) fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Rounds `n` up to a multiple of 8.
pub(crate) const fn align8(n: usize) -> usize {
    (n + 7) & !7
}
