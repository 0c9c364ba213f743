//! The I/O seam: every file operation the engine performs goes through
//! [`FileSystem`] and [`FileHandle`] (creating and locking the directory,
//! recovering, writing, compacting, taking a checkpoint), so tests can
//! substitute a backend that fails any call (see [`faulty`]) or loses power
//! (see [`power_loss`]).
//!
//! Reads of segment data go through read-only memory maps created by
//! [`FileHandle::map_readonly`]; writes always go through the file
//! descriptor, never through a map.
//!
//! Every call to the operating system is made in `os`, one backend per
//! platform (Linux, macOS, other Unix, Windows); the rest of the engine is
//! platform-free.

pub mod faulty;
mod map;
pub(crate) mod os;
pub mod power_loss;
pub(crate) mod prefetch;
mod std_fs;
pub mod transient;
pub(crate) mod writeback;

use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};
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
    /// Open a file for reading and writing, creating it empty if it is
    /// missing; an existing file is kept as it is (never truncated).
    Create,
}

/// What kind of entry a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Anything else (a device, a socket, a fifo).
    Other,
}

/// A file's identity: the same file under two names (a hard link, a moved
/// directory) has the same identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device number of the file system holding it.
    pub device: u64,
    /// Its inode number on that device.
    pub inode: u64,
}

/// What [`FileSystem::metadata`] reports about a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// What the path names (symbolic links followed).
    pub kind: EntryKind,
    /// Its length in bytes.
    pub len: u64,
    /// Its identity.
    pub id: FileId,
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
    /// Removes a file (on Windows, a file this process maps is removed when
    /// its last map drops: `io::os::remove_file`).
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Flushes a directory's entries (creations, renames) to stable storage
    /// (where the platform can: `io::os::sync_dir`).
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// What `path` names, following symbolic links; an error of kind
    /// `NotFound` if nothing.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// The absolute path of `path` with every symbolic link and `.`/`..`
    /// resolved (`realpath`).
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// Removes a directory and everything in it.
    fn remove_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Makes `link` a second name of the file `original` (both in the same
    /// file system); fails if `link` exists.
    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()>;
}

/// An open file.
pub trait FileHandle: Send + Sync + Debug {
    /// The file's path.
    fn path(&self) -> &Path;
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Flushes the file's data to stable storage (`fdatasync`; what that
    /// is on each platform: `io::os::sync_data`).
    fn sync_data(&self) -> io::Result<()>;
    /// The file's identity (`fstat`: the open file, whatever its name is
    /// now).
    fn id(&self) -> io::Result<FileId>;
    /// Takes an exclusive advisory lock on the file (`flock`) without
    /// waiting: `Ok(false)` if another open of the file holds it. Held
    /// until [`Self::unlock`] or until the last handle of this open closes.
    fn try_lock(&self) -> io::Result<bool>;
    /// Releases the lock [`Self::try_lock`] took.
    fn unlock(&self) -> io::Result<()>;
    /// Asks the operating system to start writing `len` bytes at `offset`
    /// back, without waiting and without promising durability (so that a
    /// later [`Self::sync_data`] has less to wait for). Advisory: the
    /// default does nothing.
    fn start_writeback(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    /// Sets the file's length. The engine only ever grows a file that may be
    /// mapped, but for an unpublished compaction output's tail, which
    /// Windows keeps (see `io::os::set_len`).
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

/// Whether anything exists at `path` (a failure other than `NotFound` is
/// reported, never taken for absence).
pub(crate) fn exists(fs: &dyn FileSystem, path: &Path) -> io::Result<bool> {
    match fs.metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The directory holding the entry `path`: its parent, or `.` for a bare
/// relative name. `None` for a root.
pub(crate) fn parent_dir(path: &Path) -> Option<&Path> {
    match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Some(Path::new(".")),
        other => other,
    }
}

/// Creates the directory `dir` and any missing parents, and syncs the
/// directory holding each one it created, so that once this returns the
/// new directories survive a power loss (a new directory's entry lives in
/// its parent, which nothing else syncs).
pub(crate) fn create_dir_all_durably(fs: &dyn FileSystem, dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(path) = at.filter(|p| !p.as_os_str().is_empty()) {
        if exists(fs, path)? {
            break;
        }
        missing.push(path);
        at = path.parent();
    }
    fs.create_dir_all(dir)?;
    for created in missing.iter().rev() {
        if let Some(parent) = parent_dir(created) {
            fs.sync_dir(parent)?;
        }
    }
    Ok(())
}
