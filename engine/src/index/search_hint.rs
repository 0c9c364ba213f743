//! Search hints: where in a data node's slot array the keys an inner node
//! routes to one of its slots will be searched for.
//!
//! An inner node keeps one hint per slot. For a slot linking a data node,
//! the hint holds the data node's array (address and length) and the line
//! its model gives the keys of that slot: its value at the slot's start
//! and how much it grows over the slot. A lookup routed to the slot knows
//! how far into the slot its key falls (the inner model's fraction), so it
//! knows the array position the data node's search will start from before
//! reading the data node, and hints the CPU to load that line while it
//! loads the data node's header: the two cache misses overlap instead of
//! following one another.
//!
//! A hint is only ever prefetched, never read through: the writer updates
//! its two words one after the other and a reader may see them torn, or
//! stale (the slot relinked, the array freed); either costs one useless
//! prefetch, never a wrong answer.

use std::sync::atomic::{AtomicU64, Ordering};

use super::data_node::{DataNode, Slot};

/// Bits of [`SearchHint::array`] that hold the address (user addresses fit
/// in 48 on x86-64 and AArch64); the rest hold the array's length.
const ADDRESS_BITS: u32 = 48;
const ADDRESS_MASK: u64 = (1 << ADDRESS_BITS) - 1;

/// One slot's hint (both words 0: none).
#[derive(Debug, Default)]
#[repr(C, align(16))]
pub(crate) struct SearchHint {
    /// The array's address, and its length in the top 16 bits.
    array: AtomicU64,
    /// The model line's position at the slot's start (`f32`, low half)
    /// and its growth over the slot (`f32`, high half).
    line: AtomicU64,
}

impl SearchHint {
    /// Hints `data`'s array, whose model puts the slot's keys from
    /// `start` to `end` (positions, which may lie past either end of the
    /// array: the search clamps them, and so does [`Self::target`]). Stores
    /// no hint when the array's address or length does not fit.
    pub(crate) fn set(&self, data: &DataNode, (start, end): (f64, f64)) {
        let (address, len) = (data.array_address() as u64, data.slots() as u64);
        let fits = address <= ADDRESS_MASK && len < 1 << (64 - ADDRESS_BITS) && len > 0;
        if !fits || !start.is_finite() || !end.is_finite() {
            return self.clear();
        }
        let line =
            u64::from((start as f32).to_bits()) | u64::from(((end - start) as f32).to_bits()) << 32;
        self.array
            .store(address | len << ADDRESS_BITS, Ordering::Relaxed);
        self.line.store(line, Ordering::Relaxed);
    }

    /// A copy of this hint, for a slot that routes the keys of its
    /// `part`-th `parts`-th (a slot of a node with `parts` times the
    /// slots and the same line, as a doubled inner node's).
    pub(crate) fn part(&self, part: usize, parts: usize) -> SearchHint {
        let line = self.line.load(Ordering::Relaxed);
        let start = f32::from_bits(line as u32);
        let growth = f32::from_bits((line >> 32) as u32) / parts as f32;
        let start = start + part as f32 * growth;
        let line = u64::from(start.to_bits()) | u64::from(growth.to_bits()) << 32;
        SearchHint {
            array: AtomicU64::new(self.array.load(Ordering::Relaxed)),
            line: AtomicU64::new(line),
        }
    }

    /// Moves the hint to `data`'s array, a copy of the array it hints with
    /// the same length under the same model (a node copied to take an
    /// insert): the line still holds, only the address changes. A cleared
    /// hint stays cleared; one whose length no longer matches is cleared.
    pub(crate) fn move_to(&self, data: &DataNode) {
        let array = self.array.load(Ordering::Relaxed);
        if array == 0 {
            return;
        }
        let address = data.array_address() as u64;
        if address > ADDRESS_MASK || array >> ADDRESS_BITS != data.slots() as u64 {
            return self.clear();
        }
        self.array
            .store(address | array & !ADDRESS_MASK, Ordering::Relaxed);
    }

    /// Removes the hint (the slot links an inner node).
    pub(crate) fn clear(&self) {
        self.array.store(0, Ordering::Relaxed);
        self.line.store(0, Ordering::Relaxed);
    }

    /// The address of the slot a key `within` the way through the slot
    /// (0 to 1) will be searched from, as the data node's search computes
    /// it (truncated, clamped to the array); `None` without a hint.
    #[inline]
    pub(crate) fn target(&self, within: f64) -> Option<usize> {
        let array = self.array.load(Ordering::Relaxed);
        if array == 0 {
            return None;
        }
        let line = self.line.load(Ordering::Relaxed);
        let start = f64::from(f32::from_bits(line as u32));
        let growth = f64::from(f32::from_bits((line >> 32) as u32));
        let last = (array >> ADDRESS_BITS) as i64 - 1;
        let position = ((start + within * growth) as i64).clamp(0, last) as usize;
        Some((array & ADDRESS_MASK) as usize + position * size_of::<Slot>())
    }
}

/// Slot `i` of `width` slots linking a data node of `len` slots, when the
/// models cannot tell: an equal share of its positions.
pub(crate) fn equal_share(len: usize, i: usize, width: usize) -> (f64, f64) {
    let per = len as f64 / width as f64;
    (i as f64 * per, (i + 1) as f64 * per)
}
