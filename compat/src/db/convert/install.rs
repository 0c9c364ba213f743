//! A conversion's commit and roll-forward: the marker that commits it,
//! RocksDB's files moved aside, the staged AlexDB files moved up. Every
//! step is a rename a restart repeats from wherever it stopped.

use std::fs::{self, File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use alexdb_engine::io::{FileSystem, StdFileSystem};
use alexdb_rocksdb_format::lock::DirLock;

use super::detect::{is_rocksdb_file, is_rocksdb_owned, is_wal_file};
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
/// stopped halfway left some), and of the WAL files in `wal_dir` (a
/// `wal_dir` apart from `path`, if any; named `wal/<name>`) and in its own
/// [`RETIRED_DIR`], one `name size mtime inode` line each, sorted: a
/// committed conversion is rolled forward only while they are the files it
/// read. Moving a file aside keeps all four; a RocksDB process that
/// rewrites a file of the same size changes its time or inode.
pub(super) fn fingerprint(path: &Path, wal_dir: Option<&Path>) -> Result<String, Error> {
    let mut files = Vec::new();
    for dir in [path.to_path_buf(), path.join(RETIRED_DIR)] {
        list_files(&dir, "", is_rocksdb_file, &mut files)?;
    }
    if let Some(wal_dir) = wal_dir {
        for dir in [wal_dir.to_path_buf(), wal_dir.join(RETIRED_DIR)] {
            list_files(&dir, "wal/", is_wal_file, &mut files)?;
        }
    }
    files.sort();
    Ok(files.concat())
}

/// Appends to `files` a fingerprint line for each file of `dir` that
/// `pick` selects, its name after `prefix`; nothing for a missing `dir`.
fn list_files(
    dir: &Path,
    prefix: &str,
    pick: fn(&str) -> bool,
    files: &mut Vec<String>,
) -> Result<(), Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(dir, "listing", e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, "listing", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if pick(&name) {
            let meta = entry
                .metadata()
                .map_err(|e| io_error(&entry.path(), "reading metadata", e))?;
            let (len, mtime, inode) = (meta.len(), mtime_nanos(&meta), inode_of(&meta));
            files.push(format!("{prefix}{name} {len} {mtime} {inode}\n"));
        }
    }
    Ok(())
}

/// The file in the staging directory naming the `wal_dir` the conversion
/// read WALs from, when it is apart from the database directory.
const WAL_DIR_FILE: &str = "WAL_DIR";

/// Notes in `staging` that the conversion read its WALs from `wal_dir`, so
/// that the roll-forward checks and retires them whatever the options of
/// the open that finishes it.
pub(super) fn note_wal_dir(staging: &Path, wal_dir: &Path) -> Result<(), Error> {
    let text = wal_dir.to_str().ok_or_else(|| {
        Error::invalid_argument(format_args!(
            "Cannot convert: the wal_dir {} is not UTF-8",
            wal_dir.display()
        ))
    })?;
    fs::write(staging.join(WAL_DIR_FILE), text)
        .map_err(|e| io_error(staging, "writing the conversion's wal_dir", e))
}

/// The `wal_dir` a staged conversion read WALs from, if apart.
fn noted_wal_dir(staging: &Path) -> Result<Option<PathBuf>, Error> {
    match fs::read_to_string(staging.join(WAL_DIR_FILE)) {
        Ok(text) => Ok(Some(PathBuf::from(text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(staging, "reading the conversion's wal_dir", e)),
    }
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
        let wal_dir = noted_wal_dir(staging)?;
        if !is_unchanged(path, wal_dir.as_deref(), &converted)? {
            drop(lock);
            let aside = set_aside(path, staging)?;
            return Err(changed_after_commit(path, wal_dir.as_deref(), &aside));
        }
        retire(path, wal_dir.as_deref(), staging)?;
        drop(lock.rocks);
    }
    install(path, staging)?;
    match fs::remove_file(staging.join(WAL_DIR_FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(io_error(staging, "removing the conversion's wal_dir", e));
        }
        _ => {}
    }
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
fn is_unchanged(path: &Path, wal_dir: Option<&Path>, marker: &Path) -> Result<bool, Error> {
    let stored = fs::read_to_string(marker).map_err(|e| io_error(marker, "reading", e))?;
    Ok(same_files(&stored, &fingerprint(path, wal_dir)?))
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
fn changed_after_commit(path: &Path, wal_dir: Option<&Path>, aside: &Path) -> Error {
    let retired = path.join(RETIRED_DIR);
    let wal_files = match wal_dir {
        Some(wal_dir) => format!(
            " (and any WAL files in {} back into {})",
            wal_dir.join(RETIRED_DIR).display(),
            wal_dir.display()
        ),
        None => String::new(),
    };
    Error::invalid_argument(format_args!(
        "The RocksDB database at {path} changed after its conversion was committed (a RocksDB \
         process opened it). The converted copy, complete as of the commit, is kept in {aside}: \
         do not delete it until you have decided. To keep the conversion, move RocksDB's files \
         out of {path} and move every file of {aside} but {CONVERTED} and {WAL_DIR_FILE} into \
         {path}. To convert RocksDB's files as they are now, move any files in {retired} back \
         into {path} where no file of that name is{wal_files}, and open again with conversion \
         enabled",
        path = path.display(),
        aside = aside.display(),
        retired = retired.display(),
    ))
}

/// Moves every file RocksDB owns from `path` into [`RETIRED_DIR`] (and the
/// WAL files of a `wal_dir` apart into that directory's own), then renames
/// the marker of the conversion staged in `staging` to say so.
pub(super) fn retire(path: &Path, wal_dir: Option<&Path>, staging: &Path) -> Result<(), Error> {
    move_aside(path, is_rocksdb_owned)?;
    if let Some(wal_dir) = wal_dir {
        move_aside(wal_dir, is_wal_file)?;
    }
    fs::rename(staging.join(CONVERTED), staging.join(RETIRED))
        .map_err(|e| io_error(staging, "renaming the conversion's marker", e))?;
    sync_dir(staging)
}

/// Moves every file of the staged database from `staging` up into `path`.
/// Moves the files of `dir` that `pick` selects into its [`RETIRED_DIR`]
/// (on the same file system, so each move is a rename).
fn move_aside(dir: &Path, pick: fn(&str) -> bool) -> Result<(), Error> {
    let retired = dir.join(RETIRED_DIR);
    fs::create_dir_all(&retired).map_err(|e| io_error(&retired, "creating", e))?;
    sync_dir(dir)?;
    for name in file_names(dir)? {
        if pick(&name) {
            fs::rename(dir.join(&name), retired.join(&name))
                .map_err(|e| io_error(&dir.join(&name), "moving aside", e))?;
        }
    }
    sync_dir(&retired)?;
    sync_dir(dir)
}

fn install(path: &Path, staging: &Path) -> Result<(), Error> {
    for name in file_names(staging)? {
        if name != RETIRED && name != MARKER_TMP && name != WAL_DIR_FILE {
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
