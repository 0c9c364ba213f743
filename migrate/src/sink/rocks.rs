//! A RocksDB database as an export's target.

use std::path::Path;

use rocksdb::{DB, Options, WriteBatch, WriteOptions};

use super::Sink;
use crate::error::{MigrateError, Result};
use crate::kind::{self, Found, Kind};
use crate::marker::{self, PLAN_KEY, Plan, Position};
use crate::source::{MARKER_FAMILY, RocksSource, Source, list_families};

/// An export's RocksDB target.
pub struct RocksSink {
    target: RocksSource,
    current: Option<String>,
    batch: WriteBatch,
}

impl RocksSink {
    /// Opens (creating if missing) the RocksDB database at `path` with the
    /// column families it already has; nothing else is created until the
    /// export starts. Refuses a path holding anything else.
    pub fn open(path: &Path) -> Result<Self> {
        let existing = match kind::detect(path)? {
            Found::Nothing | Found::Partial(Kind::RocksDb) => vec!["default".to_string()],
            Found::Database(Kind::RocksDb) => list_families(path)?,
            Found::Database(other) | Found::Partial(other) => {
                return Err(not_rocksdb(path, &format!("it is an {other} database")));
            }
            Found::Other(reason) => return Err(not_rocksdb(path, &reason)),
        };
        let mut options = Options::default();
        options.create_if_missing(true);
        options.create_missing_column_families(true);
        let db =
            DB::open_cf(&options, path, &existing).map_err(|e| MigrateError::rocks(path, e))?;
        Ok(RocksSink {
            target: RocksSource::from_writable(db, path),
            current: None,
            batch: WriteBatch::default(),
        })
    }

    fn err(&self, e: rocksdb::Error) -> MigrateError {
        MigrateError::rocks(self.target.path(), e)
    }

    /// Creates column family `name` unless it exists.
    fn ensure_family(&mut self, name: &str) -> Result<()> {
        if self.target.db().cf_handle(name).is_some() {
            return Ok(());
        }
        let result = self.target.db_mut().create_cf(name, &Options::default());
        result.map_err(|e| self.err(e))
    }

    /// Writes `batch` (with the WAL, without fsync: it survives a process
    /// crash, and a power loss keeps a prefix of the batches).
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        let mut opts = WriteOptions::default();
        opts.set_sync(sync);
        self.target
            .db()
            .write_opt(batch, &opts)
            .map_err(|e| self.err(e))
    }
}

fn not_rocksdb(path: &Path, reason: &str) -> MigrateError {
    MigrateError::NotADatabase {
        path: path.to_path_buf(),
        expected: "a RocksDB database or an empty directory",
        reason: reason.to_string(),
    }
}

impl Sink for RocksSink {
    fn source(&self) -> &dyn Source {
        &self.target
    }

    fn begin(&mut self, plan: &Plan) -> Result<()> {
        self.ensure_family(MARKER_FAMILY)?;
        let mut batch = WriteBatch::default();
        if let Some(cf) = self.target.db().cf_handle(MARKER_FAMILY) {
            batch.put_cf(cf, PLAN_KEY, marker::encode_plan(plan));
        }
        self.write(batch, true)
    }

    fn open_family(&mut self, family: &str) -> Result<()> {
        self.ensure_family(family)?;
        self.current = Some(family.to_string());
        self.batch.clear();
        Ok(())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) {
        let db = self.target.db();
        if let Some(cf) = self.current.as_deref().and_then(|f| db.cf_handle(f)) {
            self.batch.put_cf(cf, key, value);
        }
    }

    fn commit(&mut self, position: &Position) -> Result<()> {
        let Some(family) = self.current.as_deref() else {
            return Ok(());
        };
        let db = self.target.db();
        if let Some(cf) = db.cf_handle(MARKER_FAMILY) {
            let value = marker::encode_position(position);
            self.batch.put_cf(cf, marker::family_key(family), value);
        }
        let batch = std::mem::take(&mut self.batch);
        self.write(batch, false)
    }

    fn finish(&mut self) -> Result<()> {
        let db = self.target.db();
        db.flush_wal(true).map_err(|e| self.err(e))?;
        if db.cf_handle(MARKER_FAMILY).is_some() {
            let result = self.target.db_mut().drop_cf(MARKER_FAMILY);
            result.map_err(|e| self.err(e))?;
        }
        let db = self.target.db();
        for name in self.target.families() {
            if let Some(cf) = db.cf_handle(&name) {
                db.flush_cf(cf).map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }
}
