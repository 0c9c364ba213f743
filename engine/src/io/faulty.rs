//! A fault-injecting file system for tests: wraps the real one and fails
//! `fdatasync`, writes or hard links on demand, the way a dying disk, a
//! full file system or a second file system would, or hands out maps whose
//! holes hold junk, to prove that recovery never reads a hole through a map
//! (on a full tmpfs that read is a SIGBUS). As a failpoint it also fails exactly one I/O call, the
//! `k`-th it counts ([`Faults::fail_once_at`]), and lets every later one
//! through: a transient fault at any I/O call.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::os::error_code::{CROSS_DEVICE, DISK_FULL, IO_ERROR};
use super::{FileHandle, FileId, FileSystem, Metadata, OpenMode, ReadOnlyMap, StdFileSystem};

/// Switches shared by a [`FaultyFileSystem`] and every file it opened.
#[derive(Debug, Default)]
pub struct Faults {
    /// Every `sync_data` and `sync_dir` fails with EIO while set.
    pub fail_sync: AtomicBool,
    /// Every write fails with ENOSPC while set.
    pub fail_writes: AtomicBool,
    /// Number of syncs performed (successful or not).
    pub syncs: AtomicU64,
    /// While set, `map_readonly` returns a private copy of the file in which
    /// every byte in a hole (or past the end of the file) is `0xA5`
    /// instead of zero. The copy does not see later writes: open, read and
    /// verify only. Any read of a hole through the map then sees junk.
    pub hostile_holes: AtomicBool,
    /// I/O calls counted so far by the failpoint: every open, read, write,
    /// `fdatasync`, directory sync, `set_len`, map, rename, removal (of a
    /// file or a directory tree), directory creation, hard link, `stat`
    /// (of a path or of an open file), `realpath`, `flock` and unlock
    /// (listing a directory, a file's length and asking for holes are not
    /// counted).
    pub calls: AtomicU64,
    /// When non-zero, the call that makes [`Self::calls`] equal to it fails
    /// with EIO (ENOSPC for a write or `set_len`), changing nothing; every
    /// other call goes through.
    pub fail_once_at: AtomicU64,
    /// What the failpoint failed: the call's kind and path.
    pub failed_call: Mutex<Option<String>>,
    /// Every hard link fails with EXDEV while set, as between two file
    /// systems (the engine then copies).
    pub fail_hard_links: AtomicBool,
    /// When non-zero, a write that would reach past this many bytes into a
    /// file created (opened with [`OpenMode::CreateNew`]) while it was
    /// non-zero fails with ENOSPC: a disk that fills while a new file is
    /// written.
    pub new_file_bytes_limit: AtomicU64,
}

impl Faults {
    /// Counts one I/O call of `kind` on `path`; fails it if it is the one
    /// [`Self::fail_once_at`] names.
    fn count_call(&self, kind: &str, path: &Path) -> io::Result<()> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call != self.fail_once_at.load(Ordering::SeqCst) {
            return Ok(());
        }
        *self
            .failed_call
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(format!("{kind} {}", path.display()));
        let errno = match kind {
            "write" | "set_len" => DISK_FULL,
            _ => IO_ERROR,
        };
        Err(io::Error::from_raw_os_error(errno))
    }
}

/// A file system that can be told to fail.
#[derive(Debug, Clone, Default)]
pub struct FaultyFileSystem {
    /// The switches; flip them from the test.
    pub faults: Arc<Faults>,
}

impl FaultyFileSystem {
    /// A new file system with no faults switched on.
    pub fn new() -> Self {
        Self::default()
    }

    fn check_sync(&self) -> io::Result<()> {
        check_sync(&self.faults)
    }
}

fn check_sync(faults: &Faults) -> io::Result<()> {
    faults.syncs.fetch_add(1, Ordering::SeqCst);
    if faults.fail_sync.load(Ordering::SeqCst) {
        return Err(io::Error::from_raw_os_error(IO_ERROR));
    }
    Ok(())
}

impl FileSystem for FaultyFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.faults.count_call("create_dir_all", path)?;
        StdFileSystem.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFileSystem.list_dir(path)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        self.faults.count_call("open", path)?;
        let inner = StdFileSystem.open(path, mode)?;
        Ok(Arc::new(FaultyFile {
            inner,
            faults: self.faults.clone(),
            created_under_limit: matches!(mode, OpenMode::CreateNew)
                && self.faults.new_file_bytes_limit.load(Ordering::SeqCst) != 0,
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.faults.count_call("read_file", path)?;
        StdFileSystem.read_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.faults.count_call("rename", to)?;
        StdFileSystem.rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.faults.count_call("remove_file", path)?;
        StdFileSystem.remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.faults.count_call("sync_dir", path)?;
        self.check_sync()?;
        StdFileSystem.sync_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.faults.count_call("metadata", path)?;
        StdFileSystem.metadata(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.faults.count_call("canonicalize", path)?;
        StdFileSystem.canonicalize(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.faults.count_call("remove_dir_all", path)?;
        StdFileSystem.remove_dir_all(path)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        self.faults.count_call("hard_link", link)?;
        if self.faults.fail_hard_links.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(CROSS_DEVICE));
        }
        StdFileSystem.hard_link(original, link)
    }
}

#[derive(Debug)]
struct FaultyFile {
    inner: Arc<dyn FileHandle>,
    faults: Arc<Faults>,
    /// Whether this file system created the file while
    /// [`Faults::new_file_bytes_limit`] was set.
    created_under_limit: bool,
}

impl FaultyFile {
    /// Whether a write of `len` bytes at `offset` passes the limit of
    /// [`Faults::new_file_bytes_limit`].
    fn over_new_file_limit(&self, offset: u64, len: usize) -> bool {
        let limit = self.faults.new_file_bytes_limit.load(Ordering::SeqCst);
        self.created_under_limit && limit != 0 && offset + len as u64 > limit
    }
}

impl FileHandle for FaultyFile {
    fn path(&self) -> &Path {
        self.inner.path()
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.faults.count_call("write", self.path())?;
        if self.faults.fail_writes.load(Ordering::SeqCst)
            || self.over_new_file_limit(offset, buf.len())
        {
            return Err(io::Error::from_raw_os_error(DISK_FULL));
        }
        self.inner.write_all_at(buf, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.faults.count_call("read", self.path())?;
        self.inner.read_exact_at(buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.faults.count_call("sync_data", self.path())?;
        check_sync(&self.faults)?;
        self.inner.sync_data()
    }

    fn id(&self) -> io::Result<FileId> {
        self.faults.count_call("file_id", self.path())?;
        self.inner.id()
    }

    fn try_lock(&self) -> io::Result<bool> {
        self.faults.count_call("lock", self.path())?;
        self.inner.try_lock()
    }

    fn unlock(&self) -> io::Result<()> {
        self.faults.count_call("unlock", self.path())?;
        self.inner.unlock()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.faults.count_call("set_len", self.path())?;
        self.inner.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn map_readonly(&self, len: u64) -> io::Result<ReadOnlyMap> {
        self.faults.count_call("map", self.path())?;
        if !self.faults.hostile_holes.load(Ordering::SeqCst) {
            return self.inner.map_readonly(len);
        }
        ReadOnlyMap::copy_of(&hostile_image(&*self.inner, len)?)
    }

    fn hole_at_or_after(&self, from: u64) -> io::Result<u64> {
        self.inner.hole_at_or_after(from)
    }

    fn data_at_or_after(&self, from: u64) -> io::Result<Option<u64>> {
        self.inner.data_at_or_after(from)
    }
}

/// The first `len` bytes of `file` with every byte that is not allocated
/// data replaced by `0xA5`.
fn hostile_image(file: &dyn FileHandle, len: u64) -> io::Result<Vec<u8>> {
    let size = usize::try_from(len).map_err(|_| io::Error::other("map too large"))?;
    let mut image = vec![0xA5u8; size];
    let end = file.len()?.min(len);
    let mut at = 0;
    while let Some(start) = file.data_at_or_after(at)?.filter(|&s| s < end) {
        let stop = file.hole_at_or_after(start)?.min(end);
        file.read_exact_at(&mut image[start as usize..stop as usize], start)?;
        at = stop;
    }
    Ok(image)
}
