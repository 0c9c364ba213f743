//! The I/O seam: every file operation the engine performs goes through
//! [`FileSystem`] and [`FileHandle`], so tests can substitute a backend that
//! fails fsyncs or writes (see [`faulty`]).
//!
//! Reads of segment data go through read-only memory maps created by
//! [`FileHandle::map_readonly`]; writes always go through the file
//! descriptor, never through a map.

mod extents;
pub mod faulty;
mod map;
pub(crate) mod memory;
pub mod power_loss;
pub(crate) mod prefetch;
mod std_fs;
pub(crate) mod writeback;

use std::fmt::Debug;
use std::io;
use std::path::Path;
use std::sync::Arc;

pub use map::ReadOnlyMap;
pub use std_fs::StdFileSystem;

/// How to open a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Open an existing file for reading and writing.
    Existing,
    /// Create a new file; fail if it exists.
    CreateNew,
    /// Open an existing file for reading only (a reader without the lock
    /// never writes, and may lack write permission).
    ReadOnly,
}

/// A directory tree of files.
pub trait FileSystem: Send + Sync + Debug {
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// The names of the entries of a directory.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// Opens a file.
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>>;
    /// Reads a whole (small) file.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Atomically renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Flushes a directory's entries (creations, renames) to stable storage.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// An open file.
pub trait FileHandle: Send + Sync + Debug {
    /// The file's path.
    fn path(&self) -> &Path;
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Flushes the file's data to stable storage (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Asks the operating system to start writing `len` bytes at `offset`
    /// back, without waiting and without promising durability (so that a
    /// later [`Self::sync_data`] has less to wait for). Advisory: the
    /// default does nothing.
    fn start_writeback(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    /// Sets the file's length. The engine only ever grows a file that may be
    /// mapped; shrinking happens only before any map exists.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The file's current length.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Maps the first `len` bytes of the file read-only. The file must be at
    /// least `len` bytes long and must never be shrunk while the map lives.
    fn map_readonly(&self, len: u64) -> io::Result<ReadOnlyMap>;
    /// Offset of the first hole (never-written, unallocated range of a sparse
    /// file) at or after `from`, or the file's length if there is none.
    /// Pages below it may be read through a map without allocating anything.
    /// The default (for backends that cannot tell) reports no holes.
    fn hole_at_or_after(&self, from: u64) -> io::Result<u64> {
        let _ = from;
        self.len()
    }
    /// Offset of the first allocated byte at or after `from`, or `None` if
    /// only holes follow. The default reports every byte as allocated.
    fn data_at_or_after(&self, from: u64) -> io::Result<Option<u64>> {
        Ok(Some(from).filter(|&f| f < self.len().unwrap_or(0)))
    }
}
