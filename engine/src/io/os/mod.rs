//! Every call the engine makes to the operating system, one backend per
//! platform: [`unix`] (Linux, macOS and the BSDs), [`linux`] and [`macos`]
//! for what only they have, [`windows`], and [`portable`] for what a
//! platform lacks. The rest of the engine is platform-free: it reaches the
//! system only through the functions here, each of which says what it
//! does where.
//!
//! | what | Linux | macOS | other Unix | Windows |
//! |---|---|---|---|---|
//! | durable data ([`sync_data`]) | `fdatasync` | `F_FULLFSYNC` | `fdatasync` | `FlushFileBuffers` |
//! | durable directory ([`sync_dir`]) | `fsync` | `fsync` | `fsync` | nothing to call (see [`sync_dir`]) |
//! | writeback hint ([`start_writeback`]) | `sync_file_range` | none | none | none |
//! | holes ([`hole_at_or_after`]) | `SEEK_HOLE` | `SEEK_HOLE` | `SEEK_HOLE` | none reported |
//! | map advice ([`advise_huge_pages`]) | huge pages, random, will-need | random, will-need | random, will-need | none |
//! | memory ([`process_memory`]) | cgroup limits, `MemTotal` | `hw.memsize` | unknown | `GlobalMemoryStatusEx` |
//! | allocator trim ([`return_free_malloc_memory`]) | `malloc_trim` (glibc) | none | none | none |
//! | removing a mapped file ([`remove_file`]) | at once | at once | at once | when its last map in the process drops |
//! | checkpoint of a segment ([`hard_link`]) | hard link | hard link | hard link | copy |
//! | replacing a file held open ([`rename`]) | at once | at once | at once | retried for up to a second where the volume lacks POSIX renames |

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(not(target_os = "linux"))]
mod portable;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(not(any(unix, windows)))]
compile_error!("AlexDB reads its files through memory maps: it builds for Unix and Windows only");

use std::fs::File;
use std::io;
use std::path::Path;
use std::ptr::NonNull;

use memmap2::{Mmap, MmapMut};

use super::FileId;

#[cfg(unix)]
use unix as sys;
#[cfg(windows)]
use windows as sys;

pub(crate) use sys::MapClaim;

/// The platform's codes of the errors the fault-injecting backends
/// ([`super::faulty`], [`super::power_loss`]) make up.
pub(crate) mod error_code {
    pub(crate) use super::sys::{CROSS_DEVICE, DISK_FULL, IO_ERROR};
}

/// Reads exactly `buf.len()` bytes of `file` at `offset`.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    sys::read_exact_at(file, buf, offset)
}

/// Writes all of `buf` to `file` at `offset`.
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    sys::write_all_at(file, buf, offset)
}

/// Flushes `file`'s data to stable storage, so that it survives a power
/// loss: `fdatasync` on Linux and other Unix; `fcntl(F_FULLFSYNC)` on
/// macOS, as RocksDB does, because there `fsync` only hands the data to the
/// drive, whose cache may lose it (falling back to `fsync` on a file system
/// that refuses `F_FULLFSYNC`); `FlushFileBuffers` on Windows.
pub(crate) fn sync_data(file: &File) -> io::Result<()> {
    #[cfg(target_os = "macos")]
    return macos::full_fsync(file);
    #[cfg(not(target_os = "macos"))]
    file.sync_data()
}

/// Flushes a directory's entries (creations, renames, removals) to stable
/// storage: `fsync` of the directory on Unix. Windows has no such call (a
/// directory cannot be opened for it without backup privileges, and NTFS
/// journals its directory changes itself), so there it does nothing, as in
/// RocksDB.
pub(crate) fn sync_dir(path: &Path) -> io::Result<()> {
    sys::sync_dir(path)
}

/// The identity of the open `file`.
pub(crate) fn file_id(file: &File) -> io::Result<FileId> {
    sys::file_id(file)
}

/// The identity of the file or directory at `path`, whose metadata is
/// `meta`.
pub(crate) fn path_id(path: &Path, meta: &std::fs::Metadata) -> io::Result<FileId> {
    sys::path_id(path, meta)
}

/// Removes the file at `path`. On Windows a file mapped by this process is
/// removed when its last map drops (Windows refuses to remove a mapped
/// file); elsewhere at once.
pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    sys::remove_file(path)
}

/// Renames `from` to `to`, replacing `to`. On Windows a target another
/// handle holds open cannot always be replaced at once: the rename is
/// tried again for up to a second.
pub(crate) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    sys::rename(from, to)
}

/// Makes `link` a second name of `original`. Refused on Windows, where a
/// name of a file the database maps could not be removed until the
/// database lets go of the file (a checkpoint then copies its segments).
pub(crate) fn hard_link(original: &Path, link: &Path) -> io::Result<()> {
    sys::hard_link(original, link)
}

/// Sets `file`'s length to `len`. On Windows a file mapped by this process
/// is never cut below the end of its maps (Windows refuses it): the bytes
/// past `len` stay, as zeros, which readers of the file treat as they treat
/// the unwritten tail of a file grown ahead.
pub(crate) fn set_len(file: &File, len: u64) -> io::Result<()> {
    sys::set_len(file, len)
}

/// Gets `file` ready to be mapped for its first `len` bytes: what must live
/// as long as the map, and the length to map. On Windows the file is grown
/// to `len` first (a map cannot reach past the end of the file there; a
/// file opened read-only cannot grow, and is mapped as long as it is) and
/// the map is counted (see [`remove_file`]); elsewhere nothing changes.
pub(crate) fn claim_map(file: &File, len: u64) -> io::Result<(MapClaim, u64)> {
    sys::claim_map(file, len)
}

/// Asks the kernel to start writing `len` bytes of `file` at `offset` back,
/// without waiting (`sync_file_range` on Linux; nothing elsewhere).
pub(crate) fn start_writeback(file: &File, offset: u64, len: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    return linux::start_writeback(file, offset, len);
    #[cfg(not(target_os = "linux"))]
    portable::start_writeback(file, offset, len)
}

/// Offset of the first hole of `file` at or after `from`, or its length if
/// there is none (Windows reports none).
pub(crate) fn hole_at_or_after(file: &File, from: u64) -> io::Result<u64> {
    sys::hole_at_or_after(file, from)
}

/// Offset of the first allocated byte of `file` at or after `from`; `None`
/// if only holes follow (Windows reports every byte as allocated).
pub(crate) fn data_at_or_after(file: &File, from: u64) -> io::Result<Option<u64>> {
    sys::data_at_or_after(file, from)
}

/// Advises a file's map to be backed by huge pages (Linux: `MADV_NORMAL`
/// then `MADV_HUGEPAGE`); elsewhere only undoes a random-access advice.
pub(crate) fn advise_huge_pages(map: &Mmap) {
    #[cfg(target_os = "linux")]
    linux::advise_huge_pages(map);
    #[cfg(not(target_os = "linux"))]
    sys::advise_normal(map);
}

/// Advises a file's map to be read at random (`MADV_RANDOM`, after
/// `MADV_NOHUGEPAGE` on Linux); nothing on Windows.
pub(crate) fn advise_random(map: &Mmap) {
    #[cfg(target_os = "linux")]
    linux::advise_no_huge_pages(map);
    sys::advise_random(map);
}

/// Asks the kernel to start reading `len` bytes of a file's map at
/// `offset` in (`MADV_WILLNEED`); nothing on Windows. The range lies
/// inside the map.
pub(crate) fn will_need(map: &Mmap, offset: usize, len: usize) {
    sys::will_need(map, offset, len);
}

/// Advises `len` bytes of an anonymous map at `offset` to be backed by
/// huge pages when first touched (Linux only).
pub(crate) fn advise_huge_pages_range(map: &MmapMut, offset: usize, len: usize) {
    #[cfg(target_os = "linux")]
    linux::advise_huge_pages_range(map, offset, len);
    #[cfg(not(target_os = "linux"))]
    portable::advise_huge_pages_range(map, offset, len);
}

/// Advises `len` bytes of an anonymous map at `offset` to stay on small
/// pages: the system's background collapse (`khugepaged`) then does not
/// fill a range whose small pages were given back into a huge page again
/// (Linux only).
pub(crate) fn advise_no_huge_pages_range(map: &MmapMut, offset: usize, len: usize) {
    #[cfg(target_os = "linux")]
    linux::advise_no_huge_pages_range(map, offset, len);
    #[cfg(not(target_os = "linux"))]
    portable::advise_no_huge_pages_range(map, offset, len);
}

/// Gives the memory of `len` bytes of an anonymous map at `offset` (whole
/// pages) back to the system; they stay mapped, and hold unspecified bytes
/// when next touched (zeros on Unix, `MADV_DONTNEED`; their old contents on
/// Windows, which keeps them).
///
/// # Safety
///
/// No one may read the range until it has been written again.
pub(crate) unsafe fn release_pages(map: &MmapMut, offset: usize, len: usize) {
    // SAFETY: passed on from the caller.
    unsafe { sys::release_pages(map, offset, len) }
}

/// A new private, readable and writable anonymous map of `len` bytes
/// (a page-aligned, nonzero multiple of the page size), or `None` if the
/// system has no room.
pub(crate) fn map_anon(len: usize) -> Option<NonNull<u8>> {
    sys::map_anon(len)
}

/// Unmaps a map [`map_anon`] made.
///
/// # Safety
///
/// `ptr` and `len` are those of a map [`map_anon`] returned, which nothing
/// uses any more.
pub(crate) unsafe fn unmap_anon(ptr: NonNull<u8>, len: usize) {
    // SAFETY: passed on from the caller.
    unsafe { sys::unmap_anon(ptr, len) }
}

/// Asks the process's allocator to give its free memory back to the
/// system (glibc's `malloc_trim`; nothing elsewhere).
pub(crate) fn return_free_malloc_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    linux::malloc_trim();
}

/// The memory this process may fill, if known: on Linux the machine's
/// (`MemTotal`) or its control groups' limit if lower; on macOS the
/// machine's (`sysctl hw.memsize`); on Windows the machine's physical
/// memory (`GlobalMemoryStatusEx`); elsewhere unknown.
pub(crate) fn process_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    return cgroup::process_memory();
    #[cfg(target_os = "macos")]
    return macos::process_memory();
    #[cfg(windows)]
    return windows::process_memory();
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    portable::process_memory()
}
