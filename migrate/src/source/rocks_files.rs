//! Reading a RocksDB database from its files with the pure-Rust reader
//! (`alexdb-rocksdb-format`): no RocksDB library, nothing written.

use std::path::{Path, PathBuf};

use alexdb_rocksdb_format::RocksDir;

use super::{MARKER_FAMILY, Source, Visit};
use crate::error::{MigrateError, Result};
use crate::keymap::Bounds;
use crate::kind::Kind;
use crate::lock::{self, SourceLock};

/// A RocksDB database read from its files.
pub struct RocksFileSource {
    dir: RocksDir,
    path: PathBuf,
    _lock: SourceLock,
}

impl RocksFileSource {
    /// Opens the RocksDB database at `path` for reading, after checking no
    /// live process holds it; a shared lock keeps writers out while open.
    /// Features the reader does not implement, and a damaged WAL, are
    /// refused here, before anything is copied.
    pub fn open(path: &Path) -> Result<Self> {
        let lock = lock::hold_source(path)?;
        let dir = RocksDir::open(path).map_err(|e| MigrateError::rocks_format(path, e))?;
        // A copy is verified whole: a WAL damaged in the middle is refused,
        // not copied up to the damage as RocksDB's recovery would open it.
        if let Some(damage) = dir.wal_damage() {
            let damaged = alexdb_rocksdb_format::FormatError::Corrupt {
                what: format!("WAL {:06}.log", damage.log),
                detail: damage.detail.clone(),
            };
            return Err(MigrateError::rocks_format(path, damaged));
        }
        Ok(RocksFileSource {
            dir,
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    fn err(&self, e: alexdb_rocksdb_format::FormatError) -> MigrateError {
        MigrateError::rocks_format(&self.path, e)
    }

    fn require(&self, family: &str) -> Result<()> {
        if self.dir.family(family).is_ok() {
            return Ok(());
        }
        Err(MigrateError::MissingColumnFamilies {
            path: self.path.clone(),
            missing: vec![family.to_string()],
            available: self.families(),
        })
    }
}

impl Source for RocksFileSource {
    fn kind(&self) -> Kind {
        Kind::RocksDb
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn families(&self) -> Vec<String> {
        self.dir
            .column_families()
            .iter()
            .map(|f| f.name.clone())
            .filter(|n| n != MARKER_FAMILY)
            .collect()
    }

    fn has_marker_family(&self) -> bool {
        self.dir.family(MARKER_FAMILY).is_ok()
    }

    fn scan(&self, family: &str, bounds: &Bounds, visit: &mut Visit<'_>) -> Result<()> {
        self.require(family)?;
        let iter = self
            .dir
            .iter_from(family, bounds.lower.as_deref(), None)
            .map_err(|e| self.err(e))?;
        for entry in iter {
            let (key, value) = entry.map_err(|e| self.err(e))?;
            if bounds.upper.as_ref().is_some_and(|u| key >= *u) {
                return Ok(());
            }
            if !visit(&key, &value)? {
                return Ok(());
            }
        }
        Ok(())
    }

    fn get(&self, family: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.require(family)?;
        self.dir.get(family, key, None).map_err(|e| self.err(e))
    }

    fn estimate_keys(&self, family: &str) -> u64 {
        self.dir.estimate_keys(family).unwrap_or(0)
    }
}
