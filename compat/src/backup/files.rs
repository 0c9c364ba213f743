//! File work for backups: naming shared segments, atomic writes, restore.

use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::io::{FileSystem, StdFileSystem};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::meta::BackupFile;
use crate::Error;

/// RocksDB's `IO error: ` status for a failed file operation on `path`.
pub(crate) fn io_error(path: &Path, err: &io::Error) -> Error {
    Error::io(format_args!("{}: {err}", path.display()))
}

/// `<name>_<crc32c>_<len>`: the name a sealed segment is shared under, so
/// that only a byte-identical file is ever reused.
pub(crate) fn shared_name(path: &Path, name: &str, bytes: u64) -> Result<String, Error> {
    let crc = file_crc(path).map_err(|e| io_error(path, &e))?;
    Ok(format!("{name}_{crc:08x}_{bytes}"))
}

/// CRC-32C of the whole file at `path`.
fn file_crc(path: &Path) -> io::Result<u32> {
    let mut file = fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut crc = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(crc);
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename (and,
/// with `sync`, fsyncs of the file and the directory).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], sync: bool) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let write = || -> io::Result<()> {
        let file = fs::File::create(&tmp)?;
        io::Write::write_all(&mut &file, bytes)?;
        if sync {
            file.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        if sync {
            sync_parent(path)?;
        }
        Ok(())
    };
    write().map_err(|e| io_error(path, &e))
}

/// fsyncs the directory holding `path` (where the platform can: see
/// `StdFileSystem::sync_dir`).
fn sync_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) => StdFileSystem.sync_dir(dir),
        None => Ok(()),
    }
}

/// Removes `dir` and everything under it, if it exists.
pub(crate) fn remove_dir_if_exists(dir: &Path) -> Result<(), Error> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error(dir, &e)),
        _ => Ok(()),
    }
}

/// The names of the entries of `dir`.
pub(crate) fn entry_names(dir: &Path) -> Result<Vec<String>, Error> {
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, &e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// The entries of `dir` whose names are numbers (backup ids).
pub(crate) fn numeric_entries(dir: &Path) -> Result<Vec<u32>, Error> {
    Ok(entry_names(dir)?
        .iter()
        .filter_map(|name| name.parse().ok())
        .collect())
}

/// Copies the backup's `files` from `backup_dir` into `db_dir`, after
/// removing the database files already there (segments, manifest and the
/// index checkpoint, which describes the segments it replaces).
pub(crate) fn restore(
    backup_dir: &Path,
    files: &[BackupFile],
    db_dir: &Path,
    sync: bool,
) -> Result<(), Error> {
    fs::create_dir_all(db_dir).map_err(|e| io_error(db_dir, &e))?;
    for name in entry_names(db_dir)? {
        if name == "MANIFEST" || name == INDEX_FILE || name.ends_with(".seg") {
            let path = db_dir.join(name);
            fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
        }
    }
    for file in files {
        let target: PathBuf = db_dir.join(&file.name);
        copy_file(&backup_dir.join(&file.stored), &target, sync)?;
    }
    if sync {
        StdFileSystem
            .sync_dir(db_dir)
            .map_err(|e| io_error(db_dir, &e))?;
    }
    Ok(())
}

/// Copies `source` to `target`, fsyncing it with `sync`.
fn copy_file(source: &Path, target: &Path, sync: bool) -> Result<(), Error> {
    fs::copy(source, target).map_err(|e| io_error(target, &e))?;
    if sync {
        // Opened for writing: Windows flushes only a handle that may write.
        fs::OpenOptions::new()
            .write(true)
            .open(target)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error(target, &e))?;
    }
    Ok(())
}
