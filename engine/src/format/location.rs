//! Where a record lives: a segment id and an offset, packed into a `u64`.
//!
//! Layout: bits 63..32 segment id, bit 31 tombstone flag, bits 30..0 the
//! record's byte offset divided by 8 (records are 8-byte aligned), so a
//! segment may be up to 16 GiB. The tombstone flag lets scans skip deleted
//! keys without touching the log.

/// A packed record location. `Location::NONE` means "no record".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Location(pub u64);

/// Largest offset a location can express (exclusive).
pub const MAX_SEGMENT_BYTES: u64 = 1 << 34;

const TOMBSTONE_BIT: u64 = 1 << 31;
const OFFSET_MASK: u64 = TOMBSTONE_BIT - 1;

impl Location {
    /// The absent location (end of a version chain).
    pub const NONE: Location = Location(u64::MAX);

    /// Packs a segment id, an 8-aligned offset and the tombstone flag.
    pub fn new(segment: u32, offset: u64, tombstone: bool) -> Self {
        debug_assert!(offset.is_multiple_of(8) && offset < MAX_SEGMENT_BYTES);
        let flag = if tombstone { TOMBSTONE_BIT } else { 0 };
        Location((u64::from(segment) << 32) | flag | (offset >> 3))
    }

    /// The segment id.
    pub fn segment(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The byte offset within the segment file.
    pub fn offset(self) -> u64 {
        (self.0 & OFFSET_MASK) << 3
    }

    /// Whether the record at this location is a deletion.
    pub fn is_tombstone(self) -> bool {
        self.0 & TOMBSTONE_BIT != 0
    }

    /// Whether this is [`Location::NONE`].
    pub fn is_none(self) -> bool {
        self == Location::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_fields() {
        let loc = Location::new(7, 4096 + 64, true);
        assert_eq!(loc.segment(), 7);
        assert_eq!(loc.offset(), 4160);
        assert!(loc.is_tombstone());
        let put = Location::new(u32::MAX - 1, MAX_SEGMENT_BYTES - 8, false);
        assert_eq!(put.offset(), MAX_SEGMENT_BYTES - 8);
        assert!(!put.is_tombstone());
        assert!(!put.is_none());
    }
}
