//! An allocator for compaction's big, short-lived buffers (its sorted
//! keys, its decisions, its output) that maps each large block on its own
//! and unmaps it when it is freed, so its memory goes back to the system
//! at once (`mmap` on Unix, `VirtualAlloc` on Windows: see
//! `io::os::map_anon`).
//!
//! Through the process's allocator (glibc's malloc) a block above the mmap
//! threshold is mapped on its own too, but freeing one raises the
//! threshold to its size (up to 32 MiB). From a compaction's first pass
//! on, its buffers of one to tens of MiB then came from the compaction
//! thread's malloc arena, whose freed memory stays resident: a 1M-key
//! store filled through `alexdb` held 35 to 60 MB more than with the
//! threshold fixed (measured with `MALLOC_MMAP_THRESHOLD_`), about as much
//! as its whole index. Small blocks go to the global allocator.

use std::alloc::Layout;
use std::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator, Global};

/// Blocks of at least this many bytes are mapped on their own: glibc's
/// own mmap threshold before anything raised it, so that no block of
/// these buffers is one whose freeing raises it.
const MAP_FROM_BYTES: usize = 128 << 10;

/// The most alignment a mapped block has (a page's).
const PAGE_BYTES: usize = 4096;

/// The allocator (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Transient;

/// A vector whose large buffers are mapped on their own.
pub type TransientVec<T> = allocator_api2::vec::Vec<T, Transient>;

/// An empty [`TransientVec`].
pub fn transient_vec<T>() -> TransientVec<T> {
    TransientVec::new_in(Transient)
}

/// Whether a block of `layout` is mapped on its own. Under the fuzzer
/// every block goes to the global allocator, where AddressSanitizer
/// checks it.
fn is_mapped(layout: Layout) -> bool {
    !cfg!(fuzzing) && layout.size() >= MAP_FROM_BYTES && layout.align() <= PAGE_BYTES
}

// SAFETY: a mapped block is `layout.size()` bytes of a fresh private
// anonymous map (page-aligned, so aligned for any `layout.align()` up to a
// page), readable and writable, overlapping no other block, and valid until
// `deallocate` unmaps it; `is_mapped` decides from the layout alone, and
// callers pass the block's layout (the same size: blocks are returned at
// exactly the size asked for) to `deallocate`, so a block goes back to the
// allocator it came from. Other blocks are the global allocator's in both
// directions.
unsafe impl Allocator for Transient {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if !is_mapped(layout) {
            return Global.allocate(layout);
        }
        let ptr = super::os::map_anon(layout.size()).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if !is_mapped(layout) {
            // SAFETY: per the trait's contract `ptr` came from `allocate`
            // with this layout, which sent it to `Global` too.
            return unsafe { Global.deallocate(ptr, layout) };
        }
        // SAFETY: `ptr` is a block `allocate` mapped with this size, which
        // nothing uses any more (the trait's contract).
        unsafe { super::os::unmap_anon(ptr, layout.size()) }
    }
}

/// Asks the process's allocator to give its free memory back to the
/// system (glibc: `malloc_trim`; elsewhere nothing). After an open that
/// read every record (no usable index checkpoint), the main malloc arena
/// held 18 MB free at 1M keys, 19 bytes a key beside an index of 6; this
/// gives it back. It frees only memory no one holds, at the cost of a walk
/// of the allocator's free lists.
pub(crate) fn return_free_malloc_memory() {
    super::os::return_free_malloc_memory();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors small and large hold what they were given through growing,
    /// shrinking and freeing, and a large one's memory is a map of its own.
    #[test]
    fn vectors_of_every_size_hold_their_items() {
        for n in [0usize, 10, 100_000, 1_000_000] {
            let mut v: TransientVec<u64> = transient_vec();
            v.extend((0..n as u64).map(|i| i * 3));
            assert_eq!(v.len(), n);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
            v.truncate(n / 2);
            v.shrink_to_fit();
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
        }
        let big: TransientVec<u8> = {
            let mut v = TransientVec::with_capacity_in(MAP_FROM_BYTES, Transient);
            v.resize(MAP_FROM_BYTES, 7u8);
            v
        };
        assert_eq!(big.as_ptr() as usize % PAGE_BYTES, 0, "a map of its own");
        assert!(big.iter().all(|&b| b == 7));
    }
}
