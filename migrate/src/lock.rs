//! Detecting a live process that holds a source database, and keeping
//! writers out while it is read.
//!
//! RocksDB locks `<dir>/LOCK` with a POSIX record lock (`fcntl(F_SETLK)`);
//! AlexDB locks it with `flock`. The two kinds do not see each other, so
//! both are probed. RocksDB's read-only open takes no lock at all, which is
//! why a live writer has to be detected here rather than by opening.
//!
//! When the probe finds no holder, the tool keeps a shared open-file-
//! description lock (`F_OFD_SETLK`, `F_RDLCK`) on `LOCK` until the copy ends:
//! it conflicts with RocksDB's exclusive record lock, so a RocksDB writer
//! started meanwhile fails to open instead of changing the source under the
//! copy. Nothing is written to the file.

use std::fs::{File, TryLockError};
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::error::{MigrateError, Result};

/// A shared lock on a source's `LOCK` file, released on drop.
#[derive(Debug)]
pub struct SourceLock {
    _file: Option<File>,
}

/// Fails with [`MigrateError::InUse`] if a process holds the database
/// at `dir` open; otherwise returns a shared lock keeping writers out.
pub fn hold_source(dir: &Path) -> Result<SourceLock> {
    let path = dir.join("LOCK");
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SourceLock { _file: None });
        }
        Err(e) => return Err(MigrateError::io(&path, e)),
    };
    let in_use = || MigrateError::InUse {
        path: dir.to_path_buf(),
        holder: None,
    };
    match file.try_lock_shared() {
        Ok(()) => file.unlock().map_err(|e| MigrateError::io(&path, e))?,
        Err(TryLockError::WouldBlock) => return Err(in_use()),
        Err(TryLockError::Error(e)) => return Err(MigrateError::io(&path, e)),
    }
    match ofd_lock(&file, libc::F_OFD_SETLK, libc::F_RDLCK as libc::c_short) {
        Ok(_) => Ok(SourceLock { _file: Some(file) }),
        Err(e) if is_conflict(&e) => Err(MigrateError::InUse {
            path: dir.to_path_buf(),
            holder: holder_pid(&file),
        }),
        Err(e) => Err(MigrateError::io(&path, e)),
    }
}

/// The pid of the process holding a conflicting record lock, if known.
fn holder_pid(file: &File) -> Option<i32> {
    let lock = ofd_lock(file, libc::F_OFD_GETLK, libc::F_WRLCK as libc::c_short).ok()?;
    (lock.l_type != libc::F_UNLCK as libc::c_short && lock.l_pid > 0).then_some(lock.l_pid)
}

fn is_conflict(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES))
}

/// Runs `fcntl(cmd)` with a whole-file lock description of type `kind`.
fn ofd_lock(file: &File, cmd: libc::c_int, kind: libc::c_short) -> std::io::Result<libc::flock> {
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
