//! [`Core`]: the open engine database plus what the rocksdb API keeps
//! beside it (which column families exist, their prefix extractors, whether
//! the handle is read-only). Every database operation goes through here.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use alexdb_engine::{
    Compression, Db, FileHold, KeyRange, KeyspaceId, Snapshot, ValueRef, WatchedKey,
};

use crate::comparator::Comparator;
use crate::db::access::Access;
use crate::db::errors::IntoRocks;
use crate::db::key_classes::BatchClasses;
use crate::db::ordered_writes::{self, GateNeed, Translated};
use crate::db::spare_batch;
use crate::db::ttl;
use crate::db::write_locks::PlainWriteLocks;
use crate::family_cursor::{FamilyCursor, SortedEntries};
use crate::merge_operator::MergeOperator;
use crate::options::{SharedCompactionFilter, SharedFilterFactory};
use crate::ordered_keys::{OrderedCursor, OrderedKeys};
use crate::perf::context::count as count_perf;
use crate::perf::metric::PerfMetric;
use crate::pinnable_slice::DBPinnableSlice;
use crate::slice_transform::SliceTransform;
use crate::statistics::{Histogram, Statistics, Ticker};
use crate::timestamped;
use crate::write_batch::{BatchOp, decode_all, single_record_rep_len};
use crate::{
    Error, InfoLogger, LogLevel, Options, ReadOptions, WriteBatchWithTransaction, WriteOptions,
};

/// What the database remembers about one open column family.
#[derive(Clone)]
pub(crate) struct FamilyInfo {
    /// The column family's name.
    pub(crate) name: String,
    /// The prefix extractor of the options it was opened or created with.
    pub(crate) prefix_extractor: Option<SliceTransform>,
    /// The merge operator of those options.
    pub(crate) merge_operator: Option<MergeOperator>,
    /// The compaction filter of those options, run by compaction.
    pub(crate) compaction_filter: Option<SharedCompactionFilter>,
    /// Their compaction filter factory, asked for a filter by each
    /// compaction when there is no compaction filter.
    pub(crate) compaction_filter_factory: Option<SharedFilterFactory>,
    /// The custom key order of those options, if any (iterators follow it).
    pub(crate) comparator: Option<Comparator>,
    /// For a custom comparator without user timestamps: the column
    /// family's keys in its order, which iterators walk (`ordered_keys/`).
    pub(crate) ordered: Option<Arc<OrderedKeys>>,
    /// How long its entries live, in a database opened with a TTL.
    pub(crate) ttl: Option<Duration>,
    /// Whether its options set `disable_auto_compactions` (see
    /// [`Core::apply_auto_compaction`]).
    pub(crate) auto_compactions_disabled: bool,
    /// The levels RocksDB would give it (`num_levels`, 7 unless set), for
    /// the properties that describe files by level (`level_properties.rs`).
    pub(crate) levels: usize,
    /// The level RocksDB would compact its level-0 files into
    /// (`rocksdb.base-level`): the last level with
    /// `level_compaction_dynamic_level_bytes` (the default), else level 1.
    pub(crate) base_level: usize,
}

impl std::fmt::Debug for FamilyInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FamilyInfo")
            .field("name", &self.name)
            .field("prefix_extractor", &self.prefix_extractor)
            .field("compaction_filter", &self.compaction_filter.is_some())
            .field(
                "compaction_filter_factory",
                &self.compaction_filter_factory.is_some(),
            )
            .field("comparator", &self.comparator)
            .field("ttl", &self.ttl)
            .field("merge_operator", &self.merge_operator)
            .field("auto_compactions_disabled", &self.auto_compactions_disabled)
            .field("levels", &self.levels)
            .field("base_level", &self.base_level)
            .finish()
    }
}

impl FamilyInfo {
    /// The comparator of a column family with user timestamps.
    pub(crate) fn timestamps(&self) -> Option<&Comparator> {
        self.comparator.as_ref().filter(|c| c.timestamp_size > 0)
    }

    /// Whether `compact_range` passes the column family's entries through a
    /// filter (its own or one its factory makes).
    pub(crate) fn is_filtered(&self) -> bool {
        self.compaction_filter.is_some() || self.compaction_filter_factory.is_some()
    }

    /// Fails with `Not implemented` for what AlexDB does not run on a
    /// column family with user timestamps: compaction filters and TTL
    /// expiry (both rewrite stored entries, which there are versions).
    pub(crate) fn check_supported(&self) -> Result<(), Error> {
        if self.timestamps().is_some() && (self.is_filtered() || self.ttl.is_some()) {
            return Err(Error::not_supported(format_args!(
                "AlexDB does not run compaction filters or TTL on column family {}, which has \
                 user-defined timestamps",
                self.name
            )));
        }
        Ok(())
    }

    /// Describes column family `id` opened or created with `opts`, and
    /// gives the engine its merge operator.
    pub(crate) fn register(
        engine: &Db,
        id: KeyspaceId,
        name: &str,
        opts: &Options,
    ) -> Result<Self, Error> {
        let merge_operator = opts.merge_operator.clone();
        let levels = opts
            .recorded
            .get("num_levels")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(DEFAULT_LEVELS);
        let dynamic_levels = opts.recorded.get("level_compaction_dynamic_level_bytes") != Some("0");
        engine
            .set_merge_function(
                id,
                merge_operator.as_ref().map(MergeOperator::engine_function),
            )
            .rocks()?;
        if let Some(limit) = merge_stack_limit(opts) {
            engine.set_merge_stack_limit(id, limit).rocks()?;
        }
        engine.set_compression(id, compression_of(opts)).rocks()?;
        let info = Self {
            name: name.to_owned(),
            prefix_extractor: opts.prefix_extractor.clone(),
            merge_operator,
            compaction_filter: opts.compaction_filter.as_ref().map(|f| f.filter.clone()),
            compaction_filter_factory: opts
                .compaction_filter_factory
                .as_ref()
                .map(|f| f.factory.clone()),
            comparator: opts.comparator.clone(),
            ordered: ordered_keys(engine, id, opts.comparator.as_ref())?,
            ttl: None,
            auto_compactions_disabled: opts.recorded.get("disable_auto_compactions") == Some("1"),
            levels,
            base_level: match dynamic_levels {
                true => levels - 1,
                false => levels.min(2) - 1,
            },
        };
        info.check_supported()?;
        Ok(info)
    }
}

/// How the engine's compaction stores a column family's values, from the
/// RocksDB compression the options name: the bottommost level's type if
/// set (the data compaction writes is what RocksDB keeps at its last
/// level), else the last level's of `set_compression_per_level`, else
/// `set_compression_type`'s, else RocksDB's default (Snappy). Every type
/// but `None` is the engine's one codec, LZ4 with a dictionary per output
/// (see `docs/compatibility.md`).
fn compression_of(opts: &Options) -> Compression {
    let named = opts
        .recorded
        .get("bottommost_compression")
        .or(opts.compression_per_level.last().copied())
        .or(opts.recorded.get("compression"))
        .unwrap_or("Snappy");
    match named {
        "NoCompression" => Compression::None,
        _ => Compression::Lz4,
    }
}

/// The ordered key set of a column family with `comparator`, if it needs
/// one (a custom comparator without user timestamps), built from what
/// keyspace `id` of `engine` holds.
fn ordered_keys(
    engine: &Db,
    id: KeyspaceId,
    comparator: Option<&Comparator>,
) -> Result<Option<Arc<OrderedKeys>>, Error> {
    match comparator {
        Some(c) if c.timestamp_size == 0 => {
            Ok(Some(Arc::new(OrderedKeys::build(engine, id, c.clone())?)))
        }
        _ => Ok(None),
    }
}

/// RocksDB's `num_levels` unless the options set it.
pub(crate) const DEFAULT_LEVELS: usize = 7;

/// The open engine database behind a `DB`. Internal to AlexDB.
#[derive(Debug)]
pub struct Core {
    pub(crate) engine: Db,
    /// Read-write, read-only or secondary.
    access: Access,
    families: RwLock<BTreeMap<u32, FamilyInfo>>,
    /// The key locks plain writes take (pessimistic transaction databases).
    plain_write_locks: Option<PlainWriteLocks>,
    /// Where reads and writes are counted, if statistics are enabled.
    statistics: Option<Arc<Statistics>>,
    /// The database identity (`IDENTITY`).
    pub(crate) identity: Vec<u8>,
    /// Opened with a TTL: every put value carries its write time (`ttl.rs`).
    pub(crate) stamped_values: bool,
    /// Where informational messages go (`Options::set_info_logger`).
    pub(crate) logger: Option<InfoLogger>,
    /// One hold per `disable_file_deletions` not yet matched by an
    /// `enable_file_deletions`.
    pub(crate) file_holds: Mutex<Vec<FileHold>>,
    /// Held while a `full_history_ts_low` is raised (`timestamped/`).
    pub(crate) raising_history_low: Mutex<()>,
    /// Whether a column family with user timestamps was ever opened or
    /// created: until then reads and writes skip every timestamp check
    /// (and the lock on the column families those take).
    timestamped_families: AtomicBool,
    /// Whether a column family with a comparator of its own (user
    /// timestamps included) was ever opened or created: until then every
    /// cursor is the engine's bytewise one, made without the lock on the
    /// column families.
    ordered_families: AtomicBool,
    /// The write gate of the column families with a custom comparator
    /// (`ordered_writes.rs`): writes to them hold it shared from adding
    /// their keys until their write is visible, range deletes and sweeps of
    /// their key sets exclusively.
    ordered_gate: RwLock<()>,
}

impl Core {
    pub(crate) fn new(
        engine: Db,
        access: Access,
        families: BTreeMap<u32, FamilyInfo>,
        statistics: Option<Arc<Statistics>>,
        identity: Vec<u8>,
    ) -> Self {
        let timestamped = families.values().any(|f| f.timestamps().is_some());
        let ordered = families.values().any(|f| f.comparator.is_some());
        Self {
            engine,
            access,
            families: RwLock::new(families),
            plain_write_locks: None,
            statistics,
            identity,
            stamped_values: false,
            logger: None,
            file_holds: Mutex::new(Vec::new()),
            raising_history_low: Mutex::new(()),
            timestamped_families: AtomicBool::new(timestamped),
            ordered_families: AtomicBool::new(ordered),
            ordered_gate: RwLock::new(()),
        }
    }

    /// Pauses the engine's background compaction while every open column
    /// family has `disable_auto_compactions` set, and resumes it otherwise.
    /// Column families share AlexDB's segment files, so compaction is the
    /// whole database's: one family that wants it gets it for all.
    pub(crate) fn apply_auto_compaction(&self) {
        let families = self.families();
        let all_disabled = families.values().all(|f| f.auto_compactions_disabled);
        self.engine
            .set_auto_compaction(families.is_empty() || !all_disabled);
    }

    /// Sets column family `id`'s `disable_auto_compactions` from `set_options`
    /// input already checked (the last setting wins), then applies it.
    pub(crate) fn set_auto_compactions_option(&self, id: u32, opts: &[(&str, &str)]) {
        let setting = opts
            .iter()
            .rev()
            .find(|(name, _)| *name == "disable_auto_compactions")
            .map(|(_, value)| matches!(value.trim(), "true" | "1"));
        let Some(disabled) = setting else { return };
        if let Some(f) = self.families_mut().get_mut(&id) {
            f.auto_compactions_disabled = disabled;
        }
        self.apply_auto_compaction();
    }

    /// Applies the compression types among `opts` (as `set_options` gives
    /// them, already validated) to column family `id`: a bottommost type
    /// other than `kDisableCompressionOption` wins over `compression`, as
    /// at open; `kNoCompression` turns compression off, any other type on.
    /// Data already written stays as it is until compaction rewrites it.
    pub(crate) fn set_compression_option(
        &self,
        id: u32,
        opts: &[(&str, &str)],
    ) -> Result<(), Error> {
        let named = |option: &str| {
            opts.iter()
                .rev()
                .find(|(name, _)| *name == option)
                .map(|(_, value)| value.trim())
        };
        let bottommost =
            named("bottommost_compression").filter(|v| *v != "kDisableCompressionOption");
        let Some(named) = bottommost.or(named("compression")) else {
            return Ok(());
        };
        let compression = match named {
            "kNoCompression" => Compression::None,
            _ => Compression::Lz4,
        };
        self.engine
            .set_compression(KeyspaceId(id), compression)
            .rocks()
    }

    /// Notes that column family `info`, just opened or created, may have
    /// user timestamps or a comparator of its own.
    pub(crate) fn note_family(&self, info: &FamilyInfo) {
        if info.timestamps().is_some() {
            self.timestamped_families.store(true, Ordering::Release);
        }
        if info.comparator.is_some() {
            self.ordered_families.store(true, Ordering::Release);
        }
    }

    /// Whether no column family with user timestamps was ever opened.
    fn no_timestamps(&self) -> bool {
        !self.timestamped_families.load(Ordering::Acquire)
    }

    /// Makes every plain write lock its keys in `locks` first.
    pub(crate) fn with_plain_write_locks(mut self, locks: PlainWriteLocks) -> Self {
        self.plain_write_locks = Some(locks);
        self
    }

    /// Bytes at the end of each stored value that are not the user's: the
    /// write time in a database opened with a TTL, else none.
    pub(crate) fn value_trim(&self) -> usize {
        if self.stamped_values {
            ttl::STAMP_BYTES
        } else {
            0
        }
    }

    /// Sends an informational message to the info logger, if one is set.
    pub(crate) fn log(&self, message: &str) {
        if let Some(logger) = &self.logger {
            logger.log(LogLevel::Info, message);
        }
    }

    /// The statistics collector, if statistics are enabled.
    #[inline]
    pub(crate) fn statistics(&self) -> Option<&Statistics> {
        self.statistics.as_deref()
    }

    /// The name of column family `cf` (empty once it is dropped).
    pub(crate) fn family_name(&self, cf: u32) -> String {
        self.families()
            .get(&cf)
            .map(|f| f.name.clone())
            .unwrap_or_default()
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

    /// The merge operator of column family `cf`, if it has one.
    pub(crate) fn merge_operator(&self, cf: u32) -> Option<MergeOperator> {
        self.families()
            .get(&cf)
            .and_then(|f| f.merge_operator.clone())
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

    /// Fails as RocksDB does when a read-only or secondary handle is asked
    /// to write.
    pub(crate) fn check_writable(&self) -> Result<(), Error> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(Error::not_supported(
                "Not supported operation in read only mode.",
            )),
            Access::Secondary => Err(Error::not_supported(
                "Not supported operation in secondary mode.",
            )),
        }
    }

    /// Whether some column family was ever opened with a comparator of
    /// its own (then writes may need the write gate).
    pub(crate) fn has_ordered_families(&self) -> bool {
        self.ordered_families.load(Ordering::Acquire)
    }

    /// How the handle was opened.
    pub(crate) fn access(&self) -> Access {
        self.access
    }

    /// Reads `key` of column family `cf`, at the snapshot of `readopts` if
    /// it names one, without copying (a column family with user timestamps
    /// copies: its stored value is not the user's).
    pub(crate) fn get(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'static>>, Error> {
        if self.read_timestamp(cf, readopts)?.is_some() {
            let value = self.get_copied(cf, key, readopts)?;
            return Ok(value.map(DBPinnableSlice::owned));
        }
        let started = self.clock();
        let value: Option<ValueRef> = match &readopts.snapshot {
            Some(snapshot) => snapshot.get(KeyspaceId(cf), key).rocks()?,
            None => self.engine.get(KeyspaceId(cf), key).rocks()?,
        };
        let value = match value {
            Some(value) => Some(value),
            None => self.read_other_form(cf, key, readopts.snapshot.as_deref(), Snapshot::get)?,
        };
        self.count_read(started, value.as_deref().map(<[u8]>::len));
        Ok(value.map(|v| DBPinnableSlice::new(v, self.value_trim())))
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
        let started = self.clock();
        let trim = self.value_trim();
        let value = match self.read_timestamp(cf, readopts)? {
            Some((comparator, read_ts)) => {
                let versions = timestamped::versions_range(key);
                let cursor = self.raw_cursor(cf, versions, readopts)?;
                timestamped::get(cursor, key, &comparator, &read_ts)?
                    .map(|v| v[..v.len().saturating_sub(trim)].to_vec())
            }
            None => match &readopts.snapshot {
                Some(snapshot) => snapshot.get_pinned(KeyspaceId(cf), key).rocks()?,
                None => self.engine.get_pinned(KeyspaceId(cf), key).rocks()?,
            }
            .map(|v| v[..v.len().saturating_sub(trim)].to_vec())
            .map_or_else(
                || {
                    let read = |s: &Snapshot, ks, k: &[u8]| s.get_pinned(ks, k);
                    let other =
                        self.read_other_form(cf, key, readopts.snapshot.as_deref(), read)?;
                    Ok::<_, Error>(other.map(|v| v[..v.len().saturating_sub(trim)].to_vec()))
                },
                |v| Ok(Some(v)),
            )?,
        };
        self.count_read(started, value.as_deref().map(<[u8]>::len));
        Ok(value)
    }

    /// Counts one point read that found `found` bytes (or nothing). A read
    /// that found its key compared it with the stored key: one user key
    /// comparison (those inside the index are not counted).
    fn count_read(&self, started: Option<Instant>, found: Option<usize>) {
        count_perf(&[
            (PerfMetric::GetReadBytes, found.unwrap_or(0) as u64),
            (
                PerfMetric::UserKeyComparisonCount,
                u64::from(found.is_some()),
            ),
        ]);
        if let (Some(stats), Some(started)) = (self.statistics(), started) {
            stats.add(Ticker::NumberKeysRead, 1);
            stats.add(Ticker::BytesRead, found.unwrap_or(0) as u64);
            stats.record_micros(Histogram::DbGet, started.elapsed());
        }
    }

    /// The time now if statistics are kept (a clock read costs about 25 ns
    /// here, 3% of a get: not paid when nothing records it).
    pub(crate) fn clock(&self) -> Option<Instant> {
        self.statistics().map(|_| Instant::now())
    }

    /// Whether column family `cf` holds `key`, read without copying.
    pub(crate) fn contains(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<bool, Error> {
        if self.read_timestamp(cf, readopts)?.is_some() {
            return Ok(self.get_copied(cf, key, readopts)?.is_some());
        }
        let found = match &readopts.snapshot {
            Some(snapshot) => snapshot.get_pinned(KeyspaceId(cf), key).rocks()?.is_some(),
            None => self
                .engine
                .get_pinned(KeyspaceId(cf), key)
                .rocks()?
                .is_some(),
        };
        if found {
            return Ok(true);
        }
        let read = |s: &Snapshot, ks, k: &[u8]| s.get_pinned(ks, k).map(|v| v.map(|_| ()));
        Ok(self
            .read_other_form(cf, key, readopts.snapshot.as_deref(), read)?
            .is_some())
    }

    /// A cursor over column family `cf` within the bounds of `readopts`, at
    /// its snapshot if it names one (else at this moment), in the column
    /// family's order (see `family_cursor.rs`).
    #[inline]
    pub(crate) fn cursor(&self, cf: u32, readopts: &ReadOptions) -> Result<FamilyCursor, Error> {
        if readopts.timestamp.is_none() && !self.ordered_families.load(Ordering::Acquire) {
            // No family has a comparator (nor timestamps): what
            // `ordered_cursor` would build, without its lookups.
            let range = KeyRange {
                lower: readopts.iterate_lower_bound.clone(),
                upper: readopts.iterate_upper_bound.clone(),
            };
            let cursor = self.raw_cursor(cf, range, readopts)?;
            return Ok(FamilyCursor::bytewise(cursor, self.value_trim()));
        }
        self.ordered_cursor(cf, readopts)
    }

    /// [`Self::cursor`] once some column family has a comparator of its
    /// own or the read names a timestamp.
    fn ordered_cursor(&self, cf: u32, readopts: &ReadOptions) -> Result<FamilyCursor, Error> {
        let (lower, upper) = (&readopts.iterate_lower_bound, &readopts.iterate_upper_bound);
        if let Some((comparator, read_ts)) = self.read_timestamp(cf, readopts)? {
            if readopts.iter_start_ts.is_some() {
                return Err(Error::not_supported(
                    "AlexDB does not implement iter_start_ts (iterating every version)",
                ));
            }
            let cursor = self.raw_cursor(cf, KeyRange::default(), readopts)?;
            let entries = SortedEntries::at_timestamp(
                cursor,
                comparator,
                &read_ts,
                lower.as_deref(),
                upper.as_deref(),
            )?;
            return Ok(FamilyCursor::sorted(entries, self.value_trim()));
        }
        let ordered = self.families().get(&cf).and_then(|f| f.ordered.clone());
        if let Some(keys) = ordered {
            let snapshot = match &readopts.snapshot {
                Some(snapshot) => Arc::clone(snapshot),
                None => Arc::new(self.engine.reader_snapshot()),
            };
            let cursor = OrderedCursor::new(keys, snapshot, lower.clone(), upper.clone());
            return Ok(FamilyCursor::ordered(cursor, self.value_trim()));
        }
        let range = KeyRange {
            lower: lower.clone(),
            upper: upper.clone(),
        };
        let cursor = self.raw_cursor(cf, range, readopts)?;
        Ok(FamilyCursor::bytewise(cursor, self.value_trim()))
    }

    /// An engine cursor over `range` of column family `cf`, at the snapshot
    /// of `readopts` if it names one.
    #[inline]
    fn raw_cursor(
        &self,
        cf: u32,
        range: KeyRange,
        readopts: &ReadOptions,
    ) -> Result<alexdb_engine::Cursor, Error> {
        match &readopts.snapshot {
            Some(snapshot) => snapshot.cursor(KeyspaceId(cf), range).rocks(),
            None => self.engine.cursor(KeyspaceId(cf), range).rocks(),
        }
    }

    /// The comparator and read timestamp of a read of column family `cf`
    /// with `readopts`: `None` for a column family without user timestamps
    /// read without one. Fails as RocksDB does when only one of the two has
    /// a timestamp, when the sizes differ, or when the read timestamp is
    /// below the column family's `full_history_ts_low`.
    pub(crate) fn read_timestamp(
        &self,
        cf: u32,
        readopts: &ReadOptions,
    ) -> Result<Option<(Comparator, Vec<u8>)>, Error> {
        if readopts.timestamp.is_none() && self.no_timestamps() {
            return Ok(None);
        }
        let families = self.families();
        let Some(family) = families.get(&cf) else {
            return Ok(None);
        };
        let comparator = family.timestamps();
        match (comparator, &readopts.timestamp) {
            (None, None) => Ok(None),
            (Some(comparator), Some(read_ts)) => {
                timestamped::check_size(comparator, read_ts)?;
                timestamped::check_read_above(&self.engine, KeyspaceId(cf), comparator, read_ts)?;
                Ok(Some((comparator.clone(), read_ts.clone())))
            }
            (Some(_), None) => Err(Error::invalid_argument(format_args!(
                "cannot call this method on column family {} that enables timestamp",
                family.name
            ))),
            (None, Some(_)) => Err(Error::invalid_argument(format_args!(
                "cannot call this method on column family {} that does not enable timestamp",
                family.name
            ))),
        }
    }

    /// Fails as RocksDB does for a batch written through a handle of a
    /// column family with user timestamps without giving one (`untimed`).
    fn check_timestamps_set(&self, untimed: &[u32]) -> Result<(), Error> {
        if untimed.is_empty() || self.no_timestamps() {
            return Ok(());
        }
        let families = self.families();
        if untimed
            .iter()
            .any(|cf| families.get(cf).is_some_and(|f| f.timestamps().is_some()))
        {
            return Err(Error::invalid_argument(
                "write batch must have timestamp(s) set",
            ));
        }
        Ok(())
    }

    /// Fails with `Not implemented` if a transaction's `ops` write a column
    /// family with user timestamps.
    fn check_untimestamped(&self, ops: &[BatchOp<'_>]) -> Result<(), Error> {
        if self.no_timestamps() {
            return Ok(());
        }
        let families = self.families();
        if ops
            .iter()
            .filter_map(BatchOp::cf)
            .any(|cf| families.get(&cf).is_some_and(|f| f.timestamps().is_some()))
        {
            return Err(Error::not_supported(
                "AlexDB does not implement transactions on column families with user-defined \
                 timestamps",
            ));
        }
        Ok(())
    }

    /// Fails as RocksDB's plain writes (`put`, `delete`, `merge`, ...) do
    /// on column family `cf` if it has user timestamps.
    pub(crate) fn check_no_timestamps(&self, cf: u32) -> Result<(), Error> {
        if self.no_timestamps() {
            return Ok(());
        }
        match self.families().get(&cf) {
            Some(family) if family.timestamps().is_some() => {
                Err(Error::invalid_argument(format_args!(
                    "cannot call this method on column family {} that enables timestamp",
                    family.name
                )))
            }
            _ => Ok(()),
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
    /// On a pessimistic transaction database the batch first locks its keys.
    pub(crate) fn write<const TXN: bool>(
        &self,
        batch: &WriteBatchWithTransaction<TXN>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.write_unless_changed(batch, writeopts, &[])
    }

    /// [`Self::write`], unless a `watched` key was written after its
    /// `since_seq`: then it writes nothing and fails with `Resource busy`.
    pub(crate) fn write_unless_changed<const TXN: bool>(
        &self,
        batch: &WriteBatchWithTransaction<TXN>,
        writeopts: &WriteOptions,
        watched: &[WatchedKey<'_>],
    ) -> Result<(), Error> {
        self.check_writable()?;
        let ops = decode_all(batch.data())?;
        self.check_timestamps_set(batch.untimed_families())?;
        self.write_decoded(&ops, writeopts, watched, batch.size_in_bytes())
    }

    /// Writes one put of `value` to `key` in column family `cf` (a delete
    /// with `None`) as a batch of its own, without encoding a `WriteBatch`
    /// only to decode it again. The caller has checked that the column
    /// family has no user timestamps.
    pub(crate) fn write_one(
        &self,
        cf: u32,
        key: &[u8],
        value: Option<&[u8]>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.check_writable()?;
        let (op, bytes) = match value {
            Some(value) => (
                BatchOp::Put { cf, key, value },
                single_record_rep_len(cf, &[key, value]),
            ),
            None => (
                BatchOp::Delete { cf, key },
                single_record_rep_len(cf, &[key]),
            ),
        };
        self.write_decoded(std::slice::from_ref(&op), writeopts, &[], bytes)
    }

    /// Applies decoded `ops` (`bytes`, their batch's size, for the
    /// statistics), holding the plain-write key locks if the database has
    /// them.
    fn write_decoded(
        &self,
        ops: &[BatchOp<'_>],
        writeopts: &WriteOptions,
        watched: &[WatchedKey<'_>],
        bytes: usize,
    ) -> Result<(), Error> {
        match &self.plain_write_locks {
            Some(locks) => locks.around(ops, || self.apply(ops, writeopts, watched, bytes)),
            None => self.apply(ops, writeopts, watched, bytes),
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
        self.check_no_timestamps(cf)?;
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
        self.check_untimestamped(&ops)?;
        self.apply(&ops, writeopts, watched, batch.size_in_bytes())
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
        bytes: usize,
    ) -> Result<(), Error> {
        let mut need = self.gate_need(ops, &self.families());
        let mut engine_batch = spare_batch::take(ops.len(), op_bytes(ops));
        let outcome = loop {
            let hold = ordered_writes::hold(&self.ordered_gate, need);
            match self.apply_as(&mut engine_batch, ops, writeopts, watched, bytes, need) {
                // A family with a comparator appeared since `need` was
                // decided: nothing was written; take the gate and retry.
                Ok(Some(stronger)) => {
                    drop(hold);
                    need = stronger;
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        spare_batch::give_back(engine_batch);
        if need != GateNeed::None && outcome.is_ok() {
            let due = ordered_writes::due_sweeps(&self.engine, ops, &self.families());
            ordered_writes::sweep(&self.engine, &self.ordered_gate, due);
        }
        outcome
    }

    /// Adds every key the engine holds to the key sets of the column
    /// families with a comparator: a secondary instance's catch-up brings
    /// writes that did not go through this handle.
    pub(crate) fn refill_ordered_keys(&self) -> Result<(), Error> {
        let sets: Vec<Arc<OrderedKeys>> = self
            .families()
            .values()
            .filter_map(|f| f.ordered.clone())
            .collect();
        sets.iter().try_for_each(|keys| keys.refill(&self.engine))
    }

    /// What of the write gate `ops` need, given `families`: none unless a
    /// family with a comparator was ever opened. `families` must be the
    /// snapshot the ops are translated with (the flag is set before such a
    /// family is added, under the families' lock, so a snapshot that holds
    /// one sees the flag).
    fn gate_need(&self, ops: &[BatchOp<'_>], families: &BTreeMap<u32, FamilyInfo>) -> GateNeed {
        match self.ordered_families.load(Ordering::Acquire) {
            true => ordered_writes::need_of(ops, families),
            false => GateNeed::None,
        }
    }

    /// [`Self::apply`] with `engine_batch`, empty, to translate `ops` into,
    /// holding `held` of the write gate. If the families the ops are
    /// translated with need more of the gate than that (a family with a
    /// comparator was created since it was taken), writes nothing and
    /// returns what they need.
    fn apply_as(
        &self,
        engine_batch: &mut alexdb_engine::WriteBatch,
        ops: &[BatchOp<'_>],
        writeopts: &WriteOptions,
        watched: &[WatchedKey<'_>],
        bytes: usize,
        held: GateNeed,
    ) -> Result<Option<GateNeed>, Error> {
        let mut classes = BatchClasses::default();
        {
            let families = self.families();
            let needed = self.gate_need(ops, &families);
            if needed > held {
                return Ok(Some(needed));
            }
            let stamp = self.stamped_values.then(ttl::now_seconds);
            let mut write = OpWriter {
                families: &families,
                engine: &self.engine,
                writeopts,
                stamp,
                held,
            };
            for op in ops {
                if !write.translate(*op, &mut classes, engine_batch)? {
                    // Another form of a key's class is met: nothing was
                    // written; take the gate exclusively and retry.
                    engine_batch.clear();
                    return Ok(Some(GateNeed::Exclusive));
                }
            }
        }
        let engine_opts = alexdb_engine::WriteOptions {
            sync: writeopts.sync(),
            no_slowdown: writeopts.no_slowdown(),
        };
        let started = self.clock();
        self.engine
            .write_unless_changed(engine_batch, &engine_opts, watched)
            .rocks()?;
        self.count_write(started, ops.len(), bytes, writeopts.sync());
        if held == GateNeed::Exclusive {
            classes.drop_retired(&self.engine)?;
        }
        Ok(None)
    }

    /// Counts one applied write batch.
    fn count_write(&self, started: Option<Instant>, ops: usize, bytes: usize, synced: bool) {
        if let (Some(stats), Some(started)) = (self.statistics(), started) {
            stats.add(Ticker::NumberKeysWritten, ops as u64);
            stats.add(Ticker::BytesWritten, bytes as u64);
            stats.add(Ticker::WalFileSynced, u64::from(synced));
            stats.record_micros(Histogram::DbWrite, started.elapsed());
        }
    }
}

/// Adds one decoded rocksdb record to the engine batch. Each record is one
/// engine operation and so consumes one sequence number, as in RocksDB
/// (log data is kept in the log and consumes none, as in RocksDB); a
/// range delete covers earlier writes of the same batch, and one whose end
/// comes before its start fails the batch with RocksDB's error.
/// The bytes of `ops`' keys, values and other operands: about what their
/// engine batch holds (its capacity, so that building it grows nothing).
fn op_bytes(ops: &[BatchOp<'_>]) -> usize {
    ops.iter()
        .map(|op| match *op {
            BatchOp::Put { key, value, .. } | BatchOp::Merge { key, value, .. } => {
                key.len() + value.len()
            }
            BatchOp::Delete { key, .. } | BatchOp::SingleDelete { key, .. } => key.len(),
            BatchOp::DeleteRange { begin, end, .. } => begin.len() + end.len(),
            BatchOp::LogData(blob) => blob.len(),
            BatchOp::Noop => 0,
        })
        .sum()
}

/// What translating one decoded rocksdb record into engine operations
/// needs: the column families, the engine (a merge that meets another
/// form of its key reads the value it merges into), the write's options,
/// the TTL stamp and the hold of the write gate.
struct OpWriter<'f> {
    families: &'f BTreeMap<u32, FamilyInfo>,
    engine: &'f Db,
    writeopts: &'f WriteOptions,
    stamp: Option<u32>,
    held: GateNeed,
}

impl OpWriter<'_> {
    /// Adds `op` to `out`; `false` (with `out` partly written) if it needs
    /// the write gate held exclusively and it is not.
    fn translate<'a>(
        &mut self,
        op: BatchOp<'a>,
        classes: &mut BatchClasses<'a>,
        out: &mut alexdb_engine::WriteBatch,
    ) -> Result<bool, Error> {
        // Without the gate held, no op writes a family with a comparator
        // (the hold was decided from these families): the bytewise
        // translation's own lookup is the only one a plain write pays.
        let ordered = match self.held {
            GateNeed::None => None,
            GateNeed::Shared | GateNeed::Exclusive => op
                .cf()
                .and_then(|cf| self.families.get(&cf))
                .and_then(|f| f.ordered.as_ref()),
        };
        let op = match ordered {
            Some(keys) => {
                match ordered_writes::translate(op, keys, self.engine, self.held, classes, out)? {
                    Translated::Done => return Ok(true),
                    Translated::NeedsExclusive => return Ok(false),
                    Translated::Bytewise(op) => {
                        for pending in classes.take_pending() {
                            translate(pending, self.families, self.writeopts, self.stamp, out)?;
                        }
                        op
                    }
                }
            }
            None => op,
        };
        translate(op, self.families, self.writeopts, self.stamp, out)?;
        Ok(true)
    }
}

fn translate(
    op: BatchOp<'_>,
    families: &BTreeMap<u32, FamilyInfo>,
    writeopts: &WriteOptions,
    stamp: Option<u32>,
    out: &mut alexdb_engine::WriteBatch,
) -> Result<(), Error> {
    let cf = match op {
        BatchOp::LogData(blob) => {
            out.log_data(blob);
            return Ok(());
        }
        BatchOp::Noop => return Ok(()),
        _ => op.cf().unwrap_or_default(),
    };
    let Some(family) = families.get(&cf) else {
        if writeopts.ignore_missing_column_families() {
            return Ok(());
        }
        return Err(Error::invalid_argument(
            "Invalid column family specified in write batch",
        ));
    };
    let ks = KeyspaceId(cf);
    if let Some(comparator) = family.timestamps() {
        let stamp_value = |value: &[u8]| match stamp {
            Some(now) => ttl::stamped(value, now),
            None => value.to_vec(),
        };
        return timestamped::translate(op, ks, comparator.timestamp_size, stamp_value, out);
    }
    match op {
        BatchOp::Put { key, value, .. } => match stamp {
            Some(now) => out.put(ks, key, &ttl::stamped(value, now)),
            None => out.put(ks, key, value),
        },
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

impl Drop for Core {
    fn drop(&mut self) {
        self.log(&format!(
            "AlexDB: closing database {}",
            self.engine.path().display()
        ));
    }
}

/// The merge-stack bound `opts` asks for: RocksDB's `max_successive_merges`
/// when set (saturated to what a stack can hold), else none (the engine's
/// default).
fn merge_stack_limit(opts: &Options) -> Option<u16> {
    let set = opts
        .recorded
        .get("max_successive_merges")
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0)?;
    Some(u16::try_from(set).unwrap_or(u16::MAX))
}
