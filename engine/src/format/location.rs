//! Where a record lives: a segment id and an offset, packed into a `u64`.
//!
//! Layout: bits 63..32 segment id, bit 31 tombstone flag, bits 30..0 the
//! record's byte offset divided by 8 (records are 8-byte aligned), so a
//! segment may be up to 16 GiB. The tombstone flag lets scans skip deleted
//! keys without touching the log.

/// A packed record location. `Location::NONE` means "no record".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Location(pub u64);

/// Largest offset a location can express (exclusive): no segment may be
/// larger, since a record starting at or past it has no location.
pub const MAX_SEGMENT_BYTES: u64 = 1 << 34;

const TOMBSTONE_BIT: u64 = 1 << 31;
const OFFSET_MASK: u64 = TOMBSTONE_BIT - 1;
/// Bits no offset a location can hold has set: those below 8 (records are
/// 8-aligned) and those from [`MAX_SEGMENT_BYTES`] up. Testing them takes a
/// single AND: packing such an offset would shift its low bits out and its
/// high bits into the tombstone flag and the segment id.
const UNADDRESSABLE_BITS: u64 = !(MAX_SEGMENT_BYTES - 1) | 7;

impl Location {
    /// The absent location (end of a version chain).
    pub const NONE: Location = Location(u64::MAX);

    /// Packs a segment id, an 8-aligned offset and the tombstone flag.
    ///
    /// # Panics
    ///
    /// If `offset` is not 8-aligned or not below [`MAX_SEGMENT_BYTES`], in
    /// release builds too (a wrapped location would point at other bytes).
    /// Callers whose offsets are not bounded by a segment's capacity use
    /// [`Location::try_new`].
    #[inline]
    #[track_caller]
    pub fn new(segment: u32, offset: u64, tombstone: bool) -> Self {
        match Self::try_new(segment, offset, tombstone) {
            Some(location) => location,
            None => unaddressable(offset),
        }
    }

    /// [`Location::new`], or `None` if `offset` is not 8-aligned or not
    /// below [`MAX_SEGMENT_BYTES`].
    #[inline]
    pub const fn try_new(segment: u32, offset: u64, tombstone: bool) -> Option<Self> {
        if !Self::can_address(offset) {
            return None;
        }
        let flag = if tombstone { TOMBSTONE_BIT } else { 0 };
        Some(Location(((segment as u64) << 32) | flag | (offset >> 3)))
    }

    /// Whether a record may start at `offset`: 8-aligned and below
    /// [`MAX_SEGMENT_BYTES`].
    #[inline]
    pub const fn can_address(offset: u64) -> bool {
        offset & UNADDRESSABLE_BITS == 0
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

/// The panic of [`Location::new`], out of its inlined fast path.
#[cold]
#[inline(never)]
#[track_caller]
fn unaddressable(offset: u64) -> ! {
    panic!(
        "offset {offset} is not an 8-aligned offset below {MAX_SEGMENT_BYTES}: \
         no location can hold it"
    )
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

    /// The last offset a location holds is accepted; the limit itself and
    /// anything past it are refused, not wrapped into the tombstone flag
    /// and the segment id.
    #[test]
    fn offsets_at_and_past_the_limit_are_refused() {
        let last = Location::try_new(5, MAX_SEGMENT_BYTES - 8, false).unwrap();
        assert_eq!((last.segment(), last.offset()), (5, MAX_SEGMENT_BYTES - 8));
        assert!(!last.is_tombstone());
        for offset in [
            MAX_SEGMENT_BYTES,
            MAX_SEGMENT_BYTES + 8,
            MAX_SEGMENT_BYTES << 1,
            u64::MAX - 7,
            64 + 4,
            1,
        ] {
            assert_eq!(Location::try_new(5, offset, false), None, "{offset}");
            assert!(!Location::can_address(offset), "{offset}");
        }
        assert!(Location::can_address(0) && Location::can_address(4096));
    }

    /// In release builds as in debug ones: a location past the limit would
    /// make index entries point at the wrong bytes.
    #[test]
    #[should_panic(expected = "no location can hold it")]
    fn packing_the_limit_panics() {
        let _ = Location::new(5, MAX_SEGMENT_BYTES, false);
    }

    #[test]
    #[should_panic(expected = "no location can hold it")]
    fn packing_past_the_limit_panics() {
        let _ = Location::new(5, MAX_SEGMENT_BYTES + 8, true);
    }
}
