//! An AlexDB database as a copy's target.

use std::path::Path;
use std::sync::Arc;

use alexdb_engine::io::FileSystem;
use alexdb_engine::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

use super::Sink;
use crate::error::{MigrateError, Result};
use crate::kind::{self, Found, Kind};
use crate::marker::{self, PLAN_KEY, Plan, Position};
use crate::source::{AlexSource, MARKER_FAMILY, Source};

/// A copy's AlexDB target.
pub struct AlexSink {
    target: AlexSource,
    current: Option<(String, KeyspaceId)>,
    marker: Option<KeyspaceId>,
    batch: WriteBatch,
}

impl AlexSink {
    /// Opens (creating if missing) the AlexDB database at `path`. Refuses a
    /// path holding anything else. `file_system` replaces the engine's file
    /// system seam (tests inject faults through it).
    pub fn open(path: &Path, file_system: Option<Arc<dyn FileSystem>>) -> Result<Self> {
        match kind::detect(path)? {
            Found::Nothing | Found::Partial(Kind::AlexDb) | Found::Database(Kind::AlexDb) => {}
            Found::Database(other) | Found::Partial(other) => {
                return Err(not_alexdb(path, &format!("it is a {other} database")));
            }
            Found::Other(reason) => return Err(not_alexdb(path, &reason)),
        }
        let mut options = Options::default();
        if let Some(fs) = file_system {
            options.file_system = fs;
        }
        let db = Db::open(path, options).map_err(|e| MigrateError::engine(path, e))?;
        let marker = db.keyspace(MARKER_FAMILY);
        Ok(AlexSink {
            target: AlexSource::from_db(db, path),
            current: None,
            marker,
            batch: WriteBatch::new(),
        })
    }

    fn db(&self) -> &Db {
        self.target.db()
    }

    fn err(&self, e: alexdb_engine::Error) -> MigrateError {
        MigrateError::engine(self.target.path(), e)
    }
}

fn not_alexdb(path: &Path, reason: &str) -> MigrateError {
    MigrateError::NotADatabase {
        path: path.to_path_buf(),
        expected: "an AlexDB database or an empty directory",
        reason: reason.to_string(),
    }
}

impl Sink for AlexSink {
    fn source(&self) -> &dyn Source {
        &self.target
    }

    fn begin(&mut self, plan: &Plan) -> Result<()> {
        let ks = self
            .db()
            .create_keyspace(MARKER_FAMILY)
            .map_err(|e| self.err(e))?;
        self.marker = Some(ks);
        let mut batch = WriteBatch::new();
        batch.put(ks, PLAN_KEY, &marker::encode_plan(plan));
        self.db()
            .write(&batch, &WriteOptions::synced())
            .map_err(|e| self.err(e))
    }

    fn open_family(&mut self, family: &str) -> Result<()> {
        let ks = self.db().create_keyspace(family).map_err(|e| self.err(e))?;
        self.current = Some((family.to_string(), ks));
        self.batch.clear();
        Ok(())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) {
        if let Some((_, ks)) = &self.current {
            self.batch.put(*ks, key, value);
        }
    }

    fn commit(&mut self, position: &Position) -> Result<()> {
        let (Some((family, _)), Some(marker_ks)) = (&self.current, self.marker) else {
            return Ok(());
        };
        let value = marker::encode_position(position);
        self.batch
            .put(marker_ks, &marker::family_key(family), &value);
        let result = self.db().write(&self.batch, &WriteOptions::default());
        self.batch.clear();
        result.map_err(|e| self.err(e))
    }

    fn finish(&mut self) -> Result<()> {
        self.db().sync().map_err(|e| self.err(e))?;
        if self.marker.take().is_some() {
            self.db()
                .drop_keyspace(MARKER_FAMILY)
                .map_err(|e| self.err(e))?;
        }
        self.db().sync().map_err(|e| self.err(e))
    }
}
