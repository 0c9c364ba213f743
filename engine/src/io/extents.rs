//! Where a file's data is: `lseek` with `SEEK_DATA` / `SEEK_HOLE`.
//!
//! Recovery must never touch a page of a map that lies in a hole of a
//! sparse file: on tmpfs a read fault there allocates a page, and on a full
//! file system that allocation fails with SIGBUS. It asks these functions
//! where the allocated extents are and reads the rest through the
//! descriptor (where a hole reads as zeros without allocating anything).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Offset of the first hole at or after `from`, or the file's length if
/// none (every file ends in an implicit hole at its end).
pub fn hole_at_or_after(file: &File, from: u64) -> io::Result<u64> {
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
pub fn data_at_or_after(file: &File, from: u64) -> io::Result<Option<u64>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

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
