//! What only macOS has: `F_FULLFSYNC` and `sysctl hw.memsize`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `fcntl(F_FULLFSYNC)`: flushes the file's data through the drive's own
/// cache to its medium (plain `fsync` on macOS stops at the drive). A file
/// system that does not support it (some network ones) gets `fsync`, as in
/// RocksDB.
pub(super) fn full_fsync(file: &File) -> io::Result<()> {
    // SAFETY: `F_FULLFSYNC` takes no argument and only reads the descriptor,
    // which `file` keeps open for the duration of the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_FULLFSYNC) };
    match rc {
        -1 => file.sync_data(),
        _ => Ok(()),
    }
}

/// The machine's physical memory (`sysctl hw.memsize`).
pub(super) fn process_memory() -> Option<u64> {
    let mut bytes: u64 = 0;
    let mut size = std::mem::size_of::<u64>();
    // SAFETY: the name is a NUL-terminated string; `hw.memsize` is a 64-bit
    // integer, which `bytes` and `size` describe exactly; no new value is
    // passed.
    let rc = unsafe {
        libc::sysctlbyname(
            c"hw.memsize".as_ptr(),
            std::ptr::from_mut(&mut bytes).cast(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && size == std::mem::size_of::<u64>() && bytes > 0).then_some(bytes)
}
