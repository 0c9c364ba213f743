//! Reading an AlexDB database through the engine.

use std::path::{Path, PathBuf};

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options};

use super::{MARKER_FAMILY, Source, Visit};
use crate::error::{MigrateError, Result};
use crate::keymap::Bounds;
use crate::kind::Kind;

/// An AlexDB database being read (or written, as a copy's target).
pub struct AlexSource {
    db: Db,
    path: PathBuf,
}

impl AlexSource {
    /// Opens the existing AlexDB database at `path` as a source.
    ///
    /// The engine has no read-only mode: it takes its exclusive lock (so a
    /// live holder is reported as [`MigrateError::InUse`]) and runs
    /// recovery, which may cut a torn tail as any open would. Background
    /// compaction is off, so the open rewrites nothing else.
    pub fn open(path: &Path) -> Result<Self> {
        let options = Options {
            create_if_missing: false,
            background_compaction: false,
            ..Options::default()
        };
        let db = Db::open(path, options).map_err(|e| MigrateError::engine(path, e))?;
        Ok(Self::from_db(db, path))
    }

    /// Wraps an open database.
    pub fn from_db(db: Db, path: &Path) -> Self {
        AlexSource {
            db,
            path: path.to_path_buf(),
        }
    }

    /// The underlying database.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The id of keyspace `family`.
    pub fn keyspace(&self, family: &str) -> Result<KeyspaceId> {
        self.db
            .keyspace(family)
            .ok_or_else(|| MigrateError::MissingColumnFamilies {
                path: self.path.clone(),
                missing: vec![family.to_string()],
                available: self.families(),
            })
    }

    fn engine_err(&self, e: alexdb_engine::Error) -> MigrateError {
        MigrateError::engine(&self.path, e)
    }
}

impl Source for AlexSource {
    fn kind(&self) -> Kind {
        Kind::AlexDb
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn families(&self) -> Vec<String> {
        let mut names = self.db.keyspace_names();
        names.retain(|n| n != MARKER_FAMILY);
        names
    }

    fn has_marker_family(&self) -> bool {
        self.db.keyspace(MARKER_FAMILY).is_some()
    }

    fn scan(&self, family: &str, bounds: &Bounds, visit: &mut Visit<'_>) -> Result<()> {
        let ks = self.keyspace(family)?;
        let range = KeyRange {
            lower: bounds.lower.clone(),
            upper: bounds.upper.clone(),
        };
        let mut cursor = self.db.cursor(ks, range).map_err(|e| self.engine_err(e))?;
        cursor.seek_to_first();
        while let Some(entry) = cursor.entry() {
            if !visit(entry.key(), entry.value())? {
                return Ok(());
            }
            cursor.forward();
        }
        // A stopped cursor hands its error out through `Iterator::next`.
        match cursor.next() {
            Some(Err(e)) => Err(self.engine_err(e)),
            _ => Ok(()),
        }
    }

    fn get(&self, family: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let ks = self.keyspace(family)?;
        self.db.get_copied(ks, key).map_err(|e| self.engine_err(e))
    }

    fn estimate_keys(&self, family: &str) -> u64 {
        self.keyspace(family)
            .ok()
            .and_then(|ks| self.db.live_keys(ks).ok())
            .unwrap_or(0)
    }
}
