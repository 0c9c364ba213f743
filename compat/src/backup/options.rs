//! The backup engine's options and the description of one backup.

use std::path::{Path, PathBuf};

use crate::Error;

/// One backup: when it was taken, its id, and what it holds.
///
/// `size` counts every file the backup needs, including the segments it
/// shares with other backups, so the sizes of all backups add up to more
/// than the backup directory holds, as in RocksDB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupEngineInfo {
    /// When the backup was taken, in seconds since the Unix epoch.
    pub timestamp: i64,
    /// The backup's id; ids only grow.
    pub backup_id: u32,
    /// Bytes of all files of the backup.
    pub size: u64,
    /// Number of files of the backup.
    pub num_files: u32,
}

/// Where a [`super::BackupEngine`] keeps its backups, and how it writes them.
#[derive(Clone, Debug)]
pub struct BackupEngineOptions {
    pub(crate) backup_dir: PathBuf,
    pub(crate) sync: bool,
    max_background_operations: i32,
}

impl BackupEngineOptions {
    /// Options for backups kept in `backup_dir` (created on open).
    pub fn new<P: AsRef<Path>>(backup_dir: P) -> Result<Self, Error> {
        Ok(Self {
            backup_dir: backup_dir.as_ref().to_path_buf(),
            sync: true,
            max_background_operations: 1,
        })
    }

    /// How many file copies may run in parallel. Default: 1. AlexDB copies
    /// one file at a time; the value is kept and otherwise ignored.
    pub fn set_max_background_operations(&mut self, max_background_operations: i32) {
        self.max_background_operations = max_background_operations;
    }

    /// Whether every file written by a backup or restore is fsynced, so a
    /// backup survives a power loss. Default: true.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// The value of the `sync` option.
    pub fn get_sync(&mut self) -> bool {
        self.sync
    }
}

/// How a backup is restored.
#[derive(Clone, Debug, Default)]
pub struct RestoreOptions {
    keep_log_files: bool,
}

impl RestoreOptions {
    /// In RocksDB, keeps the log files already in the WAL directory. AlexDB's
    /// log is its storage and is restored whole; the value is kept and
    /// otherwise ignored. Default: false.
    pub fn set_keep_log_files(&mut self, keep_log_files: bool) {
        self.keep_log_files = keep_log_files;
    }
}
