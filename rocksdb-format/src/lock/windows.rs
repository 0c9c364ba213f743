//! The record lock on Windows: none is needed. RocksDB holds `LOCK` open
//! with no sharing, so a live RocksDB shows as a sharing violation when
//! `LOCK` is opened, and the open `LOCK` a [`super::DirLock`] holds keeps a
//! RocksDB started meanwhile from opening it.

use std::fs::File;

/// `ERROR_SHARING_VIOLATION`: the file is open with a share mode that
/// excludes this open.
const ERROR_SHARING_VIOLATION: i32 = 32;

/// Nothing to take beyond the open file and its `LockFileEx` range.
pub(super) fn lock(_file: &File, _exclusive: bool) -> std::io::Result<()> {
    Ok(())
}

/// Whether opening `LOCK` failed because a live RocksDB holds it open
/// without sharing.
pub(super) fn held_by_opener(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_SHARING_VIOLATION)
}

/// Windows does not say who holds a file.
pub(super) fn holder_pid(_file: &File) -> Option<i32> {
    None
}

/// [`lock`] never fails.
pub(super) fn is_conflict(_e: &std::io::Error) -> bool {
    false
}
