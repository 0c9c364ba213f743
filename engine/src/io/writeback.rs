//! Starting the kernel's writeback of appended bytes early
//! (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`), as RocksDB's
//! `bytes_per_sync` does: the fdatasync that seals a 32 MiB log segment
//! then waits for the last megabyte, not for the whole segment (about
//! 30 ms on this machine's disk, under the writer lock). It changes no
//! durability promise: nothing counts as durable until fdatasync returns.

use std::fs::File;
use std::io;

/// Asks the kernel to start writing `len` bytes at `offset` back to disk,
/// without waiting. A no-op where the call does not exist.
#[cfg(target_os = "linux")]
pub fn start(file: &File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
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

/// Asks the kernel to start writing `len` bytes at `offset` back to disk,
/// without waiting. A no-op where the call does not exist.
#[cfg(not(target_os = "linux"))]
pub fn start(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Ok(())
}
