//! The real file system.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{EntryKind, FileHandle, FileSystem, Metadata, OpenMode, ReadOnlyMap, os};

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFileSystem;

impl FileSystem for StdFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(path)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        let mut opts = OpenOptions::new();
        opts.read(true).write(mode != OpenMode::ReadOnly);
        match mode {
            OpenMode::CreateNew => {
                opts.create_new(true);
            }
            OpenMode::Create => {
                opts.create(true).truncate(false);
            }
            OpenMode::Existing | OpenMode::ReadOnly => {}
        }
        let file = opts.open(path)?;
        Ok(Arc::new(StdFile {
            file,
            path: path.to_path_buf(),
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        os::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        os::remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        os::sync_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        let meta = fs::metadata(path)?;
        let kind = match meta.file_type() {
            t if t.is_file() => EntryKind::File,
            t if t.is_dir() => EntryKind::Dir,
            _ => EntryKind::Other,
        };
        Ok(Metadata {
            kind,
            len: meta.len(),
            id: os::path_id(path, &meta)?,
        })
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir_all(path)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        os::hard_link(original, link)
    }
}

/// A file opened through [`StdFileSystem`].
#[derive(Debug)]
pub struct StdFile {
    file: File,
    path: PathBuf,
}

impl FileHandle for StdFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        os::write_all_at(&self.file, buf, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        os::read_exact_at(&self.file, buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        os::sync_data(&self.file)
    }

    fn id(&self) -> io::Result<super::FileId> {
        os::file_id(&self.file)
    }

    fn try_lock(&self) -> io::Result<bool> {
        match self.file.try_lock() {
            Ok(()) => Ok(true),
            Err(TryLockError::WouldBlock) => Ok(false),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    fn unlock(&self) -> io::Result<()> {
        self.file.unlock()
    }

    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        os::start_writeback(&self.file, offset, len)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        os::set_len(&self.file, len)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn map_readonly(&self, len: u64) -> io::Result<ReadOnlyMap> {
        ReadOnlyMap::new(&self.file, len)
    }

    fn hole_at_or_after(&self, from: u64) -> io::Result<u64> {
        os::hole_at_or_after(&self.file, from)
    }

    fn data_at_or_after(&self, from: u64) -> io::Result<Option<u64>> {
        os::data_at_or_after(&self.file, from)
    }
}
