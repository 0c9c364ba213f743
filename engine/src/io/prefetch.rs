//! Cache prefetch hints for reads of mapped records.
//!
//! A scan knows the locations of the next records before it reads them; a
//! hint per record lets the CPU fetch them in parallel instead of taking one
//! dependent cache miss after another. A hint never faults (the CPU drops it
//! if the page is not mapped or not resident) and changes no state, so it is
//! safe on any address; this module hints addresses inside a slice it was
//! given, or (for the index's batched lookups) the address of a node or slot
//! about to be read.

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

/// Hints the CPU to load the cache line holding the start of `value`.
#[inline]
pub(crate) fn prefetch_value<T>(value: &T) {
    prefetch_address(std::ptr::from_ref(value).cast::<u8>());
}

#[inline]
fn prefetch_line(byte: &u8) {
    prefetch_address(byte);
}

/// Hints the CPU to load the cache line holding `address`, which need not
/// be dereferenceable (a node the caller will read once the hint has had
/// time to land).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn prefetch_address(address: *const u8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: a prefetch is a hint with no architectural effect: it cannot
    // fault or change memory, whatever the address (an unmapped or invalid
    // one is dropped by the CPU), so no requirement on `address` applies.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) }
}

/// No hint on other architectures.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn prefetch_address(_address: *const u8) {}
