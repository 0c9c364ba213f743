//! A fault-injecting file system for tests: wraps the real one and fails
//! `fdatasync` or writes on demand, the way a dying disk or a full file
//! system would.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::{FileHandle, FileSystem, OpenMode, ReadOnlyMap, StdFileSystem};

/// Switches shared by a [`FaultyFileSystem`] and every file it opened.
#[derive(Debug, Default)]
pub struct Faults {
    /// Every `sync_data` and `sync_dir` fails with EIO while set.
    pub fail_sync: AtomicBool,
    /// Every write fails with ENOSPC while set.
    pub fail_writes: AtomicBool,
    /// Number of syncs performed (successful or not).
    pub syncs: AtomicU64,
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
        return Err(io::Error::from_raw_os_error(5));
    }
    Ok(())
}

impl FileSystem for FaultyFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFileSystem.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFileSystem.list_dir(path)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        let inner = StdFileSystem.open(path, mode)?;
        Ok(Arc::new(FaultyFile {
            inner,
            faults: self.faults.clone(),
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        StdFileSystem.read_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFileSystem.rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        StdFileSystem.remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.check_sync()?;
        StdFileSystem.sync_dir(path)
    }
}

#[derive(Debug)]
struct FaultyFile {
    inner: Arc<dyn FileHandle>,
    faults: Arc<Faults>,
}

impl FileHandle for FaultyFile {
    fn path(&self) -> &Path {
        self.inner.path()
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        if self.faults.fail_writes.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(28));
        }
        self.inner.write_all_at(buf, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        check_sync(&self.faults)?;
        self.inner.sync_data()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn map_readonly(&self, len: u64) -> io::Result<ReadOnlyMap> {
        self.inner.map_readonly(len)
    }
}
