//! Backups, as rocksdb's `backup` module: [`BackupEngine`] keeps numbered
//! backups of a database in a directory and restores any of them.
//!
//! A backup starts as a checkpoint (see [`crate::checkpoint`]) in
//! `private/<id>/`. Sealed segments never change, so each is then moved to
//! `shared/`, named by its file name, CRC-32C and length, where every later
//! backup that holds the same segment reuses it: backups are incremental by
//! segment. The manifest and the active segment stay private to the backup.
//! `meta/<id>` (see `meta.rs`) lists the backup's files; it is written last
//! and atomically, so a backup without one is an interrupted attempt and is
//! cleaned away on the next open.
//!
//! ```text
//! <backup_dir>/meta/<id>             the backup's file list
//! <backup_dir>/private/<id>/...      its manifest and active segment
//! <backup_dir>/shared/<seg>_<crc>_<len>  sealed segments, shared
//! ```

mod files;
mod meta;
mod options;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use alexdb_engine::CheckpointFile;

use crate::db::DBInner;
use crate::db::errors::IntoRocks;
use crate::{DBCommon, Env, Error, ThreadMode};

use self::files::{io_error, remove_dir_if_exists, shared_name, write_atomically};
use self::meta::{BackupFile, BackupMeta};
pub use self::options::{BackupEngineInfo, BackupEngineOptions, RestoreOptions};

const META_DIR: &str = "meta";
const PRIVATE_DIR: &str = "private";
const SHARED_DIR: &str = "shared";

/// Takes, lists, verifies, purges and restores backups kept in one
/// directory. `Send`, as in rocksdb.
pub struct BackupEngine {
    dir: PathBuf,
    sync: bool,
}

impl BackupEngine {
    /// Opens the backup directory of `opts`, creating it if needed and
    /// removing what an interrupted backup left behind.
    pub fn open(opts: &BackupEngineOptions, _env: &Env) -> Result<Self, Error> {
        let dir = opts.backup_dir.clone();
        for sub in [META_DIR, PRIVATE_DIR, SHARED_DIR] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| io_error(&dir.join(sub), &e))?;
        }
        let engine = Self {
            dir,
            sync: opts.sync,
        };
        engine.remove_unlisted()?;
        Ok(engine)
    }

    /// Backs up `db` as it is now.
    pub fn create_new_backup<T: ThreadMode, D: DBInner>(
        &mut self,
        db: &DBCommon<T, D>,
    ) -> Result<(), Error> {
        self.create_new_backup_flush(db, false)
    }

    /// Backs up `db`. `flush_before_backup` changes nothing: AlexDB has no
    /// memtable, every acknowledged write is in the backup.
    pub fn create_new_backup_flush<T: ThreadMode, D: DBInner>(
        &mut self,
        db: &DBCommon<T, D>,
        _flush_before_backup: bool,
    ) -> Result<(), Error> {
        let id = self.backup_ids()?.last().map_or(1, |last| last + 1);
        let private = self.dir.join(PRIVATE_DIR).join(id.to_string());
        remove_dir_if_exists(&private)?;
        let copied = db.core().engine.checkpoint(&private).rocks()?;
        let files = copied
            .iter()
            .map(|file| self.keep(id, &private, file))
            .collect::<Result<Vec<_>, _>>()?;
        let meta = BackupMeta {
            timestamp: now_seconds(),
            files,
        };
        let path = self.meta_path(id);
        write_atomically(&path, meta.encode().as_bytes(), self.sync)
    }

    /// Moves a sealed segment of the new backup `id` into `shared/` (or
    /// drops it if an identical one is there already) and describes it.
    fn keep(&self, id: u32, private: &Path, file: &CheckpointFile) -> Result<BackupFile, Error> {
        let source = private.join(&file.name);
        let stored = if file.immutable {
            let name = shared_name(&source, &file.name, file.bytes)?;
            let target = self.dir.join(SHARED_DIR).join(&name);
            if target.exists() {
                fs::remove_file(&source).map_err(|e| io_error(&source, &e))?;
            } else {
                fs::rename(&source, &target).map_err(|e| io_error(&target, &e))?;
            }
            format!("{SHARED_DIR}/{name}")
        } else {
            format!("{PRIVATE_DIR}/{id}/{}", file.name)
        };
        Ok(BackupFile {
            stored,
            name: file.name.clone(),
            bytes: file.bytes,
        })
    }

    /// Deletes all but the `num_backups_to_keep` newest backups, and the
    /// shared segments no remaining backup needs.
    pub fn purge_old_backups(&mut self, num_backups_to_keep: usize) -> Result<(), Error> {
        let ids = self.backup_ids()?;
        let purge = ids.len().saturating_sub(num_backups_to_keep);
        for id in &ids[..purge] {
            self.delete_backup(*id)?;
        }
        self.remove_unlisted()
    }

    /// Restores the newest backup: `db_dir` receives the database;
    /// `wal_dir` is accepted for rocksdb's signature (AlexDB's log is its
    /// storage and lives in `db_dir`).
    pub fn restore_from_latest_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        wal_dir: W,
        opts: &RestoreOptions,
    ) -> Result<(), Error> {
        let latest = self
            .backup_ids()?
            .last()
            .copied()
            .ok_or_else(|| Error::not_found("No backups available"))?;
        self.restore_from_backup(db_dir, wal_dir, opts, latest)
    }

    /// Restores backup `backup_id` into `db_dir`, replacing the database
    /// files there. The database must not be open.
    pub fn restore_from_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        _wal_dir: W,
        _opts: &RestoreOptions,
        backup_id: u32,
    ) -> Result<(), Error> {
        let meta = self.read_meta(backup_id)?;
        self.check_files(&meta)?;
        files::restore(&self.dir, &meta.files, db_dir.as_ref(), self.sync)
    }

    /// Checks that every file of backup `backup_id` is present with its
    /// recorded length.
    pub fn verify_backup(&self, backup_id: u32) -> Result<(), Error> {
        let meta = self.read_meta(backup_id)?;
        self.check_files(&meta)
    }

    /// Every backup, oldest first.
    pub fn get_backup_info(&self) -> Vec<BackupEngineInfo> {
        let ids = self.backup_ids().unwrap_or_default();
        ids.into_iter()
            .filter_map(|id| Some((id, self.read_meta(id).ok()?)))
            .map(|(id, meta)| BackupEngineInfo {
                timestamp: meta.timestamp,
                backup_id: id,
                size: meta.files.iter().map(|f| f.bytes).sum(),
                num_files: u32::try_from(meta.files.len()).unwrap_or(u32::MAX),
            })
            .collect()
    }

    fn check_files(&self, meta: &BackupMeta) -> Result<(), Error> {
        for file in &meta.files {
            let path = self.dir.join(&file.stored);
            let len = fs::metadata(&path).map_err(|e| io_error(&path, &e))?.len();
            if len != file.bytes {
                return Err(Error::corruption(format_args!(
                    "File corrupted: {} is {len} bytes, the backup recorded {}",
                    path.display(),
                    file.bytes
                )));
            }
        }
        Ok(())
    }

    fn meta_path(&self, id: u32) -> PathBuf {
        self.dir.join(META_DIR).join(id.to_string())
    }

    fn read_meta(&self, id: u32) -> Result<BackupMeta, Error> {
        let path = self.meta_path(id);
        match fs::read_to_string(&path) {
            Ok(text) => BackupMeta::decode(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::not_found(format_args!("Backup {id} not found")))
            }
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    /// The ids of the complete backups, ascending.
    fn backup_ids(&self) -> Result<Vec<u32>, Error> {
        let dir = self.dir.join(META_DIR);
        let mut ids = files::numeric_entries(&dir)?;
        ids.sort_unstable();
        Ok(ids)
    }

    fn delete_backup(&self, id: u32) -> Result<(), Error> {
        let meta = self.meta_path(id);
        fs::remove_file(&meta).map_err(|e| io_error(&meta, &e))?;
        remove_dir_if_exists(&self.dir.join(PRIVATE_DIR).join(id.to_string()))
    }

    /// Removes private directories without a meta file (interrupted
    /// backups) and shared segments no backup lists.
    fn remove_unlisted(&self) -> Result<(), Error> {
        let ids = self.backup_ids()?;
        let private = self.dir.join(PRIVATE_DIR);
        for entry in files::entry_names(&private)? {
            if entry.parse::<u32>().map_or(true, |id| !ids.contains(&id)) {
                remove_dir_if_exists(&private.join(entry))?;
            }
        }
        let mut listed = std::collections::BTreeSet::new();
        for id in ids {
            for file in self.read_meta(id)?.files {
                listed.insert(file.stored);
            }
        }
        let shared = self.dir.join(SHARED_DIR);
        for entry in files::entry_names(&shared)? {
            if !listed.contains(&format!("{SHARED_DIR}/{entry}")) {
                let path = shared.join(entry);
                fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
            }
        }
        Ok(())
    }
}

/// Seconds since the Unix epoch.
fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
