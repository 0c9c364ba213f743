//! Reading a RocksDB database, opened read-only as a source or writable as
//! the target of an export.

use std::path::{Path, PathBuf};

use rocksdb::{DB, Options, ReadOptions};

use super::{MARKER_FAMILY, Source, Visit};
use crate::error::{MigrateError, Result};
use crate::keymap::Bounds;
use crate::kind::Kind;
use crate::lock::{self, SourceLock};

/// Read-ahead for scans: migration reads every block once, in order.
const READAHEAD_BYTES: usize = 4 << 20;

/// A RocksDB database being read.
pub struct RocksSource {
    db: DB,
    path: PathBuf,
    _lock: Option<SourceLock>,
}

impl RocksSource {
    /// Opens the RocksDB database at `path` read-only, with every column
    /// family, after checking no live process holds it. Nothing in the
    /// directory is written; a shared lock keeps writers out while open.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let lock = lock::hold_source(path)?;
        let names = list_families(path)?;
        let db = DB::open_cf_for_read_only(&Options::default(), path, &names, false)
            .map_err(|e| MigrateError::rocks(path, e))?;
        Ok(RocksSource {
            db,
            path: path.to_path_buf(),
            _lock: Some(lock),
        })
    }

    /// Wraps a database opened for writing (an export's target).
    pub fn from_writable(db: DB, path: &Path) -> Self {
        RocksSource {
            db,
            path: path.to_path_buf(),
            _lock: None,
        }
    }

    /// The underlying database.
    pub fn db(&self) -> &DB {
        &self.db
    }

    /// The underlying database, mutably (to create and drop families).
    pub fn db_mut(&mut self) -> &mut DB {
        &mut self.db
    }

    fn handle(&self, family: &str) -> Result<&rocksdb::ColumnFamily> {
        self.db
            .cf_handle(family)
            .ok_or_else(|| MigrateError::MissingColumnFamilies {
                path: self.path.clone(),
                missing: vec![family.to_string()],
                available: self.families(),
            })
    }
}

/// The column families of the RocksDB database at `path`.
pub fn list_families(path: &Path) -> Result<Vec<String>> {
    DB::list_cf(&Options::default(), path).map_err(|e| MigrateError::rocks(path, e))
}

impl Source for RocksSource {
    fn kind(&self) -> Kind {
        Kind::RocksDb
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn families(&self) -> Vec<String> {
        let mut names = list_families(&self.path).unwrap_or_default();
        names.retain(|n| n != MARKER_FAMILY);
        names
    }

    fn has_marker_family(&self) -> bool {
        self.db.cf_handle(MARKER_FAMILY).is_some()
    }

    fn scan(&self, family: &str, bounds: &Bounds, visit: &mut Visit<'_>) -> Result<()> {
        let cf = self.handle(family)?;
        let mut opts = ReadOptions::default();
        opts.fill_cache(false);
        opts.set_readahead_size(READAHEAD_BYTES);
        if let Some(upper) = &bounds.upper {
            opts.set_iterate_upper_bound(upper.clone());
        }
        let mut it = self.db.raw_iterator_cf_opt(cf, opts);
        match &bounds.lower {
            Some(lower) => it.seek(lower),
            None => it.seek_to_first(),
        }
        while let Some((key, value)) = it.item() {
            if !visit(key, value)? {
                return Ok(());
            }
            it.next();
        }
        it.status().map_err(|e| MigrateError::rocks(&self.path, e))
    }

    fn get(&self, family: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let cf = self.handle(family)?;
        let value = self
            .db
            .get_pinned_cf(cf, key)
            .map_err(|e| MigrateError::rocks(&self.path, e))?;
        Ok(value.map(|v| v.to_vec()))
    }

    fn estimate_keys(&self, family: &str) -> u64 {
        let Ok(cf) = self.handle(family) else {
            return 0;
        };
        self.db
            .property_int_value_cf(cf, "rocksdb.estimate-num-keys")
            .ok()
            .flatten()
            .unwrap_or(0)
    }
}
