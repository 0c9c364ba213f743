//! A conversion's commit and roll-forward: the marker that commits it,
//! RocksDB's files moved aside, the staged AlexDB files moved up. Every
//! step is a rename a restart repeats from wherever it stopped.

use std::fs::{self, File, TryLockError};
use std::io::Write;
use std::path::Path;

use alexdb_engine::io::{FileSystem, StdFileSystem};
use alexdb_rocksdb_format::lock::DirLock;

use super::detect::{is_rocksdb_file, is_rocksdb_owned};
use super::stage::format_error;
use super::{RETIRED_DIR, STAGING_DIR, io_error};
use crate::Error;

/// The marker of a committed conversion whose RocksDB files are not all
/// retired yet; it holds the fingerprint of the files that were read.
const CONVERTED: &str = "CONVERTED";

/// The marker's name once RocksDB's files are all retired.
const RETIRED: &str = "RETIRED";

/// The marker's name while it is written.
const MARKER_TMP: &str = "CONVERTED.tmp";

/// The exclusive `flock` on a staging directory (one conversion at a time,
/// across processes) and, while RocksDB's files may still be read or
/// written, the lock on RocksDB's `LOCK` file.
pub(super) struct StagingLock {
    _dir: File,
    rocks: Option<DirLock>,
}

impl StagingLock {
    /// Locks the staging directory, or fails if another process is
    /// converting this database.
    pub(super) fn take(staging: &Path) -> Result<StagingLock, Error> {
        let dir = File::open(staging).map_err(|e| io_error(staging, "opening", e))?;
        match dir.try_lock() {
            Ok(()) => Ok(StagingLock {
                _dir: dir,
                rocks: None,
            }),
            Err(TryLockError::WouldBlock) => Err(Error::io(format_args!(
                "While lock file: {}: Resource temporarily unavailable \
                 (another process is converting this database)",
                staging.display()
            ))),
            Err(TryLockError::Error(e)) => Err(io_error(staging, "locking", e)),
        }
    }

    /// This lock, also holding `rocks` (RocksDB's `LOCK`).
    pub(super) fn holding(mut self, rocks: DirLock) -> StagingLock {
        self.rocks = Some(rocks);
        self
    }
}

/// A new, empty, locked staging directory (whatever an interrupted,
/// uncommitted conversion left there is removed: it is only a partial copy).
pub(super) fn fresh_staging(staging: &Path) -> Result<StagingLock, Error> {
    match fs::remove_dir_all(staging) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(staging, "removing an unfinished conversion", e)),
    }
    fs::create_dir(staging).map_err(|e| io_error(staging, "creating", e))?;
    if let Some(parent) = staging.parent() {
        sync_dir(parent)?;
    }
    StagingLock::take(staging)
}

/// Whether the conversion staged in `staging` is committed.
pub(super) fn is_committed(staging: &Path) -> bool {
    staging.join(CONVERTED).exists() || staging.join(RETIRED).exists()
}

/// The names, sizes, modification times (nanoseconds since the epoch) and
/// inode numbers (0 where the platform has none) of RocksDB's database
/// files in `path` and in its [`RETIRED_DIR`] (where a retirement that
/// stopped halfway left some), one `name size mtime inode` line each,
/// sorted: a committed conversion is rolled forward only while they are the
/// files it read. Moving a file aside keeps all four; a RocksDB process
/// that rewrites a file of the same size changes its time or inode.
pub(super) fn fingerprint(path: &Path) -> Result<String, Error> {
    let mut files = Vec::new();
    for dir in [path.to_path_buf(), path.join(RETIRED_DIR)] {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(&dir, "listing", e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&dir, "listing", e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_rocksdb_file(&name) {
                let meta = entry
                    .metadata()
                    .map_err(|e| io_error(&entry.path(), "reading metadata", e))?;
                let (len, mtime, inode) = (meta.len(), mtime_nanos(&meta), inode_of(&meta));
                files.push(format!("{name} {len} {mtime} {inode}\n"));
            }
        }
    }
    files.sort();
    Ok(files.concat())
}

/// Whether the fingerprint `stored` in a marker is `now`'s. A marker
/// written before times and inodes were kept holds `name size` lines: it
/// is compared with those fields of `now`.
fn same_files(stored: &str, now: &str) -> bool {
    if stored == now {
        return true;
    }
    let names_and_sizes = |text: &str| -> Vec<String> {
        text.lines()
            .map(|line| line.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    let legacy = stored.lines().all(|line| line.split(' ').count() == 2);
    legacy && stored.lines().collect::<Vec<_>>() == names_and_sizes(now)
}

/// A file's modification time in nanoseconds since the epoch (0 if the
/// platform does not say).
fn mtime_nanos(meta: &fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// A file's inode number (0 where the platform has none).
fn inode_of(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    return std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

/// Commits the conversion staged in `staging`: writes the marker holding
/// `fingerprint` durably and atomically.
pub(super) fn commit(staging: &Path, fingerprint: &str) -> Result<(), Error> {
    let tmp = staging.join(MARKER_TMP);
    let write = || -> std::io::Result<()> {
        let mut file = File::create(&tmp)?;
        file.write_all(fingerprint.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, staging.join(CONVERTED))
    };
    write().map_err(|e| io_error(staging, "writing the conversion's marker", e))?;
    sync_dir(staging)
}

/// Finishes the committed conversion staged in `staging`: retires
/// RocksDB's files (if not done yet), then moves the new database's files
/// up into `path` and removes the staging directory.
pub(super) fn roll_forward(path: &Path, staging: &Path, lock: StagingLock) -> Result<(), Error> {
    let converted = staging.join(CONVERTED);
    if converted.exists() {
        let lock = hold_rocks_lock(path, lock)?;
        if !is_unchanged(path, &converted)? {
            drop(lock);
            let aside = set_aside(path, staging)?;
            return Err(changed_after_commit(path, &aside));
        }
        retire(path, staging)?;
        drop(lock.rocks);
    }
    install(path, staging)?;
    fs::remove_file(staging.join(RETIRED))
        .map_err(|e| io_error(staging, "removing the conversion's marker", e))?;
    fs::remove_dir(staging).map_err(|e| io_error(staging, "removing", e))?;
    sync_dir(path)
}

/// `lock`, holding RocksDB's `LOCK` too if it does not yet (a conversion
/// resumed after a restart): a live RocksDB process is refused.
fn hold_rocks_lock(path: &Path, lock: StagingLock) -> Result<StagingLock, Error> {
    if lock.rocks.is_some() {
        return Ok(lock);
    }
    let rocks = DirLock::exclusive(path).map_err(|e| format_error(path, e))?;
    Ok(lock.holding(rocks))
}

/// Whether RocksDB's files are still the ones the conversion committed in
/// `marker` read. They are not if a RocksDB process wrote to the database
/// after the commit and before the conversion finished (with `CURRENT`
/// moved aside, RocksDB makes a new database there and may purge the
/// tables it finds obsolete).
fn is_unchanged(path: &Path, marker: &Path) -> Result<bool, Error> {
    let stored = fs::read_to_string(marker).map_err(|e| io_error(marker, "reading", e))?;
    Ok(same_files(&stored, &fingerprint(path)?))
}

/// Moves the committed conversion staged in `staging` out of the way, to
/// the first free `alexdb-conversion-set-aside-N` beside it: it is the one
/// complete copy of the database as it was converted, so it is never
/// removed, and the next open no longer rolls it forward. Returns where.
fn set_aside(path: &Path, staging: &Path) -> Result<std::path::PathBuf, Error> {
    let aside = (1u32..)
        .map(|n| path.join(format!("{STAGING_DIR}-set-aside-{n}")))
        .find(|candidate| !candidate.exists())
        .expect("some suffix is free");
    fs::rename(staging, &aside).map_err(|e| io_error(staging, "setting aside", e))?;
    sync_dir(path)?;
    Ok(aside)
}

/// The error of a conversion set aside in `aside` because RocksDB's files
/// at `path` changed after its commit: what is where, and how to go on
/// either way.
fn changed_after_commit(path: &Path, aside: &Path) -> Error {
    let retired = path.join(RETIRED_DIR);
    Error::invalid_argument(format_args!(
        "The RocksDB database at {path} changed after its conversion was committed (a RocksDB \
         process opened it). The converted copy, complete as of the commit, is kept in {aside}: \
         do not delete it until you have decided. To keep the conversion, move RocksDB's files \
         out of {path} and move every file of {aside} but {CONVERTED} into {path}. To convert \
         RocksDB's files as they are now, move any files in {retired} back into {path} where no \
         file of that name is, and open again with conversion enabled",
        path = path.display(),
        aside = aside.display(),
        retired = retired.display(),
    ))
}

/// Moves every file RocksDB owns from `path` into [`RETIRED_DIR`], then
/// renames the marker of the conversion staged in `staging` to say so.
pub(super) fn retire(path: &Path, staging: &Path) -> Result<(), Error> {
    let retired = path.join(RETIRED_DIR);
    fs::create_dir_all(&retired).map_err(|e| io_error(&retired, "creating", e))?;
    sync_dir(path)?;
    for name in file_names(path)? {
        if is_rocksdb_owned(&name) {
            fs::rename(path.join(&name), retired.join(&name))
                .map_err(|e| io_error(&path.join(&name), "moving aside", e))?;
        }
    }
    sync_dir(&retired)?;
    sync_dir(path)?;
    fs::rename(staging.join(CONVERTED), staging.join(RETIRED))
        .map_err(|e| io_error(staging, "renaming the conversion's marker", e))?;
    sync_dir(staging)
}

/// Moves every file of the staged database from `staging` up into `path`.
fn install(path: &Path, staging: &Path) -> Result<(), Error> {
    for name in file_names(staging)? {
        if name != RETIRED && name != MARKER_TMP {
            fs::rename(staging.join(&name), path.join(&name))
                .map_err(|e| io_error(&staging.join(&name), "moving into place", e))?;
        }
    }
    sync_dir(path)
}

/// Syncs every file of `dir` and the directory itself.
pub(super) fn sync_tree(dir: &Path) -> Result<(), Error> {
    for name in file_names(dir)? {
        let file = dir.join(name);
        if file.is_file() {
            // Through a handle opened for writing: Windows flushes no other.
            fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .and_then(|f| f.sync_all())
                .map_err(|e| io_error(&file, "syncing", e))?;
        }
    }
    sync_dir(dir)
}

/// The names of the entries of `dir`.
fn file_names(dir: &Path) -> Result<Vec<String>, Error> {
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, "listing", e))?;
    entries
        .map(|entry| {
            entry
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(|e| io_error(dir, "listing", e))
        })
        .collect()
}

/// Makes the entries of `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    StdFileSystem
        .sync_dir(dir)
        .map_err(|e| io_error(dir, "syncing", e))
}
