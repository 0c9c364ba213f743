//! Detecting a live process that holds a RocksDB database directory, and
//! keeping other processes out while its files are read.
//!
//! RocksDB locks `<dir>/LOCK` with a POSIX record lock (`fcntl(F_SETLK)`);
//! AlexDB locks it with `flock`. The two kinds do not see each other, so
//! both are taken. RocksDB's read-only open takes no lock at all, which is
//! why a live writer has to be detected here rather than by opening.
//!
//! A [`DirLock`] holds an open-file-description record lock
//! (`F_OFD_SETLK`) on `LOCK` together with an `flock` of the same kind, until
//! it is dropped: a shared one ([`DirLock::shared`], for a reader) conflicts
//! with RocksDB's exclusive record lock, so a RocksDB writer started
//! meanwhile fails to open instead of changing the files under the reader;
//! an exclusive one ([`DirLock::exclusive`], for a conversion that will
//! retire the files) also keeps other readers out. Nothing is written to the
//! file.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::{FormatError, Result};

/// A lock on a RocksDB directory's `LOCK` file, released on drop.
#[derive(Debug)]
pub struct DirLock {
    _file: Option<File>,
}

/// Whether a lock lets other readers in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shared,
    Exclusive,
}

impl DirLock {
    /// Fails with [`FormatError::InUse`] if a process holds the database
    /// at `dir` open; otherwise returns a shared lock keeping writers out.
    /// A directory without a `LOCK` file has no writer to keep out.
    pub fn shared(dir: &Path) -> Result<DirLock> {
        take(dir, Kind::Shared)
    }

    /// Fails with [`FormatError::InUse`] if any process holds the database
    /// at `dir` (or holds a [`DirLock`] on it); otherwise returns a lock
    /// keeping every other RocksDB and AlexDB process out.
    pub fn exclusive(dir: &Path) -> Result<DirLock> {
        take(dir, Kind::Exclusive)
    }
}

fn take(dir: &Path, kind: Kind) -> Result<DirLock> {
    let path = dir.join("LOCK");
    let opened = match kind {
        Kind::Shared => File::open(&path),
        Kind::Exclusive => OpenOptions::new().read(true).write(true).open(&path),
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(DirLock { _file: None });
        }
        Err(e) => return Err(io_error(&path, e)),
    };
    let in_use = |holder| FormatError::InUse {
        path: dir.to_path_buf(),
        holder,
    };
    let flocked = match kind {
        Kind::Shared => file.try_lock_shared(),
        Kind::Exclusive => file.try_lock(),
    };
    match flocked {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(in_use(None)),
        Err(TryLockError::Error(e)) => return Err(io_error(&path, e)),
    }
    let record = match kind {
        Kind::Shared => libc::F_RDLCK,
        Kind::Exclusive => libc::F_WRLCK,
    };
    match ofd_lock(&file, libc::F_OFD_SETLK, record as libc::c_short) {
        Ok(_) => Ok(DirLock { _file: Some(file) }),
        Err(e) if is_conflict(&e) => Err(in_use(holder_pid(&file))),
        Err(e) => Err(io_error(&path, e)),
    }
}

fn io_error(path: &Path, source: std::io::Error) -> FormatError {
    FormatError::Io {
        path: PathBuf::from(path),
        source,
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

#[cfg(test)]
mod tests {
    use super::DirLock;
    use crate::error::FormatError;

    #[test]
    fn shared_locks_share_and_exclusive_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("LOCK"), b"").unwrap();
        let first = DirLock::shared(dir.path()).unwrap();
        let second = DirLock::shared(dir.path()).unwrap();
        assert!(matches!(
            DirLock::exclusive(dir.path()),
            Err(FormatError::InUse { .. })
        ));
        drop((first, second));
        let only = DirLock::exclusive(dir.path()).unwrap();
        assert!(matches!(
            DirLock::shared(dir.path()),
            Err(FormatError::InUse { .. })
        ));
        drop(only);
        DirLock::shared(dir.path()).unwrap();
    }

    #[test]
    fn a_directory_without_a_lock_file_is_free() {
        let dir = tempfile::tempdir().unwrap();
        DirLock::exclusive(dir.path()).unwrap();
        assert!(!dir.path().join("LOCK").exists());
    }
}
