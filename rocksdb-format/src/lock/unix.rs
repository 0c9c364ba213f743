//! The record lock on Unix: an open-file-description lock (`F_OFD_SETLK`)
//! on Linux, a POSIX record lock (`F_SETLK`) elsewhere (macOS and the BSDs
//! have no public OFD lock); RocksDB's own lock is a POSIX record lock, and
//! conflicts with either.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Sets a lock; gets the first lock that would conflict with one.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SET_LOCK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(any(target_os = "linux", target_os = "android"))]
const GET_LOCK: libc::c_int = libc::F_OFD_GETLK;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SET_LOCK: libc::c_int = libc::F_SETLK;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const GET_LOCK: libc::c_int = libc::F_GETLK;

/// Takes a whole-file record lock on `file` without waiting: a write
/// (exclusive) lock or a read (shared) one.
pub(super) fn lock(file: &File, exclusive: bool) -> std::io::Result<()> {
    let record = match exclusive {
        false => libc::F_RDLCK,
        true => libc::F_WRLCK,
    };
    record_lock(file, SET_LOCK, record as libc::c_short).map(|_| ())
}

/// Whether opening `LOCK` failed because a live process holds it: never on
/// Unix, where opening ignores locks.
pub(super) fn held_by_opener(_e: &std::io::Error) -> bool {
    false
}

/// The pid of the process holding a conflicting record lock, if known.
pub(super) fn holder_pid(file: &File) -> Option<i32> {
    let lock = record_lock(file, GET_LOCK, libc::F_WRLCK as libc::c_short).ok()?;
    (lock.l_type != libc::F_UNLCK as libc::c_short && lock.l_pid > 0).then_some(lock.l_pid)
}

/// Whether [`lock`] failed because another lock conflicts.
pub(super) fn is_conflict(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES))
}

/// Runs `fcntl(cmd)` with a whole-file lock description of type `kind`.
fn record_lock(file: &File, cmd: libc::c_int, kind: libc::c_short) -> std::io::Result<libc::flock> {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a
    // valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 0;
    lock.l_pid = 0;
    // SAFETY: the descriptor is open for the life of `file`, and `lock`
    // is a valid, exclusively borrowed `flock` the kernel reads and fills.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut lock as *mut libc::flock) };
    if rc == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(lock)
}
