//! A packed leaf's arrays in one block of the index's heap.
//!
//! A packed leaf has six arrays (floors, places, group table, words, hints,
//! marks; see [`super::packed_leaf`]) whose lengths differ from leaf to
//! leaf. Allocated apart, they fell into some twenty size classes of the
//! heap, each holding a partly filled 2 MiB page: about 25 MB of resident
//! memory whatever the key count. Here they share one block of 64-bit
//! cells, in this order, each array starting at a cell:
//!
//! | array | per cell | element `i` |
//! |---|---|---|
//! | floors | 1 `u64` | the cell |
//! | places | 2 `u32` | bits `32 × (i % 2)` and up of cell `i / 2` |
//! | group table | 2 `u32` | as places |
//! | words | 2 `u32` | as places |
//! | hints | 8 `u8` | bits `8 × (i % 8)` and up of cell `i / 8` |
//! | marks | 16 nibbles | bits `4 × (i % 16)` and up of cell `i / 16` |
//!
//! Words and group-table slots change in place ([`PackedArrays::store_word`],
//! [`PackedArrays::store_group`]); only the index's single writer stores,
//! so rewriting the whole cell around the changed half loses no other
//! store. The rest never changes once built.

use std::sync::atomic::{AtomicU64, Ordering};

use super::node_heap::{self, HeapBox};

/// The contents of a leaf's arrays, to build a block from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts<'a> {
    /// Each window's floor.
    pub(crate) floors: &'a [u64],
    /// Each window's place (first position and shift).
    pub(crate) places: &'a [u32],
    /// The group table, free slots included.
    pub(crate) groups: &'a [u32],
    /// Each entry's word.
    pub(crate) words: &'a [u32],
    /// Each entry's hint.
    pub(crate) hints: &'a [u8],
    /// Each entry's mark (the low 4 bits of each byte).
    pub(crate) marks: &'a [u8],
}

/// One block holding a leaf's arrays (see the module docs).
#[derive(Debug)]
pub(crate) struct PackedArrays {
    cells: HeapBox<[AtomicU64]>,
    entries: u32,
    windows: u32,
    group_slots: u32,
    places_at: u32,
    groups_at: u32,
    words_at: u32,
    hints_at: u32,
    marks_at: u32,
}

impl PackedArrays {
    /// A block holding `parts` (`hints` and `marks` as long as `words`).
    pub(crate) fn new(parts: Parts<'_>) -> Self {
        debug_assert_eq!(parts.floors.len(), parts.places.len());
        debug_assert_eq!(parts.words.len(), parts.hints.len());
        debug_assert_eq!(parts.words.len(), parts.marks.len());
        let (entries, windows) = (parts.words.len(), parts.floors.len());
        let places_at = windows;
        let groups_at = places_at + windows.div_ceil(2);
        let words_at = groups_at + parts.groups.len().div_ceil(2);
        let hints_at = words_at + entries.div_ceil(2);
        let marks_at = hints_at + entries.div_ceil(8);
        let mut cells = Vec::with_capacity(marks_at + entries.div_ceil(16));
        cells.extend_from_slice(parts.floors);
        for half in [parts.places, parts.groups, parts.words] {
            cells.extend(half.chunks(2).map(|pair| {
                u64::from(pair[0]) | pair.get(1).map_or(0, |&high| u64::from(high) << 32)
            }));
        }
        cells.extend(parts.hints.chunks(8).map(|bytes| {
            let mut cell = [0u8; 8];
            cell[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(cell)
        }));
        cells.extend(parts.marks.chunks(16).map(|nibbles| {
            let at = |(i, &m): (usize, &u8)| u64::from(m & 0xF) << (4 * i);
            nibbles.iter().enumerate().map(at).fold(0, |a, b| a | b)
        }));
        let len = |n: usize| u32::try_from(n).expect("a packed leaf's arrays fit 32-bit counts");
        PackedArrays {
            cells: node_heap::slice_from_exact(cells.into_iter().map(AtomicU64::new)),
            entries: len(entries),
            windows: len(windows),
            group_slots: len(parts.groups.len()),
            places_at: len(places_at),
            groups_at: len(groups_at),
            words_at: len(words_at),
            hints_at: len(hints_at),
            marks_at: len(marks_at),
        }
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn entries(&self) -> usize {
        self.entries as usize
    }

    /// Number of windows.
    #[inline]
    pub(crate) fn windows(&self) -> usize {
        self.windows as usize
    }

    /// Number of group-table slots, free ones included.
    #[inline]
    pub(crate) fn group_slots(&self) -> usize {
        self.group_slots as usize
    }

    /// Heap bytes of the block.
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of_val(&*self.cells)
    }

    /// Window `w`'s floor.
    #[inline]
    pub(crate) fn floor(&self, w: usize) -> u64 {
        debug_assert!(w < self.windows());
        self.cells[w].load(Ordering::Relaxed)
    }

    /// Window `w`'s place.
    #[inline]
    pub(crate) fn place(&self, w: usize) -> u32 {
        debug_assert!(w < self.windows());
        self.half(self.places_at, w, Ordering::Relaxed)
    }

    /// Group-table slot `s`.
    #[inline]
    pub(crate) fn group(&self, s: usize) -> u32 {
        debug_assert!(s < self.group_slots());
        self.half(self.groups_at, s, Ordering::Acquire)
    }

    /// Entry `i`'s word.
    #[inline]
    pub(crate) fn word(&self, i: usize) -> u32 {
        debug_assert!(i < self.entries());
        self.half(self.words_at, i, Ordering::Acquire)
    }

    /// Entry `i`'s hint.
    #[inline]
    pub(crate) fn hint(&self, i: usize) -> u8 {
        debug_assert!(i < self.entries());
        let cell = self.cells[self.hints_at as usize + i / 8].load(Ordering::Relaxed);
        (cell >> (8 * (i % 8))) as u8
    }

    /// Entry `i`'s mark.
    #[inline]
    pub(crate) fn mark(&self, i: usize) -> u8 {
        debug_assert!(i < self.entries());
        let cell = self.cells[self.marks_at as usize + i / 16].load(Ordering::Relaxed);
        ((cell >> (4 * (i % 16))) & 0xF) as u8
    }

    /// Stores `word` as entry `i`'s. Writer only.
    pub(crate) fn store_word(&self, i: usize, word: u32) {
        debug_assert!(i < self.entries());
        self.store_half(self.words_at, i, word);
    }

    /// Stores `high` into group-table slot `s`. Writer only.
    pub(crate) fn store_group(&self, s: usize, high: u32) {
        debug_assert!(s < self.group_slots());
        self.store_half(self.groups_at, s, high);
    }

    /// Every place, in order.
    #[cfg(test)]
    pub(crate) fn places(&self) -> Vec<u32> {
        (0..self.windows()).map(|w| self.place(w)).collect()
    }

    /// Every group-table slot, in order.
    #[cfg(test)]
    pub(crate) fn groups(&self) -> Vec<u32> {
        (0..self.group_slots()).map(|s| self.group(s)).collect()
    }

    /// Every word, in order, read a cell at a time (a copy of a leaf reads
    /// them all: element by element it cost an insert several times more).
    pub(crate) fn words(&self) -> Vec<u32> {
        let mut words = Vec::with_capacity(self.entries() + 1);
        for cell in self.cells_of(self.words_at, self.entries().div_ceil(2)) {
            let cell = cell.load(Ordering::Acquire);
            words.extend([cell as u32, (cell >> 32) as u32]);
        }
        words.truncate(self.entries());
        words
    }

    /// Every hint, in order, read a cell at a time.
    pub(crate) fn hints(&self) -> Vec<u8> {
        let mut hints = Vec::with_capacity(self.entries() + 8);
        for cell in self.cells_of(self.hints_at, self.entries().div_ceil(8)) {
            hints.extend_from_slice(&cell.load(Ordering::Relaxed).to_le_bytes());
        }
        hints.truncate(self.entries());
        hints
    }

    /// Every mark, in order, read a cell at a time.
    pub(crate) fn marks(&self) -> Vec<u8> {
        let mut marks = Vec::with_capacity(self.entries() + 16);
        for cell in self.cells_of(self.marks_at, self.entries().div_ceil(16)) {
            let cell = cell.load(Ordering::Relaxed);
            marks.extend((0..16).map(|i| ((cell >> (4 * i)) & 0xF) as u8));
        }
        marks.truncate(self.entries());
        marks
    }

    /// The `count` cells from cell `at`.
    fn cells_of(&self, at: u32, count: usize) -> &[AtomicU64] {
        &self.cells[at as usize..at as usize + count]
    }

    /// The first position in `lo..hi` whose hint is not below `hint`
    /// (hints ascend within a window), or `hi`.
    #[inline]
    pub(crate) fn first_hint_from(&self, lo: usize, hi: usize, hint: u8) -> usize {
        first_not_below(lo, hi, |i| self.hint(i) < hint)
    }

    /// The first window in `lo..hi` whose floor is not below `mk` (floors
    /// ascend), or `hi`.
    #[inline]
    pub(crate) fn first_floor_from(&self, lo: usize, hi: usize, mk: u64) -> usize {
        first_not_below(lo, hi, |w| self.floor(w) < mk)
    }

    /// Hints the CPU to load window `w`'s floor and place.
    #[inline]
    pub(crate) fn prefetch_window(&self, w: usize) {
        crate::io::prefetch::prefetch_value(&self.cells[w]);
        crate::io::prefetch::prefetch_value(&self.cells[self.places_at as usize + w / 2]);
    }

    /// Hints the CPU to load entry `i`'s hint, mark and word, and the
    /// group table's first slots.
    #[inline]
    pub(crate) fn prefetch_entry(&self, i: usize) {
        for cell in [
            self.hints_at as usize + i / 8,
            self.marks_at as usize + i / 16,
            self.words_at as usize + i / 2,
            self.groups_at as usize,
        ] {
            crate::io::prefetch::prefetch_value(&self.cells[cell]);
        }
    }

    /// Element `i` of the array of 32-bit halves starting at cell `at`.
    #[inline]
    fn half(&self, at: u32, i: usize, order: Ordering) -> u32 {
        (self.cells[at as usize + i / 2].load(order) >> (32 * (i % 2))) as u32
    }

    /// Stores `value` as element `i` of the halves starting at cell `at`,
    /// keeping the cell's other half. Writer only: no other store can fall
    /// between the load and the store.
    fn store_half(&self, at: u32, i: usize, value: u32) {
        let cell = &self.cells[at as usize + i / 2];
        let shift = 32 * (i % 2);
        let kept = cell.load(Ordering::Relaxed) & !(u64::from(u32::MAX) << shift);
        cell.store(kept | (u64::from(value) << shift), Ordering::Release);
    }
}

/// The first `i` in `lo..hi` for which `below(i)` is false (it is true
/// for a prefix of the range), or `hi`: a binary search.
#[inline]
fn first_not_below(mut lo: usize, mut hi: usize, below: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match below(mid) {
            true => lo = mid + 1,
            false => hi = mid,
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_array_reads_back_and_stores_in_place() {
        for (entries, windows, slots) in [(0, 0, 1), (1, 1, 2), (17, 3, 3), (1000, 33, 65)] {
            let floors: Vec<u64> = (0..windows as u64).map(|w| w * 1_000_003 + 7).collect();
            let places: Vec<u32> = (0..windows as u32).map(|w| (w << 8) | (w % 5)).collect();
            let groups: Vec<u32> = (0..slots as u32).map(|s| s * 3 + 1).collect();
            let words: Vec<u32> = (0..entries as u32)
                .map(|i| i.wrapping_mul(0x9E37_79B9))
                .collect();
            let hints: Vec<u8> = (0..entries).map(|i| (i * 7) as u8).collect();
            let marks: Vec<u8> = (0..entries).map(|i| (i * 5 % 16) as u8).collect();
            let parts = Parts {
                floors: &floors,
                places: &places,
                groups: &groups,
                words: &words,
                hints: &hints,
                marks: &marks,
            };
            let arrays = PackedArrays::new(parts);
            assert_eq!((arrays.entries(), arrays.windows()), (entries, windows));
            assert_eq!(
                (0..windows).map(|w| arrays.floor(w)).collect::<Vec<_>>(),
                floors
            );
            assert_eq!(arrays.places(), places);
            assert_eq!(arrays.groups(), groups);
            assert_eq!(arrays.words(), words);
            assert_eq!(arrays.hints(), hints);
            assert_eq!(arrays.marks(), marks);
            if entries > 0 {
                let last = entries - 1;
                arrays.store_word(last, 0xDEAD_BEEF);
                arrays.store_group(slots - 1, 0xFEED);
                let mut want = words.clone();
                want[last] = 0xDEAD_BEEF;
                assert_eq!(arrays.words(), want);
                assert_eq!(arrays.group(slots - 1), 0xFEED);
                assert_eq!(arrays.groups()[..slots - 1], groups[..slots - 1]);
                assert_eq!(arrays.hints(), hints);
            }
        }
    }

    #[test]
    fn searches_find_the_first_not_below() {
        let floors: Vec<u64> = vec![10, 20, 20, 40];
        let hints: Vec<u8> = vec![0, 3, 3, 9, 200, 255];
        let arrays = PackedArrays::new(Parts {
            floors: &floors,
            places: &[0; 4],
            groups: &[0],
            words: &[0; 6],
            hints: &hints,
            marks: &[0; 6],
        });
        for mk in [0, 10, 11, 20, 21, 40, 41] {
            assert_eq!(
                arrays.first_floor_from(0, 4, mk),
                floors.partition_point(|&f| f < mk)
            );
        }
        for h in [0, 1, 3, 4, 200, 255] {
            assert_eq!(
                arrays.first_hint_from(0, 6, h),
                hints.partition_point(|&x| x < h)
            );
            assert_eq!(
                arrays.first_hint_from(2, 5, h),
                2 + hints[2..5].partition_point(|&x| x < h)
            );
        }
    }
}
