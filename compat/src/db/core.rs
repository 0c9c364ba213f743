//! [`Core`]: the open engine database plus what the rocksdb API keeps
//! beside it (which column families exist, their prefix extractors, whether
//! the handle is read-only). Every database operation goes through here.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use alexdb_engine::{Cursor, Db, KeyRange, KeyspaceId, ValueRef};

use crate::db::errors::IntoRocks;
use crate::slice_transform::SliceTransform;
use crate::write_batch::{BatchOp, decode_all};
use crate::{Error, ReadOptions, WriteBatch, WriteOptions};

/// What the database remembers about one open column family.
#[derive(Clone, Debug)]
pub(crate) struct FamilyInfo {
    /// The column family's name.
    pub(crate) name: String,
    /// The prefix extractor of the options it was opened or created with.
    pub(crate) prefix_extractor: Option<SliceTransform>,
}

/// The open engine database behind a `DB`. Internal to AlexDB.
#[derive(Debug)]
pub struct Core {
    pub(crate) engine: Db,
    read_only: bool,
    families: RwLock<BTreeMap<u32, FamilyInfo>>,
}

impl Core {
    pub(crate) fn new(engine: Db, read_only: bool, families: BTreeMap<u32, FamilyInfo>) -> Self {
        Self {
            engine,
            read_only,
            families: RwLock::new(families),
        }
    }

    /// The column families, by id.
    pub(crate) fn families(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<u32, FamilyInfo>> {
        self.families.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The column families, for `create_cf`/`drop_cf` to change.
    pub(crate) fn families_mut(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, BTreeMap<u32, FamilyInfo>> {
        self.families
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The prefix extractor of column family `cf`, if it has one.
    pub(crate) fn prefix_extractor(&self, cf: u32) -> Option<SliceTransform> {
        self.families()
            .get(&cf)
            .and_then(|f| f.prefix_extractor.clone())
    }

    /// Fails as RocksDB does when a read-only handle is asked to write.
    pub(crate) fn check_writable(&self) -> Result<(), Error> {
        if self.read_only {
            return Err(Error::not_supported(
                "Not supported operation in read only mode.",
            ));
        }
        Ok(())
    }

    /// Reads `key` of column family `cf`, at the snapshot of `readopts` if
    /// it names one, without copying.
    pub(crate) fn get(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<Option<ValueRef>, Error> {
        match &readopts.snapshot {
            Some(snapshot) => snapshot.get(KeyspaceId(cf), key).rocks(),
            None => self.engine.get(KeyspaceId(cf), key).rocks(),
        }
    }

    /// Reads `key` from column family `cf` into an owned buffer. Unlike
    /// [`Self::get`] it holds no reference count on the segment while it
    /// copies, so concurrent readers share no cache line.
    pub(crate) fn get_copied(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        let value = match &readopts.snapshot {
            Some(snapshot) => snapshot.get_pinned(KeyspaceId(cf), key).rocks()?,
            None => self.engine.get_pinned(KeyspaceId(cf), key).rocks()?,
        };
        Ok(value.map(|v| v.to_vec()))
    }

    /// Whether column family `cf` holds `key`, read without copying.
    pub(crate) fn contains(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<bool, Error> {
        let found = match &readopts.snapshot {
            Some(snapshot) => snapshot.get_pinned(KeyspaceId(cf), key).rocks()?.is_some(),
            None => self
                .engine
                .get_pinned(KeyspaceId(cf), key)
                .rocks()?
                .is_some(),
        };
        Ok(found)
    }

    /// A cursor over column family `cf` within the bounds of `readopts`, at
    /// its snapshot if it names one (else at this moment).
    pub(crate) fn cursor(&self, cf: u32, readopts: &ReadOptions) -> Result<Cursor, Error> {
        let range = KeyRange {
            lower: readopts.iterate_lower_bound.clone(),
            upper: readopts.iterate_upper_bound.clone(),
        };
        match &readopts.snapshot {
            Some(snapshot) => snapshot.cursor(KeyspaceId(cf), range).rocks(),
            None => self.engine.cursor(KeyspaceId(cf), range).rocks(),
        }
    }

    /// `readopts` pinned to one point in time: itself if it names a
    /// snapshot, else a copy reading at a snapshot taken now. Multi-key
    /// reads use it so that every key is read at one sequence number, as
    /// RocksDB's `MultiGet` does (no half-applied batch is ever seen).
    pub(crate) fn at_one_point<'r>(&self, readopts: &'r ReadOptions) -> Cow<'r, ReadOptions> {
        match readopts.snapshot {
            Some(_) => Cow::Borrowed(readopts),
            None => {
                let mut pinned = readopts.clone();
                pinned.snapshot = Some(self.snapshot());
                Cow::Owned(pinned)
            }
        }
    }

    /// A frozen view of the whole database.
    pub(crate) fn snapshot(&self) -> Arc<alexdb_engine::Snapshot> {
        Arc::new(self.engine.snapshot())
    }

    /// Applies a rocksdb write batch atomically.
    ///
    /// The batch is decoded and checked first (a malformed batch fails with
    /// RocksDB's `Corruption` message and writes nothing). A write to a
    /// column family that does not exist fails the whole batch, unless
    /// `ignore_missing_column_families` is set, in which case it is skipped.
    pub(crate) fn write(&self, batch: &WriteBatch, writeopts: &WriteOptions) -> Result<(), Error> {
        self.check_writable()?;
        let ops = decode_all(batch.data())?;
        let mut engine_batch = alexdb_engine::WriteBatch::new();
        {
            let families = self.families();
            for op in ops {
                translate(op, &families, writeopts, &mut engine_batch)?;
            }
        }
        let engine_opts = alexdb_engine::WriteOptions {
            sync: writeopts.sync(),
        };
        self.engine.write(&engine_batch, &engine_opts).rocks()
    }
}

/// Adds one decoded rocksdb record to the engine batch. Each record is one
/// engine operation and so consumes one sequence number, as in RocksDB; a
/// range delete covers earlier writes of the same batch, and one whose end
/// comes before its start fails the batch with RocksDB's error.
fn translate(
    op: BatchOp<'_>,
    families: &BTreeMap<u32, FamilyInfo>,
    writeopts: &WriteOptions,
    out: &mut alexdb_engine::WriteBatch,
) -> Result<(), Error> {
    let cf = match op {
        BatchOp::Put { cf, .. }
        | BatchOp::Delete { cf, .. }
        | BatchOp::SingleDelete { cf, .. }
        | BatchOp::Merge { cf, .. }
        | BatchOp::DeleteRange { cf, .. } => cf,
        BatchOp::LogData(_) | BatchOp::Noop => return Ok(()),
    };
    if !families.contains_key(&cf) {
        if writeopts.ignore_missing_column_families() {
            return Ok(());
        }
        return Err(Error::invalid_argument(
            "Invalid column family specified in write batch",
        ));
    }
    let ks = KeyspaceId(cf);
    match op {
        BatchOp::Put { key, value, .. } => out.put(ks, key, value),
        BatchOp::Delete { key, .. } | BatchOp::SingleDelete { key, .. } => out.delete(ks, key),
        BatchOp::DeleteRange { begin, end, .. } => {
            // RocksDB refuses a range whose end sorts before its start (an
            // empty range, `begin == end`, is fine and deletes nothing).
            // It does so while applying the batch, after the records before
            // it took effect, and then refuses every later write; AlexDB
            // refuses the whole batch up front and stays writable.
            if begin > end {
                return Err(Error::invalid_argument("end key comes before start key"));
            }
            out.delete_range(ks, begin, end);
        }
        BatchOp::Merge { .. } => {
            return Err(Error::not_supported(
                "AlexDB does not implement merge operators yet",
            ));
        }
        BatchOp::LogData(_) | BatchOp::Noop => {}
    }
    Ok(())
}
