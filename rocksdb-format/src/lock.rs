//! Detecting a live process that holds a RocksDB database directory, and
//! keeping other processes out while its files are read.
//!
//! On Unix RocksDB locks `<dir>/LOCK` with a POSIX record lock
//! (`fcntl(F_SETLK)`); AlexDB locks it with `flock`. The two kinds do not
//! see each other, so both are taken. RocksDB's read-only open takes no
//! lock at all, which is why a live writer has to be detected here rather
//! than by opening.
//!
//! A [`DirLock`] holds a record lock on `LOCK` together with an `flock` of
//! the same kind, until it is dropped: a shared one ([`DirLock::shared`],
//! for a reader) conflicts with RocksDB's exclusive record lock, so a
//! RocksDB writer started meanwhile fails to open instead of changing the
//! files under the reader; an exclusive one ([`DirLock::exclusive`], for a
//! conversion that will retire the files) also keeps other readers out.
//! Nothing is written to the file. The record lock is per platform (see
//! `record`): an open-file-description lock (`F_OFD_SETLK`) on Linux, a
//! process-wide POSIX one (`F_SETLK`) on other Unix, where closing any
//! other descriptor of `LOCK` in this process would drop it (this crate
//! opens `LOCK` only here).
//!
//! On Windows RocksDB holds `LOCK` open with no sharing at all: opening it
//! then fails with a sharing violation, which is the sign of a live
//! RocksDB, and holding it open (as a [`DirLock`] does) makes a RocksDB
//! started meanwhile fail to open. The shared and exclusive locks among
//! AlexDB processes are `LockFileEx` ranges (`std`'s `File::try_lock`).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{FormatError, Result};

#[cfg_attr(unix, path = "lock/unix.rs")]
#[cfg_attr(windows, path = "lock/windows.rs")]
mod record;

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
    let in_use = |holder| FormatError::InUse {
        path: dir.to_path_buf(),
        holder,
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(DirLock { _file: None });
        }
        Err(e) if record::held_by_opener(&e) => return Err(in_use(None)),
        Err(e) => return Err(io_error(&path, e)),
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
    match record::lock(&file, kind == Kind::Exclusive) {
        Ok(()) => Ok(DirLock { _file: Some(file) }),
        Err(e) if record::is_conflict(&e) => Err(in_use(record::holder_pid(&file))),
        Err(e) => Err(io_error(&path, e)),
    }
}

fn io_error(path: &Path, source: std::io::Error) -> FormatError {
    FormatError::Io {
        path: PathBuf::from(path),
        source,
    }
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
