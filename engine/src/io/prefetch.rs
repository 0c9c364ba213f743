//! Cache prefetch hints for reads of mapped records.
//!
//! A scan knows the locations of the next records before it reads them; a
//! hint per record lets the CPU fetch them in parallel instead of taking one
//! dependent cache miss after another. A hint never faults (the CPU drops it
//! if the page is not mapped or not resident) and changes no state, so it is
//! safe on any address; this module only ever hints addresses inside a
//! slice it was given.

/// Bytes of a record hinted: its header and key, and most of a small value.
const HINTED_BYTES: usize = 192;
/// Cache line size assumed for the hints.
const LINE: usize = 64;

/// Hints the CPU to load the cache lines of `bytes[offset..offset + 192]`
/// (as much of it as lies inside `bytes`) into its caches.
#[inline]
pub(crate) fn prefetch_range(bytes: &[u8], offset: usize) {
    let end = offset.saturating_add(HINTED_BYTES).min(bytes.len());
    let misalignment = (bytes.as_ptr() as usize).wrapping_add(offset) % LINE;
    let mut at = offset - misalignment.min(offset);
    while at < end {
        prefetch_line(&bytes[at]);
        at += LINE;
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn prefetch_line(byte: &u8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: a prefetch is a hint with no architectural effect: it cannot
    // fault or change memory, and the pointer comes from a live reference.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(byte).cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn prefetch_line(_byte: &u8) {}
