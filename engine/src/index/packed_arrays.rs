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
//! | words | 2 `u32`, or 3 of 21 bits | bits `width × (i % per cell)` and up of cell `i / per cell` |
//! | hints | 8 `u8` | bits `8 × (i % 8)` and up of cell `i / 8` |
//! | marks | 32 of 2 bits | bits `2 × (i % 32)` and up of cell `i / 32` |
//!
//! Words and group-table slots change in place ([`PackedArrays::store_word`],
//! [`PackedArrays::store_group`]); only the index's single writer stores,
//! so rewriting the whole cell around the changed half loses no other
//! store. The rest never changes once built.

use std::sync::atomic::{AtomicU64, Ordering};

use super::node_heap::{self, HeapBox};

/// Bits of a wide word: two to a cell.
pub(crate) const WIDE_WORD_BITS: u32 = 32;

/// Bits of a narrow word: three to a cell (its top bit unused).
pub(crate) const NARROW_WORD_BITS: u32 = 21;

/// Bits of a mark.
pub(crate) const MARK_BITS: u32 = 2;

/// Marks in a cell.
const MARKS_PER_CELL: usize = (64 / MARK_BITS) as usize;

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
    /// Bits of each word: [`WIDE_WORD_BITS`] or [`NARROW_WORD_BITS`].
    pub(crate) word_bits: u32,
    /// Each entry's hint.
    pub(crate) hints: &'a [u8],
    /// Each entry's mark (the low [`MARK_BITS`] bits of each byte).
    pub(crate) marks: &'a [u8],
}

/// The arrays of a leaf that are per window or per group (small beside
/// the entries'), as a copy is to have them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame<'a> {
    /// Each window's floor.
    pub(crate) floors: &'a [u64],
    /// Each window's place (first position and shift).
    pub(crate) places: &'a [u32],
    /// The group table, free slots included.
    pub(crate) groups: &'a [u32],
}

/// How a copy's entries differ from its original's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum EntryEdit {
    /// A new entry at `pos`: the entries from `pos` on move up by one.
    Insert {
        /// Position of the new entry.
        pos: usize,
        /// Its word.
        word: u32,
        /// Its hint.
        hint: u8,
        /// Its mark (low [`MARK_BITS`] bits).
        mark: u8,
    },
    /// Entry `pos` removed: the entries after it move down by one.
    Remove(usize),
    /// Entry `pos`'s word replaced.
    Word(usize, u32),
}

/// A block's cells being written in order, section by section.
struct BlockBuilder {
    /// The block, filled in order.
    cells: Cells,
    /// Entries the block will hold.
    entries: usize,
    /// Bits of each word.
    word_bits: u32,
    /// Windows it holds.
    windows: usize,
    /// Group-table slots it holds.
    group_slots: usize,
}

impl BlockBuilder {
    /// A block for `entries` entries, its frame written: the entries'
    /// sections (words, hints, marks, in that order) are the caller's.
    fn new(frame: Frame<'_>, entries: usize, word_bits: u32) -> Self {
        debug_assert_eq!(frame.floors.len(), frame.places.len());
        let (windows, group_slots) = (frame.floors.len(), frame.groups.len());
        let total = windows
            + windows.div_ceil(2)
            + group_slots.div_ceil(2)
            + entries.div_ceil(per_cell(word_bits))
            + entries.div_ceil(8)
            + entries.div_ceil(MARKS_PER_CELL);
        let mut cells = Cells::zeroed(total);
        cells.extend(frame.floors.iter().copied());
        cells.extend(frame.places.chunks(2).map(pack_halves));
        cells.extend(frame.groups.chunks(2).map(pack_halves));
        BlockBuilder {
            cells,
            entries,
            word_bits,
            windows,
            group_slots,
        }
    }

    /// The block, every section written.
    fn finish(self) -> PackedArrays {
        let len = |n: usize| u32::try_from(n).expect("a packed leaf's arrays fit 32-bit counts");
        let places_at = self.windows;
        let groups_at = places_at + self.windows.div_ceil(2);
        let words_at = groups_at + self.group_slots.div_ceil(2);
        let hints_at = words_at + self.entries.div_ceil(per_cell(self.word_bits));
        let marks_at = hints_at + self.entries.div_ceil(8);
        let marks_cells = self.entries.div_ceil(MARKS_PER_CELL);
        debug_assert_eq!(self.cells.filled, marks_at + marks_cells);
        PackedArrays {
            cells: self.cells.block,
            entries: len(self.entries),
            word_bits: self.word_bits as u8,
            windows: len(self.windows),
            group_slots: len(self.group_slots),
            places_at: len(places_at),
            groups_at: len(groups_at),
            words_at: len(words_at),
            hints_at: len(hints_at),
            marks_at: len(marks_at),
        }
    }
}

/// A new block's cells, written in order straight into the index's heap
/// (built in a `Vec` and then copied, the copy cost a leaf's insert a
/// third as much again). Nothing reads the block before it is published.
struct Cells {
    /// The block, zeroed where not yet written.
    block: HeapBox<[AtomicU64]>,
    /// Cells written so far.
    filled: usize,
}

impl Cells {
    /// A block of `len` zero cells, none written.
    fn zeroed(len: usize) -> Self {
        Cells {
            block: node_heap::slice_from_exact((0..len).map(|_| AtomicU64::new(0))),
            filled: 0,
        }
    }

    /// Writes the next cell.
    #[inline]
    fn push(&mut self, value: u64) {
        self.block[self.filled].store(value, Ordering::Relaxed);
        self.filled += 1;
    }

    /// Writes the next cells.
    #[inline]
    fn extend(&mut self, values: impl IntoIterator<Item = u64>) {
        values.into_iter().for_each(|value| self.push(value));
    }
}

/// One or two 32-bit elements in a cell, the first in the low half.
fn pack_halves(pair: &[u32]) -> u64 {
    pack_elements(pair, 32)
}

/// Up to a cell's worth of `width`-bit elements in a cell, the first in
/// the low bits.
fn pack_elements(elements: &[u32], width: u32) -> u64 {
    let mut cell = 0;
    for (i, &e) in elements.iter().enumerate() {
        debug_assert!(u64::from(e) <= low_bits(width), "an element fits its width");
        cell |= u64::from(e) << (width * i as u32);
    }
    cell
}

/// Elements of `width` bits in a cell.
#[inline]
fn per_cell(width: u32) -> usize {
    (64 / width) as usize
}

/// The low `bits` bits set (`bits` at most 64).
#[inline]
fn low_bits(bits: u32) -> u64 {
    u64::MAX.checked_shr(64 - bits).unwrap_or(0)
}

/// Appends to `out` the cells of a section of `width`-bit elements (32,
/// 21, 8 or 4; the first in a cell's low bits, the bits above a cell's
/// last element 0) that `old` holds with `value` inserted at `pos`,
/// `new_len` elements in all. Elements past the end stay 0, as they are
/// in `old`.
fn insert_element(
    old: &[AtomicU64],
    width: u32,
    pos: usize,
    value: u64,
    new_len: usize,
    out: &mut Cells,
) {
    let per = per_cell(width);
    let (used, filled) = (per as u32 * width, low_bits(per as u32 * width));
    let at = pos / per;
    let load = |c: usize| old.get(c).map_or(0, |cell| cell.load(Ordering::Relaxed));
    out.extend((0..at).map(load));
    let bit = (pos % per) as u32 * width;
    let first = load(at);
    let moved = (first & !low_bits(bit)) << width;
    out.push(((first & low_bits(bit)) | (value << bit) | moved) & filled);
    let mut carry = first >> (used - width);
    for c in at + 1..new_len.div_ceil(per) {
        let cell = load(c);
        out.push(((cell << width) | carry) & filled);
        carry = cell >> (used - width);
    }
}

/// Appends to `out` the cells of a section of `width`-bit elements that
/// `old` holds with element `pos` removed, `new_len` elements in all.
fn remove_element(old: &[AtomicU64], width: u32, pos: usize, new_len: usize, out: &mut Cells) {
    let per = per_cell(width);
    let used = per as u32 * width;
    let at = pos / per;
    let load = |c: usize| old.get(c).map_or(0, |cell| cell.load(Ordering::Relaxed));
    let new_cells = new_len.div_ceil(per);
    out.extend((0..at.min(new_cells)).map(load));
    if at >= new_cells {
        return;
    }
    let bit = (pos % per) as u32 * width;
    let first = load(at);
    let above = match bit + width == used {
        true => 0,
        false => (first >> (bit + width)) << bit,
    };
    let mut cell = (first & low_bits(bit)) | above;
    for c in at + 1..=new_cells {
        let next = load(c);
        out.push(cell | ((next & low_bits(width)) << (used - width)));
        cell = next >> width;
    }
}

/// One block holding a leaf's arrays (see the module docs).
#[derive(Debug)]
pub(crate) struct PackedArrays {
    cells: HeapBox<[AtomicU64]>,
    entries: u32,
    word_bits: u8,
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
        debug_assert_eq!(parts.words.len(), parts.hints.len());
        debug_assert_eq!(parts.words.len(), parts.marks.len());
        let frame = Frame {
            floors: parts.floors,
            places: parts.places,
            groups: parts.groups,
        };
        let width = parts.word_bits;
        debug_assert!(width == WIDE_WORD_BITS || width == NARROW_WORD_BITS);
        let mut block = BlockBuilder::new(frame, parts.words.len(), width);
        let words = parts.words.chunks(per_cell(width));
        block
            .cells
            .extend(words.map(|cell| pack_elements(cell, width)));
        block.cells.extend(parts.hints.chunks(8).map(|bytes| {
            let mut cell = [0u8; 8];
            cell[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(cell)
        }));
        block
            .cells
            .extend(parts.marks.chunks(MARKS_PER_CELL).map(|marks| {
                let mut cell = 0;
                for (i, &m) in marks.iter().enumerate() {
                    cell |= (u64::from(m) & low_bits(MARK_BITS)) << (MARK_BITS * i as u32);
                }
                cell
            }));
        block.finish()
    }

    /// A copy of this block with the windows and group table of `frame`
    /// and the entries changed by `edit`. Copies the entries' cells,
    /// shifted past an inserted or removed entry, without taking them
    /// apart (a copy per new key did: an insert cost five times a data
    /// node's). Writer only.
    pub(crate) fn edited(&self, frame: Frame<'_>, edit: EntryEdit) -> Self {
        let entries = self.entries();
        let new_entries = match edit {
            EntryEdit::Insert { .. } => entries + 1,
            EntryEdit::Remove(_) => entries - 1,
            EntryEdit::Word(..) => entries,
        };
        let word_bits = self.word_bits();
        let mut block = BlockBuilder::new(frame, new_entries, word_bits);
        let sections = [
            (
                self.words_at,
                word_bits,
                entries.div_ceil(per_cell(word_bits)),
            ),
            (self.hints_at, 8, entries.div_ceil(8)),
            (self.marks_at, MARK_BITS, entries.div_ceil(MARKS_PER_CELL)),
        ];
        for (section, (at, width, count)) in sections.into_iter().enumerate() {
            let old = self.cells_of(at, count);
            let out = &mut block.cells;
            match edit {
                EntryEdit::Insert {
                    pos,
                    word,
                    hint,
                    mark,
                } => {
                    let mark = u64::from(mark) & low_bits(MARK_BITS);
                    let value = [u64::from(word), u64::from(hint), mark][section];
                    insert_element(old, width, pos, value, new_entries, out);
                }
                EntryEdit::Remove(pos) => remove_element(old, width, pos, new_entries, out),
                EntryEdit::Word(pos, word) => {
                    out.extend(old.iter().map(|c| c.load(Ordering::Relaxed)));
                    if section == 0 {
                        let per = per_cell(word_bits);
                        let cell = &out.block[out.filled - count + pos / per];
                        let shift = word_bits * (pos % per) as u32;
                        let kept = cell.load(Ordering::Relaxed) & !(low_bits(word_bits) << shift);
                        cell.store(kept | (u64::from(word) << shift), Ordering::Relaxed);
                    }
                }
            }
        }
        block.finish()
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn entries(&self) -> usize {
        self.entries as usize
    }

    /// Bits of each word.
    #[inline]
    pub(crate) fn word_bits(&self) -> u32 {
        u32::from(self.word_bits)
    }

    /// Words in a cell.
    #[inline]
    fn words_per_cell(&self) -> usize {
        match self.word_bits() {
            WIDE_WORD_BITS => 2,
            _ => 3,
        }
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

    /// Group-table slots `2 c` and `2 c + 1`, the first in the low half.
    #[inline]
    pub(crate) fn group_pair(&self, c: usize) -> u64 {
        debug_assert!(2 * c < self.group_slots());
        self.cells[self.groups_at as usize + c].load(Ordering::Acquire)
    }

    /// Entry `i`'s word.
    #[inline]
    pub(crate) fn word(&self, i: usize) -> u32 {
        debug_assert!(i < self.entries());
        let per = self.words_per_cell();
        let cell = self.cells[self.words_at as usize + i / per].load(Ordering::Acquire);
        let width = self.word_bits();
        ((cell >> (width * (i % per) as u32)) & low_bits(width)) as u32
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
        let cell = self.cells[self.marks_at as usize + i / MARKS_PER_CELL].load(Ordering::Relaxed);
        ((cell >> (MARK_BITS * (i % MARKS_PER_CELL) as u32)) & low_bits(MARK_BITS)) as u8
    }

    /// Stores `word` as entry `i`'s. Writer only.
    pub(crate) fn store_word(&self, i: usize, word: u32) {
        debug_assert!(i < self.entries());
        self.store_element(self.words_at, self.word_bits(), i, word);
    }

    /// Stores `high` into group-table slot `s`. Writer only.
    pub(crate) fn store_group(&self, s: usize, high: u32) {
        debug_assert!(s < self.group_slots());
        self.store_half(self.groups_at, s, high);
    }

    /// Stores `pair` into group-table slots `2 c` (low half) and `2 c + 1`
    /// at once. Writer only.
    pub(crate) fn store_group_pair(&self, c: usize, pair: u64) {
        debug_assert!(2 * c < self.group_slots());
        self.cells[self.groups_at as usize + c].store(pair, Ordering::Release);
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
        let (per, width) = (self.words_per_cell(), self.word_bits());
        let mut words = Vec::with_capacity(self.entries() + per);
        for cell in self.cells_of(self.words_at, self.entries().div_ceil(per)) {
            let cell = cell.load(Ordering::Acquire);
            let word = |k: usize| ((cell >> (width * k as u32)) & low_bits(width)) as u32;
            words.extend((0..per).map(word));
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
        let mut marks = Vec::with_capacity(self.entries() + MARKS_PER_CELL);
        for cell in self.cells_of(self.marks_at, self.entries().div_ceil(MARKS_PER_CELL)) {
            let cell = cell.load(Ordering::Relaxed);
            let mark = |i: u32| ((cell >> (MARK_BITS * i)) & low_bits(MARK_BITS)) as u8;
            marks.extend((0..MARKS_PER_CELL as u32).map(mark));
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
            self.marks_at as usize + i / MARKS_PER_CELL,
            self.words_at as usize + i / self.words_per_cell(),
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
    /// keeping the cell's other half.
    fn store_half(&self, at: u32, i: usize, value: u32) {
        self.store_element(at, 32, i, value);
    }

    /// Stores `value` as element `i` of the `width`-bit elements starting
    /// at cell `at`, keeping the cell's other elements. Writer only: no
    /// other store can fall between the load and the store.
    fn store_element(&self, at: u32, width: u32, i: usize, value: u32) {
        debug_assert!(u64::from(value) <= low_bits(width));
        let per = per_cell(width);
        let cell = &self.cells[at as usize + i / per];
        let shift = width * (i % per) as u32;
        let kept = cell.load(Ordering::Relaxed) & !(low_bits(width) << shift);
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
        let shapes = [(0, 0, 1), (1, 1, 2), (17, 3, 3), (1000, 33, 65)];
        for ((entries, windows, slots), word_bits) in shapes
            .into_iter()
            .flat_map(|shape| [WIDE_WORD_BITS, NARROW_WORD_BITS].map(|bits| (shape, bits)))
        {
            let floors: Vec<u64> = (0..windows as u64).map(|w| w * 1_000_003 + 7).collect();
            let places: Vec<u32> = (0..windows as u32).map(|w| (w << 8) | (w % 5)).collect();
            let groups: Vec<u32> = (0..slots as u32).map(|s| s * 3 + 1).collect();
            let word_mask = low_bits(word_bits) as u32;
            let words: Vec<u32> = (0..entries as u32)
                .map(|i| i.wrapping_mul(0x9E37_79B9) & word_mask)
                .collect();
            let hints: Vec<u8> = (0..entries).map(|i| (i * 7) as u8).collect();
            let marks: Vec<u8> = (0..entries).map(|i| (i * 5 % 4) as u8).collect();
            let parts = Parts {
                floors: &floors,
                places: &places,
                groups: &groups,
                words: &words,
                word_bits,
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
                arrays.store_word(last, 0xDEAD_BEEF & word_mask);
                arrays.store_group(slots - 1, 0xFEED);
                let mut want = words.clone();
                want[last] = 0xDEAD_BEEF & word_mask;
                assert_eq!(arrays.words(), want);
                assert_eq!(arrays.group(slots - 1), 0xFEED);
                assert_eq!(arrays.groups()[..slots - 1], groups[..slots - 1]);
                assert_eq!(arrays.hints(), hints);
            }
            if slots >= 2 {
                arrays.store_group_pair(0, (0xB0B << 32) | 0xA1A);
                assert_eq!((arrays.group(0), arrays.group(1)), (0xA1A, 0xB0B));
                assert_eq!(arrays.group_pair(0), (0xB0B << 32) | 0xA1A);
            }
        }
    }

    /// Entries of a block of `n`: words of `word_bits`, hints and marks
    /// that differ from entry to entry and use every bit of their width.
    fn entries_of(n: usize, word_bits: u32) -> (Vec<u32>, Vec<u8>, Vec<u8>) {
        let words = (0..n as u32)
            .map(|i| {
                (i.wrapping_mul(0x9E37_79B9) | 1 << (word_bits - 1)) & low_bits(word_bits) as u32
            })
            .collect();
        let hints = (0..n).map(|i| (i * 37 + 200) as u8).collect();
        let marks = (0..n).map(|i| (i * 7 + 9) as u8 & 3).collect();
        (words, hints, marks)
    }

    /// An insert, a removal or a word's change copied cell by cell gives
    /// the block that building from the changed arrays gives, at every
    /// position of sizes on and around every cell boundary.
    #[test]
    fn edited_copies_match_blocks_built_from_the_changed_arrays() {
        let frame_floors = [5u64, 9, 70];
        let frame_places = [1u32, 2, 3];
        let frame_groups = [11u32, 12, 0];
        let frame = Frame {
            floors: &frame_floors,
            places: &frame_places,
            groups: &frame_groups,
        };
        let sizes = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 100,
        ];
        for (n, word_bits) in sizes
            .into_iter()
            .flat_map(|n| [WIDE_WORD_BITS, NARROW_WORD_BITS].map(|bits| (n, bits)))
        {
            let (words, hints, marks) = entries_of(n, word_bits);
            let all_ones = low_bits(word_bits) as u32;
            let original = PackedArrays::new(Parts {
                floors: &[1],
                places: &[0],
                groups: &[4, 0],
                words: &words,
                word_bits,
                hints: &hints,
                marks: &marks,
            });
            let check = |copy: PackedArrays, (w, h, m): (Vec<u32>, Vec<u8>, Vec<u8>)| {
                assert_eq!((copy.entries(), copy.windows()), (w.len(), 3));
                assert_eq!(
                    (0..3).map(|i| copy.floor(i)).collect::<Vec<_>>(),
                    frame_floors
                );
                assert_eq!(copy.places(), frame_places);
                assert_eq!(copy.groups(), frame_groups);
                assert_eq!(
                    (copy.words(), copy.hints(), copy.marks()),
                    (w.clone(), h.clone(), m.clone())
                );
                let built = PackedArrays::new(Parts {
                    floors: &frame_floors,
                    places: &frame_places,
                    groups: &frame_groups,
                    words: &w,
                    word_bits,
                    hints: &h,
                    marks: &m,
                });
                let cells = |a: &PackedArrays| {
                    a.cells
                        .iter()
                        .map(|c| c.load(Ordering::Relaxed))
                        .collect::<Vec<_>>()
                };
                assert_eq!(cells(&copy), cells(&built), "padding stays zero");
            };
            for pos in 0..=n {
                let edit = EntryEdit::Insert {
                    pos,
                    word: all_ones,
                    hint: 0xFF,
                    mark: 0x1F, // only the low bits are kept
                };
                let (mut w, mut h, mut m) = (words.clone(), hints.clone(), marks.clone());
                w.insert(pos, all_ones);
                h.insert(pos, 0xFF);
                m.insert(pos, 3);
                check(original.edited(frame, edit), (w, h, m));
            }
            for pos in 0..n {
                let (mut w, mut h, mut m) = (words.clone(), hints.clone(), marks.clone());
                w.remove(pos);
                h.remove(pos);
                m.remove(pos);
                check(original.edited(frame, EntryEdit::Remove(pos)), (w, h, m));
                let mut w = words.clone();
                w[pos] = 0x1234_5678 & all_ones;
                let edit = EntryEdit::Word(pos, 0x1234_5678 & all_ones);
                check(
                    original.edited(frame, edit),
                    (w, hints.clone(), marks.clone()),
                );
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
            word_bits: WIDE_WORD_BITS,
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
