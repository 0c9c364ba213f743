//! [`Core`]: the open engine database plus what the rocksdb API keeps
//! beside it (which column families exist, their prefix extractors, whether
//! the handle is read-only). Every database operation goes through here.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use alexdb_engine::{Cursor, Db, KeyRange, KeyspaceId, ValueRef, WatchedKey};

use crate::db::errors::IntoRocks;
use crate::db::write_locks::PlainWriteLocks;
use crate::merge_operator::MergeOperator;
use crate::slice_transform::SliceTransform;
use crate::write_batch::{BatchOp, decode_all};
use crate::{Error, Options, ReadOptions, WriteBatchWithTransaction, WriteOptions};

/// What the database remembers about one open column family.
#[derive(Clone, Debug)]
pub(crate) struct FamilyInfo {
    /// The column family's name.
    pub(crate) name: String,
    /// The prefix extractor of the options it was opened or created with.
    pub(crate) prefix_extractor: Option<SliceTransform>,
    /// The merge operator of those options.
    pub(crate) merge_operator: Option<MergeOperator>,
}

impl FamilyInfo {
    /// Describes column family `id` opened or created with `opts`, and
    /// gives the engine its merge operator.
    pub(crate) fn register(
        engine: &Db,
        id: KeyspaceId,
        name: &str,
        opts: &Options,
    ) -> Result<Self, Error> {
        let merge_operator = opts.merge_operator.clone();
        engine
            .set_merge_function(
                id,
                merge_operator.as_ref().map(MergeOperator::engine_function),
            )
            .rocks()?;
        Ok(Self {
            name: name.to_owned(),
            prefix_extractor: opts.prefix_extractor.clone(),
            merge_operator,
        })
    }
}

/// The open engine database behind a `DB`. Internal to AlexDB.
#[derive(Debug)]
pub struct Core {
    pub(crate) engine: Db,
    read_only: bool,
    families: RwLock<BTreeMap<u32, FamilyInfo>>,
    /// The key locks plain writes take (pessimistic transaction databases).
    plain_write_locks: Option<PlainWriteLocks>,
}

impl Core {
    pub(crate) fn new(engine: Db, read_only: bool, families: BTreeMap<u32, FamilyInfo>) -> Self {
        Self {
            engine,
            read_only,
            families: RwLock::new(families),
            plain_write_locks: None,
        }
    }

    /// Makes every plain write lock its keys in `locks` first.
    pub(crate) fn with_plain_write_locks(mut self, locks: PlainWriteLocks) -> Self {
        self.plain_write_locks = Some(locks);
        self
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

    /// Fails as `DB::merge` does in RocksDB when column family `cf` has no
    /// merge operator.
    pub(crate) fn check_merge_operator(&self, cf: u32) -> Result<(), Error> {
        match self.families().get(&cf) {
            Some(f) if f.merge_operator.is_none() => Err(Error::not_supported(
                "Provide a merge_operator when opening DB",
            )),
            _ => Ok(()),
        }
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
    /// On a pessimistic transaction database the batch first locks its keys.
    pub(crate) fn write<const TXN: bool>(
        &self,
        batch: &WriteBatchWithTransaction<TXN>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.check_writable()?;
        let ops = decode_all(batch.data())?;
        match &self.plain_write_locks {
            Some(locks) => locks.around(&ops, || self.apply(&ops, writeopts, &[])),
            None => self.apply(&ops, writeopts, &[]),
        }
    }

    /// Removes the keys in `[from, to)` from column family `cf`.
    pub(crate) fn delete_range(
        &self,
        cf: u32,
        from: &[u8],
        to: &[u8],
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        let mut batch = crate::WriteBatch::default();
        batch.delete_range_in(cf, from, to);
        self.write(&batch, writeopts)
    }

    /// Applies a transaction's batch atomically, unless a `watched` key was
    /// written after its `since_seq` (then it fails with `Resource busy`
    /// and writes nothing). Takes no key lock: a pessimistic transaction
    /// holds its own.
    pub(crate) fn commit(
        &self,
        batch: &WriteBatchWithTransaction<true>,
        writeopts: &WriteOptions,
        watched: &[WatchedKey<'_>],
    ) -> Result<(), Error> {
        self.check_writable()?;
        let ops = decode_all(batch.data())?;
        self.apply(&ops, writeopts, watched)
    }

    /// Fails with `Resource busy` if a `watched` key was written after its
    /// `since_seq`.
    pub(crate) fn check_unchanged(&self, watched: &[WatchedKey<'_>]) -> Result<(), Error> {
        self.engine.check_unchanged(watched).rocks()
    }

    fn apply(
        &self,
        ops: &[BatchOp<'_>],
        writeopts: &WriteOptions,
        watched: &[WatchedKey<'_>],
    ) -> Result<(), Error> {
        let mut engine_batch = alexdb_engine::WriteBatch::new();
        {
            let families = self.families();
            for op in ops {
                translate(*op, &families, writeopts, &mut engine_batch)?;
            }
        }
        let engine_opts = alexdb_engine::WriteOptions {
            sync: writeopts.sync(),
        };
        self.engine
            .write_unless_changed(&engine_batch, &engine_opts, watched)
            .rocks()
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
        BatchOp::Merge { key, value, .. } => {
            if families
                .get(&cf)
                .is_some_and(|f| f.merge_operator.is_none())
            {
                return Err(Error::invalid_argument(
                    "Merge requires `ColumnFamilyOptions::merge_operator != nullptr`",
                ));
            }
            out.merge(ks, key, value);
        }
        BatchOp::LogData(_) | BatchOp::Noop => {}
    }
    Ok(())
}
