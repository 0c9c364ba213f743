//! What a platform without a feature does instead: nothing, or "unknown".

use std::fs::File;
use std::io;

use memmap2::MmapMut;

/// No writeback hint: the next sync writes the bytes.
pub(super) fn start_writeback(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Ok(())
}

/// No huge pages.
pub(super) fn advise_huge_pages_range(_map: &MmapMut, _offset: usize, _len: usize) {}

/// No huge-page advice to undo.
pub(super) fn advise_no_huge_pages_range(_map: &MmapMut, _offset: usize, _len: usize) {}

/// The memory this process may fill is unknown.
#[cfg(not(any(target_os = "macos", windows)))]
pub(super) fn process_memory() -> Option<u64> {
    None
}
