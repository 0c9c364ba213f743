//! Windows: positional reads and writes through `seek_read`/`seek_write`,
//! file identities from `GetFileInformationByHandle`, anonymous memory from
//! `VirtualAlloc`, and the rules of mapped files.
//!
//! Windows refuses to remove a file, or to cut it shorter, while a view of
//! it is mapped (`ERROR_ACCESS_DENIED`, `ERROR_USER_MAPPED_FILE`), and a
//! view cannot reach past the end of its file. So here:
//! - a file is grown to the length of a map before the map is made
//!   ([`claim_map`]), and every map of a file is counted by the file's
//!   identity while it lives (the [`MapClaim`] it holds);
//! - [`remove_file`] of a file this process maps only records the path, and
//!   the file is removed when its last map drops (the engine unmaps a
//!   replaced segment before removing it, so this waits only for other
//!   maps of it: a read-only handle on the same directory, a backup's hold);
//! - [`set_len`] below the end of a map leaves the file at its length: the
//!   bytes past the new end stay, as zeros, like the unwritten tail of a
//!   segment grown ahead; a file is made sparse before it grows, so that
//!   tail takes no disk space.
//!
//! Files are opened by `std` with every share mode (read, write, delete),
//! so an open, unmapped file can be removed, and renamed over where the
//! volume has POSIX rename semantics (elsewhere [`rename`] waits for the
//! other handle to close):
//! `MANIFEST` and `INDEX` are replaced by a rename while no map of the old
//! file exists (the index checkpoint is mapped only while it is loaded).
//! A file removed while it is open stays listed until its last handle
//! closes; segment names are never reused, and an open removes leftovers.
//! A checkpoint copies segments instead of linking them ([`hard_link`]):
//! the link of a mapped segment could not be removed while it is mapped.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use memmap2::{Mmap, MmapMut};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_DISK_FULL, ERROR_IO_DEVICE, ERROR_NOT_SAME_DEVICE,
    ERROR_SHARING_VIOLATION, ERROR_USER_MAPPED_FILE,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, GetFileInformationByHandle,
};
use windows_sys::Win32::System::IO::DeviceIoControl;
use windows_sys::Win32::System::Ioctl::FSCTL_SET_SPARSE;
use windows_sys::Win32::System::Memory::{
    MEM_COMMIT, MEM_RELEASE, MEM_RESERVE, PAGE_READWRITE, VirtualAlloc, VirtualFree,
};
use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};

use crate::io::FileId;

/// No space left on the device.
pub(crate) const DISK_FULL: i32 = ERROR_DISK_FULL as i32;
/// An I/O error of the device.
pub(crate) const IO_ERROR: i32 = ERROR_IO_DEVICE as i32;
/// A link across file systems.
pub(crate) const CROSS_DEVICE: i32 = ERROR_NOT_SAME_DEVICE as i32;

/// A file this process maps.
#[derive(Debug, Default)]
struct Mapped {
    /// Its maps alive now.
    maps: usize,
    /// Where to remove it from when the last map drops, if a removal was
    /// asked for meanwhile.
    remove: Option<PathBuf>,
}

/// The files this process maps, by identity.
static MAPPED: Mutex<Option<HashMap<FileId, Mapped>>> = Mutex::new(None);

fn mapped() -> MutexGuard<'static, Option<HashMap<FileId, Mapped>>> {
    // A panic while the table was locked leaves a valid table behind.
    MAPPED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One map of a file, counted while it lives; the file's removal, if it
/// was asked for, happens when the last one drops.
#[derive(Debug)]
pub(crate) struct MapClaim {
    id: FileId,
}

impl Drop for MapClaim {
    fn drop(&mut self) {
        let mut table = mapped();
        let files = table.get_or_insert_with(HashMap::new);
        let Some(file) = files.get_mut(&self.id) else {
            return;
        };
        file.maps -= 1;
        if file.maps == 0
            && let Some(path) = files.remove(&self.id).and_then(|f| f.remove)
        {
            // A failure (another process maps it) leaves the file to the
            // next open, which removes what no segment list names.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Grows `file` to `len` bytes if it is shorter (a map cannot reach past
/// the end of the file), and counts the map. A file opened read-only
/// cannot grow: it is mapped as long as it is. The length to map.
pub(super) fn claim_map(file: &File, len: u64) -> io::Result<(MapClaim, u64)> {
    let file_len = file.metadata()?.len();
    let len = match file_len < len && set_len(file, len).is_err() {
        true => file_len,
        false => len,
    };
    let id = file_id(file)?;
    let mut table = mapped();
    table
        .get_or_insert_with(HashMap::new)
        .entry(id)
        .or_default()
        .maps += 1;
    Ok((MapClaim { id }, len))
}

pub(super) fn remove_file(path: &Path) -> io::Result<()> {
    let id = open_for_id(path).and_then(|f| file_id(&f));
    let mut table = mapped();
    let files = table.get_or_insert_with(HashMap::new);
    if let Some(file) = id.ok().and_then(|id| files.get_mut(&id)) {
        file.remove = Some(path.to_path_buf());
        return Ok(());
    }
    std::fs::remove_file(path)
}

/// Renames `from` to `to`, replacing `to`. Without POSIX rename semantics
/// (Windows before 10 1607, FAT volumes, Wine) a target that another
/// handle holds open, as a reader of `MANIFEST` does for a moment, cannot
/// be replaced: the rename is tried again for up to about a second.
pub(super) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let mut waited = Duration::ZERO;
    loop {
        match std::fs::rename(from, to) {
            Err(e) if is_held_open(&e) && waited < RENAME_PATIENCE => {
                std::thread::sleep(RENAME_PAUSE);
                waited += RENAME_PAUSE;
            }
            other => return other,
        }
    }
}

/// Refused: the new name of a file the database maps could not be removed
/// (by the user deleting a checkpoint, say) while the database maps it.
pub(super) fn hard_link(_original: &Path, _link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no hard links to segment files on Windows: the file is copied",
    ))
}

/// How long [`rename`] waits, at most, for a target held open to be closed.
const RENAME_PATIENCE: Duration = Duration::from_secs(1);
/// The pause between two tries of [`rename`].
const RENAME_PAUSE: Duration = Duration::from_millis(2);

/// Whether `e` says another handle holds the file.
fn is_held_open(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().and_then(|c| u32::try_from(c).ok()),
        Some(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION)
    )
}

/// Sets the length, keeping what a live map covers (see the module
/// notes). A file is made sparse before it grows, so that the bytes it
/// grows by take no disk space until written (as on Unix).
pub(super) fn set_len(file: &File, len: u64) -> io::Result<()> {
    if file.metadata()?.len() < len {
        make_sparse(file);
    }
    match file.set_len(len) {
        Err(e) if e.raw_os_error() == Some(ERROR_USER_MAPPED_FILE as i32) => {
            match file.metadata()?.len() >= len {
                true => Ok(()),
                false => Err(e),
            }
        }
        other => other,
    }
}

pub(super) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub(super) fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match file.seek_write(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Marks `file` sparse (`FSCTL_SET_SPARSE`). Advisory: a file system
/// without sparse files keeps the file as it is.
fn make_sparse(file: &File) {
    let mut returned = 0u32;
    // SAFETY: the handle is open for the life of `file`; the request takes
    // no input (which means "set sparse") and no output buffer, and
    // `returned` is a valid place for the byte count; no overlapped I/O.
    unsafe {
        DeviceIoControl(
            file.as_raw_handle(),
            FSCTL_SET_SPARSE,
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
            0,
            &mut returned,
            std::ptr::null_mut(),
        );
    }
}

/// Nothing to do (see [`super::sync_dir`]), once the directory is known to
/// exist.
pub(super) fn sync_dir(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path)?.is_dir() {
        true => Ok(()),
        false => Err(io::Error::other(format!(
            "{} is not a directory",
            path.display()
        ))),
    }
}

/// The volume's serial number and the file's index on it.
pub(super) fn file_id(file: &File) -> io::Result<FileId> {
    // SAFETY: all-zero bytes are a valid value of this plain C struct.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for the life of `file`, and `info` is a
    // valid, exclusively borrowed struct the call fills.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FileId {
        device: u64::from(info.dwVolumeSerialNumber),
        inode: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    })
}

pub(super) fn path_id(path: &Path, _meta: &std::fs::Metadata) -> io::Result<FileId> {
    file_id(&open_for_id(path)?)
}

/// Opens a file or a directory with no access rights (enough to read its
/// identity, and allowed whoever has it open or mapped).
fn open_for_id(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

/// No holes are reported: every byte up to the end counts as data.
pub(super) fn hole_at_or_after(file: &File, _from: u64) -> io::Result<u64> {
    Ok(file.metadata()?.len())
}

/// Every byte counts as data.
pub(super) fn data_at_or_after(file: &File, from: u64) -> io::Result<Option<u64>> {
    Ok(Some(from).filter(|&f| f < file.metadata().map_or(0, |m| m.len())))
}

/// No map advice on Windows.
pub(super) fn advise_normal(_map: &Mmap) {}

/// No map advice on Windows.
pub(super) fn advise_random(_map: &Mmap) {}

/// No read-ahead advice on Windows.
pub(super) fn will_need(_map: &Mmap, _offset: usize, _len: usize) {}

/// Keeps the pages: a view of the paging file has no call that drops some
/// of its pages and keeps them mapped.
///
/// # Safety
///
/// None needed here; the caller's promise (see [`super::release_pages`])
/// is kept trivially.
pub(super) unsafe fn release_pages(_map: &MmapMut, _offset: usize, _len: usize) {}

/// `VirtualAlloc` of `len` committed, readable and writable bytes.
pub(super) fn map_anon(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: a new allocation at an address of the system's choosing
    // touches no existing memory.
    let addr = unsafe {
        VirtualAlloc(
            std::ptr::null(),
            len,
            MEM_COMMIT | MEM_RESERVE,
            PAGE_READWRITE,
        )
    };
    NonNull::new(addr.cast::<u8>())
}

/// `VirtualFree` of an allocation [`map_anon`] made.
///
/// # Safety
///
/// `ptr` is an allocation [`map_anon`] returned, unused now.
pub(super) unsafe fn unmap_anon(ptr: NonNull<u8>, _len: usize) {
    // SAFETY: per the caller, `ptr` is the base of one allocation of ours
    // that nothing uses; releasing it (size 0: the whole allocation) frees
    // exactly its pages.
    unsafe {
        VirtualFree(ptr.as_ptr().cast(), 0, MEM_RELEASE);
    }
}

/// The machine's physical memory (`GlobalMemoryStatusEx`).
pub(super) fn process_memory() -> Option<u64> {
    // SAFETY: all-zero bytes are a valid value of this plain C struct.
    let mut status: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: `status` is a valid, exclusively borrowed struct whose
    // `dwLength` says its size, as the call requires; it fills the rest.
    let ok = unsafe { GlobalMemoryStatusEx(&mut status) };
    (ok != 0 && status.ullTotalPhys > 0).then_some(status.ullTotalPhys)
}
