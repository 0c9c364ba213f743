//! What every Unix has: positional reads and writes, device and inode
//! numbers, `fsync` of a directory, `SEEK_HOLE`/`SEEK_DATA`, `madvise`
//! and anonymous `mmap`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::ptr::NonNull;

use memmap2::{Advice, Mmap, MmapMut, UncheckedAdvice};

use crate::io::FileId;

/// No space left on the device.
pub(crate) const DISK_FULL: i32 = libc::ENOSPC;
/// An I/O error of the device.
pub(crate) const IO_ERROR: i32 = libc::EIO;
/// A link across file systems.
pub(crate) const CROSS_DEVICE: i32 = libc::EXDEV;

/// Nothing needs to live beside a map on Unix.
#[derive(Debug)]
pub(crate) struct MapClaim;

/// Nothing to do: a Unix map may reach past the end of its file.
pub(super) fn claim_map(_file: &File, len: u64) -> io::Result<(MapClaim, u64)> {
    Ok((MapClaim, len))
}

pub(super) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

pub(super) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(buf, offset)
}

pub(super) fn sync_dir(path: &Path) -> io::Result<()> {
    File::open(path)?.sync_all()
}

pub(super) fn file_id(file: &File) -> io::Result<FileId> {
    Ok(id_of(&file.metadata()?))
}

pub(super) fn path_id(_path: &Path, meta: &std::fs::Metadata) -> io::Result<FileId> {
    Ok(id_of(meta))
}

fn id_of(meta: &std::fs::Metadata) -> FileId {
    FileId {
        device: meta.dev(),
        inode: meta.ino(),
    }
}

pub(super) fn remove_file(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)
}

pub(super) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::rename(from, to)
}

pub(super) fn hard_link(original: &Path, link: &Path) -> io::Result<()> {
    std::fs::hard_link(original, link)
}

pub(super) fn set_len(file: &File, len: u64) -> io::Result<()> {
    file.set_len(len)
}

/// Offset of the first hole at or after `from`, or the file's length if
/// none (every file ends in an implicit hole at its end).
pub(super) fn hole_at_or_after(file: &File, from: u64) -> io::Result<u64> {
    match seek(file, from, libc::SEEK_HOLE) {
        Ok(Some(at)) => Ok(at),
        Ok(None) => Ok(file.metadata()?.len().max(from)),
        // A file system that cannot tell: every byte counts as data.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => file.metadata().map(|m| m.len()),
        Err(e) => Err(e),
    }
}

/// Offset of the first allocated byte at or after `from`; `None` if only
/// holes follow.
pub(super) fn data_at_or_after(file: &File, from: u64) -> io::Result<Option<u64>> {
    match seek(file, from, libc::SEEK_DATA) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            Ok(Some(from).filter(|&f| f < file.metadata().map_or(0, |m| m.len())))
        }
        other => other,
    }
}

/// `lseek(fd, from, whence)`; `None` for ENXIO (no such region).
fn seek(file: &File, from: u64, whence: libc::c_int) -> io::Result<Option<u64>> {
    let from = libc::off_t::try_from(from).map_err(|_| io::Error::other("offset too large"))?;
    // SAFETY: `lseek` only reads the descriptor, which `file` keeps open for
    // the duration of the call; it touches no memory of ours. The position
    // it moves is never used: every read and write is positional.
    let at = unsafe { libc::lseek(file.as_raw_fd(), from, whence) };
    if at >= 0 {
        return Ok(Some(at as u64));
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ENXIO) => Ok(None),
        _ => Err(err),
    }
}

/// `MADV_NORMAL`: undoes a random-access advice. Advisory.
#[cfg_attr(
    target_os = "linux",
    expect(dead_code, reason = "Linux advises huge pages instead")
)]
pub(super) fn advise_normal(map: &Mmap) {
    let _ = map.advise(Advice::Normal);
}

/// `MADV_RANDOM`. Advisory.
pub(super) fn advise_random(map: &Mmap) {
    let _ = map.advise(Advice::Random);
}

/// `MADV_WILLNEED` on a range inside the map. Advisory.
pub(super) fn will_need(map: &Mmap, offset: usize, len: usize) {
    let _ = map.advise_range(Advice::WillNeed, offset, len);
}

/// `MADV_DONTNEED`: the pages read as zeros when next touched.
///
/// # Safety
///
/// No one reads the range until it has been written again.
pub(super) unsafe fn release_pages(map: &MmapMut, offset: usize, len: usize) {
    // SAFETY: the caller guarantees nothing reads the range before writing
    // it, so that its bytes turning to zeros is seen by no one.
    let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, offset, len) };
}

/// A private anonymous map of `len` bytes.
pub(super) fn map_anon(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: a new anonymous private map at an address of the kernel's
    // choosing touches no existing memory.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(addr.cast::<u8>())
}

/// Unmaps a map [`map_anon`] made.
///
/// # Safety
///
/// `ptr` and `len` are those of a map [`map_anon`] returned, unused now.
pub(super) unsafe fn unmap_anon(ptr: NonNull<u8>, len: usize) {
    // SAFETY: per the caller, `ptr..ptr + len` is exactly one map of ours
    // that nothing uses; unmapping it frees exactly its pages.
    unsafe {
        libc::munmap(ptr.as_ptr().cast(), len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_data_and_holes_of_a_sparse_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.path().join("f"))
            .unwrap();
        file.write_all_at(b"head", 0).unwrap();
        file.set_len(1 << 20).unwrap();
        let hole = hole_at_or_after(&file, 0).unwrap();
        assert!((4..=1 << 20).contains(&hole), "hole at {hole}");
        // Some file systems report no holes at all: then data runs to the end.
        match data_at_or_after(&file, hole).unwrap() {
            None => {}
            Some(at) => assert_eq!(hole, 1 << 20, "data at {at} inside a hole"),
        }
        file.write_all_at(b"tail", 900_000).unwrap();
        let data = data_at_or_after(&file, hole.min(800_000)).unwrap();
        assert!(data.is_some_and(|d| d <= 900_000));
    }
}
