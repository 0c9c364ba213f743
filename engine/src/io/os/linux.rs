//! What only Linux has: `sync_file_range`, transparent huge pages,
//! and `malloc_trim` (glibc); its control-group memory limits are read
//! in [`super::cgroup`].

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use memmap2::{Advice, Mmap, MmapMut};

/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`: starts the writeback of the
/// range without waiting and without promising durability.
pub(super) fn start_writeback(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let offset =
        libc::off64_t::try_from(offset).map_err(|_| io::Error::other("offset too large"))?;
    let len = libc::off64_t::try_from(len).map_err(|_| io::Error::other("length too large"))?;
    // SAFETY: `sync_file_range` only reads the descriptor, which `file`
    // keeps open for the duration of the call; it touches no memory of ours.
    let rc = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// `MADV_NORMAL` (undoing a random-access advice) then `MADV_HUGEPAGE`: a
/// fault then reads a whole aligned 2 MiB of the file into one folio.
/// Advisory: a kernel without transparent huge pages refuses it.
pub(super) fn advise_huge_pages(map: &Mmap) {
    let _ = map.advise(Advice::Normal);
    let _ = map.advise(Advice::HugePage);
}

/// `MADV_NOHUGEPAGE`: undoes a huge-page advice. Advisory.
pub(super) fn advise_no_huge_pages(map: &Mmap) {
    let _ = map.advise(Advice::NoHugePage);
}

/// `MADV_HUGEPAGE` on a range of an anonymous map. Advisory.
pub(super) fn advise_huge_pages_range(map: &MmapMut, offset: usize, len: usize) {
    let _ = map.advise_range(Advice::HugePage, offset, len);
}

/// `MADV_NOHUGEPAGE` on a range of an anonymous map. Advisory.
pub(super) fn advise_no_huge_pages_range(map: &MmapMut, offset: usize, len: usize) {
    let _ = map.advise_range(Advice::NoHugePage, offset, len);
}

/// glibc's `malloc_trim(0)`.
#[cfg(target_env = "gnu")]
pub(super) fn malloc_trim() {
    // SAFETY: `malloc_trim` only releases memory the allocator holds free;
    // it takes the allocator's own locks and touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
