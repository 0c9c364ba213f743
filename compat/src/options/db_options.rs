//! [`Options`]: database and column family settings, and the ones AlexDB
//! honours.
//!
//! RocksDB's `Options` has about 150 knobs. The ones that change what a
//! program observes are kept here as fields and honoured by the database
//! layer: whether to create a missing database or column family, whether to
//! fail if it exists, the prefix extractor, the merge operator, the
//! comparator, the compaction filter, `use_fsync`, the WAL directory and
//! recovery mode, statistics. The tuning knobs, which only change how RocksDB
//! spends memory, threads and disk, are accepted and documented as no-ops
//! (see `tuning.rs` and `cf_tuning.rs`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::column_family::ColumnFamilyDescriptor;
use crate::compaction_filter::{CompactionFilterFn, Decision};
use crate::compaction_filter_factory::{CompactionFilterFactory, FilterSource};
use crate::comparator::{Comparator, CompareFn, CompareTsFn, CompareWithoutTsFn, TimestampOrder};
use crate::cstr_like::{CStrLike, name_to_string};
use crate::merge_operator::{MergeFn, MergeOperator};
use crate::slice_transform::SliceTransform;
use crate::statistics::{Histogram, HistogramData, Statistics, StatsLevel, Ticker};

use super::cache::Cache;
use super::enums::DBRecoveryMode;
use super::env::Env;
use super::info_logger::{InfoLogSettings, InfoLogger};
use super::recorded::Recorded;
use super::table::BlockBasedOptions;

/// A compaction filter function: `(level, key, value) -> Decision`.
pub(crate) type CompactionFilterBox = Box<dyn FnMut(u32, &[u8], &[u8]) -> Decision + Send>;

/// A compaction filter function shared between clones of the options.
pub(crate) type SharedCompactionFilter = Arc<Mutex<CompactionFilterBox>>;

/// A compaction filter factory shared between clones of the options.
pub(crate) type SharedFilterFactory = Arc<Mutex<Box<dyn FilterSource>>>;

/// A named compaction filter factory, as stored in the options.
#[derive(Clone)]
pub(crate) struct FilterFactory {
    pub(crate) name: String,
    pub(crate) factory: SharedFilterFactory,
}

/// A named compaction filter, as stored in the options.
#[derive(Clone)]
pub(crate) struct CompactionFilter {
    pub(crate) name: String,
    pub(crate) filter: SharedCompactionFilter,
}

/// Database-wide and column-family settings.
///
/// `Options::default()` gives RocksDB's defaults: the database is *not*
/// created if missing, missing column families are *not* created,
/// `paranoid_checks` is on and `max_open_files` is -1.
#[derive(Clone)]
pub struct Options {
    pub(crate) create_if_missing: bool,
    pub(crate) create_missing_column_families: bool,
    pub(crate) error_if_exists: bool,
    /// Whether a read-write open converts a RocksDB database in place.
    pub(crate) convert_rocksdb: bool,
    /// Whether an open builds its index with packed leaves.
    pub(crate) pack_index_at_open: bool,
    /// The engine's memory budget (a write buffer manager's, or
    /// [`Options::set_memory_budget`]).
    pub(crate) memory_budget: Option<alexdb_engine::MemoryBudget>,
    pub(crate) paranoid_checks: bool,
    pub(crate) max_open_files: i32,
    pub(crate) use_fsync: bool,
    pub(crate) manual_wal_flush: bool,
    pub(crate) wal_dir: Option<PathBuf>,
    pub(crate) db_log_dir: Option<PathBuf>,
    pub(crate) wal_recovery_mode: DBRecoveryMode,
    pub(crate) write_buffer_size: usize,
    pub(crate) ttl_secs: u64,
    pub(crate) env: Option<Env>,
    pub(crate) row_cache: Option<Cache>,
    pub(crate) prefix_extractor: Option<SliceTransform>,
    pub(crate) merge_operator: Option<MergeOperator>,
    pub(crate) comparator: Option<Comparator>,
    pub(crate) compaction_filter: Option<CompactionFilter>,
    /// The compaction filter factory, used when no compaction filter is set.
    pub(crate) compaction_filter_factory: Option<FilterFactory>,
    /// Where the database's informational messages go.
    pub(crate) info_logger: Option<InfoLogger>,
    /// The collector every database opened with these options counts into
    /// (shared by clones), once `enable_statistics` is called.
    pub(crate) statistics: Option<Arc<Statistics>>,
    pub(crate) track_and_verify_wals_in_manifest: bool,
    pub(crate) write_dbid_to_manifest: bool,
    /// The block-based table factory set, printed in `LOG`.
    pub(crate) table: Option<BlockBasedOptions>,
    /// `set_compression_per_level`'s names, printed in `LOG`.
    pub(crate) compression_per_level: Vec<&'static str>,
    /// The `LOG` file's level, rolling and retention.
    pub(crate) info_log: InfoLogSettings,
    /// RocksDB tuning values as set, printed in `LOG` (see `Recorded`).
    pub(crate) recorded: Recorded,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            create_if_missing: false,
            create_missing_column_families: false,
            error_if_exists: false,
            convert_rocksdb: false,
            pack_index_at_open: true,
            memory_budget: None,
            paranoid_checks: true,
            max_open_files: -1,
            use_fsync: false,
            manual_wal_flush: false,
            wal_dir: None,
            db_log_dir: None,
            wal_recovery_mode: DBRecoveryMode::PointInTime,
            write_buffer_size: 64 << 20,
            ttl_secs: 0,
            env: None,
            row_cache: None,
            prefix_extractor: None,
            merge_operator: None,
            comparator: None,
            compaction_filter: None,
            compaction_filter_factory: None,
            info_logger: None,
            statistics: None,
            track_and_verify_wals_in_manifest: false,
            write_dbid_to_manifest: true,
            table: None,
            compression_per_level: Vec::new(),
            info_log: InfoLogSettings::default(),
            recorded: Recorded::default(),
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field(
                "create_missing_column_families",
                &self.create_missing_column_families,
            )
            .field("error_if_exists", &self.error_if_exists)
            .field("prefix_extractor", &self.prefix_extractor)
            .field("merge_operator", &self.merge_operator)
            .field("comparator", &self.comparator)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// The options and column families of the existing database at `path`.
    ///
    /// RocksDB reads them from its `OPTIONS` file. AlexDB persists no tuning
    /// options (and RocksDB cannot persist functions such as comparators
    /// either), so it returns default options and one descriptor with
    /// default options for each column family the database has. Fails as
    /// `DB::list_cf` does when there is no database at `path`.
    pub fn load_latest<P: AsRef<Path>>(
        path: P,
        _env: Env,
        _ignore_unknown_options: bool,
        _cache: Cache,
    ) -> Result<(Options, Vec<ColumnFamilyDescriptor>), Error> {
        let names = crate::DB::list_cf(&Options::default(), path)?;
        let cfs = names
            .into_iter()
            .map(|name| ColumnFamilyDescriptor::new(name, Options::default()))
            .collect();
        Ok((Options::default(), cfs))
    }

    /// Returns a copy of these options with the `name=value;...` settings of
    /// `opts_str` applied, in RocksDB's option-string syntax.
    ///
    /// The options AlexDB honours are applied; other recognised names are
    /// accepted and ignored. A clause without `=` is an `Invalid argument`.
    pub fn get_options_from_string<S: AsRef<str>>(
        &mut self,
        opts_str: S,
    ) -> Result<Options, Error> {
        let opts_str = opts_str.as_ref();
        if let Some(at) = opts_str.find('\0') {
            return Err(Error::new(format!(
                "options string must not contain NUL (0x00) bytes: \
                 nul byte found in provided data at position: {at}"
            )));
        }
        let mut options = self.clone();
        for clause in opts_str.split(';') {
            let clause = clause.trim();
            if clause.is_empty() {
                continue;
            }
            let (name, value) = clause.split_once('=').ok_or_else(|| {
                Error::invalid_argument(format_args!(
                    "Mismatched key value pair, '=' expected: {clause}"
                ))
            })?;
            options.apply_option(name.trim(), value.trim())?;
        }
        Ok(options)
    }

    /// Applies one `name=value` setting from an option string.
    fn apply_option(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let flag = || parse_flag(name, value);
        match name {
            "create_if_missing" => self.create_if_missing = flag()?,
            "create_missing_column_families" => self.create_missing_column_families = flag()?,
            "error_if_exists" => self.error_if_exists = flag()?,
            "paranoid_checks" => self.paranoid_checks = flag()?,
            "use_fsync" => self.use_fsync = flag()?,
            "manual_wal_flush" => self.manual_wal_flush = flag()?,
            "max_open_files" => self.max_open_files = parse_number(name, value)?,
            "write_buffer_size" => self.write_buffer_size = parse_number(name, value)?,
            "wal_dir" => self.wal_dir = Some(PathBuf::from(value)),
            _ => {}
        }
        Ok(())
    }

    /// If true, opening a missing database creates it.
    ///
    /// Default: false.
    pub fn create_if_missing(&mut self, create_if_missing: bool) {
        self.create_if_missing = create_if_missing;
    }

    /// If true, opening with column families that do not exist creates them.
    ///
    /// Default: false.
    pub fn create_missing_column_families(&mut self, create_missing_cfs: bool) {
        self.create_missing_column_families = create_missing_cfs;
    }

    /// If true, opening an existing database fails.
    ///
    /// Default: false.
    pub fn set_error_if_exists(&mut self, enabled: bool) {
        self.error_if_exists = enabled;
    }

    /// AlexDB only: if true, a read-write open of a directory that holds a
    /// RocksDB database converts it in place: its data is read from
    /// RocksDB's files (every column family, with the merge operators given
    /// to this open folding any merge operands), written as an AlexDB
    /// database, verified, and only then are RocksDB's files moved into
    /// the subdirectory `rocksdb-original/`, where they stay until the user
    /// removes them. A crash at any point leaves a directory the next open
    /// finishes or restarts. The environment variable
    /// `ALEXDB_CONVERT_ROCKSDB=1` turns this on for every open.
    ///
    /// Default: false (opening a RocksDB directory fails with
    /// `NotSupported`, naming this option).
    pub fn set_convert_rocksdb(&mut self, convert: bool) {
        self.convert_rocksdb = convert;
    }

    /// AlexDB only: if true (the default), an open builds the index of
    /// every column family with packed leaves: about 6 bytes of memory a
    /// key instead of about 20, lookups within about 10% as fast, and a new
    /// key's insert about 3 µs in the index against about 1.3 until its leaf
    /// grows past 2,048 keys and is turned back into full leaves (see
    /// `engine/FORMAT.md`, "The index in memory"). False keeps every leaf
    /// full, for write-heavy work after the open with memory to spare. The
    /// same setting packs the leaves writes made after the open, once a
    /// column family has taken no new key for two seconds.
    pub fn set_pack_index_at_open(&mut self, pack: bool) {
        self.pack_index_at_open = pack;
    }

    /// AlexDB only: bounds what the database holds in memory of its own
    /// (its index, the index heap's free memory, compaction's key filters;
    /// not the mapped data files, which the page cache holds) to `bytes`
    /// (0: unlimited). Over it, a background check every second drops the
    /// filters, packs the index and gives free index memory back; the
    /// index itself is never evicted and writes never stall for it
    /// (`rocksdb.stats` says when a database stays over). The same as a
    /// [`crate::WriteBufferManager`] of that size, not shared.
    pub fn set_memory_budget(&mut self, bytes: usize) {
        self.memory_budget = Some(alexdb_engine::MemoryBudget::new(bytes as u64));
    }

    /// If true, damaged data found on open or read is reported as an error
    /// rather than skipped.
    ///
    /// Default: true.
    pub fn set_paranoid_checks(&mut self, enabled: bool) {
        self.paranoid_checks = enabled;
    }

    /// Limits the files the database keeps open (-1: no limit).
    ///
    /// Default: -1.
    pub fn set_max_open_files(&mut self, nfiles: i32) {
        self.max_open_files = nfiles;
    }

    /// If true, syncs use `fsync` instead of `fdatasync`.
    ///
    /// Default: false.
    pub fn set_use_fsync(&mut self, useit: bool) {
        self.use_fsync = useit;
    }

    /// Whether syncs use `fsync`.
    pub fn get_use_fsync(&self) -> bool {
        self.use_fsync
    }

    /// If true, the write-ahead log is written out only by `DB::flush_wal`.
    ///
    /// Default: false.
    pub fn set_manual_wal_flush(&mut self, is_enabled: bool) {
        self.manual_wal_flush = is_enabled;
    }

    /// Puts the write-ahead log in `path` instead of the database directory.
    pub fn set_wal_dir<P: AsRef<Path>>(&mut self, path: P) {
        self.wal_dir = Some(path.as_ref().to_path_buf());
    }

    /// Puts the info log in `path` instead of the database directory.
    pub fn set_db_log_dir<P: AsRef<Path>>(&mut self, path: P) {
        self.db_log_dir = Some(path.as_ref().to_path_buf());
    }

    /// How recovery treats a damaged write-ahead log on open.
    ///
    /// Default: [`DBRecoveryMode::PointInTime`].
    pub fn set_wal_recovery_mode(&mut self, mode: DBRecoveryMode) {
        self.wal_recovery_mode = mode;
    }

    /// Sets the size of the in-memory write buffer before it is flushed.
    ///
    /// Default: 64 MiB.
    pub fn set_write_buffer_size(&mut self, size: usize) {
        self.write_buffer_size = size;
    }

    /// Sets the time to live of entries, in seconds, for TTL databases and
    /// TTL-based compaction (0: disabled).
    pub fn set_ttl(&mut self, ttl_secs: u64) {
        self.ttl_secs = ttl_secs;
        self.recorded.set("ttl", ttl_secs);
    }

    /// Uses `env` for file access; an in-memory `Env` keeps the database in memory.
    pub fn set_env(&mut self, env: &Env) {
        self.env = Some(env.clone());
    }

    /// Accepted for compatibility; AlexDB has no row cache, so the cache is
    /// only kept alive and otherwise has no effect.
    pub fn set_row_cache(&mut self, cache: &Cache) {
        self.row_cache = Some(cache.clone());
    }

    /// Sets the function that maps keys to prefixes, used by prefix
    /// iteration and `prefix_same_as_start`.
    pub fn set_prefix_extractor(&mut self, prefix_extractor: SliceTransform) {
        self.prefix_extractor = Some(prefix_extractor);
    }

    /// Sets an associative merge operator: `full_merge_fn` is used both to
    /// merge operands into a value and to combine operands.
    pub fn set_merge_operator_associative<F: MergeFn + Clone>(
        &mut self,
        name: impl CStrLike,
        full_merge_fn: F,
    ) {
        let merge = Arc::new(full_merge_fn);
        self.merge_operator = Some(MergeOperator {
            name: name_to_string(name),
            full_merge: merge.clone(),
            partial_merge: merge,
        });
    }

    /// Sets a merge operator with separate full-merge and partial-merge functions.
    pub fn set_merge_operator<F: MergeFn, PF: MergeFn>(
        &mut self,
        name: impl CStrLike,
        full_merge_fn: F,
        partial_merge_fn: PF,
    ) {
        self.merge_operator = Some(MergeOperator {
            name: name_to_string(name),
            full_merge: Arc::new(full_merge_fn),
            partial_merge: Arc::new(partial_merge_fn),
        });
    }

    /// The former name of [`Options::set_merge_operator_associative`].
    pub fn add_merge_operator<F: MergeFn + Clone>(&mut self, name: &str, merge_fn: F) {
        self.set_merge_operator_associative(name, merge_fn);
    }

    /// Sets a compaction filter, called on entries as they are compacted:
    /// in AlexDB, on each key whose newest version is a put in a compaction
    /// (every key of the column family in `compact_range`), as RocksDB does
    /// (see "Compaction filters" in docs/compatibility.md).
    pub fn set_compaction_filter<F>(&mut self, name: impl CStrLike, filter_fn: F)
    where
        F: CompactionFilterFn + Send + 'static,
    {
        let filter: CompactionFilterBox = Box::new(filter_fn);
        self.compaction_filter = Some(CompactionFilter {
            name: name_to_string(name),
            filter: Arc::new(Mutex::new(filter)),
        });
    }

    /// Sets a compaction filter factory: each compaction that holds the
    /// column family's keys (`compact_range`'s, and the background
    /// compactions) asks it for a fresh filter. A compaction filter set with
    /// `set_compaction_filter` takes precedence, as in RocksDB.
    pub fn set_compaction_filter_factory<F>(&mut self, factory: F)
    where
        F: CompactionFilterFactory + Send + 'static,
    {
        self.compaction_filter_factory = Some(FilterFactory {
            name: factory.name().to_string_lossy().into_owned(),
            factory: Arc::new(Mutex::new(Box::new(factory))),
        });
    }

    /// Sets the key order, replacing bytewise order. A database must always
    /// be opened with a comparator of the same name and order.
    pub fn set_comparator(&mut self, name: impl CStrLike, compare_fn: Box<CompareFn>) {
        self.comparator = Some(Comparator {
            name: name_to_string(name),
            compare: Arc::from(compare_fn),
            timestamp_size: 0,
            with_ts: None,
        });
    }

    /// Sets a timestamp-aware key order for keys carrying a
    /// `timestamp_size`-byte user timestamp: the column families opened
    /// with these options take `*_with_ts` writes and reads at a timestamp
    /// (see `DB::put_with_ts` and `ReadOptions::set_timestamp`). Iterators
    /// order user keys by `compare_without_ts_fn`, and a read at timestamp
    /// `T` sees each key's newest version whose timestamp is not after `T`
    /// by `compare_ts_fn`. A `timestamp_size` of 0 makes it a plain
    /// comparator.
    pub fn set_comparator_with_ts(
        &mut self,
        name: impl CStrLike,
        timestamp_size: usize,
        compare_fn: Box<CompareFn>,
        compare_ts_fn: Box<CompareTsFn>,
        compare_without_ts_fn: Box<CompareWithoutTsFn>,
    ) {
        self.comparator = Some(Comparator {
            name: name_to_string(name),
            compare: Arc::from(compare_fn),
            timestamp_size,
            with_ts: (timestamp_size > 0).then(|| TimestampOrder {
                compare_ts: Arc::from(compare_ts_fn),
                compare_without_ts: Arc::from(compare_without_ts_fn),
            }),
        });
    }

    /// Sends the database's informational messages to `logger` (AlexDB's
    /// own: database opened, manual compaction, database closed; it keeps
    /// no `LOG` file).
    pub fn set_info_logger(&mut self, logger: InfoLogger) {
        self.info_logger = Some(logger);
    }

    /// The logger set with [`Self::set_info_logger`], or one that drops
    /// every message.
    pub fn get_info_logger(&self) -> InfoLogger {
        self.info_logger.clone().unwrap_or_else(InfoLogger::discard)
    }

    /// Turns statistics collection on: databases opened with these options
    /// (or a clone of them) count into one shared collector, read with
    /// [`Options::get_statistics`], [`Options::get_ticker_count`] and
    /// [`Options::get_histogram_data`].
    pub fn enable_statistics(&mut self) {
        self.statistics.get_or_insert_with(Default::default);
    }

    /// The statistics in RocksDB's text format (one `<ticker> COUNT : <n>`
    /// line per ticker, then one `<histogram> P50 : ... SUM : <n>` line per
    /// histogram), or `None` when statistics are not enabled.
    pub fn get_statistics(&self) -> Option<String> {
        self.statistics.as_ref().map(|s| s.report())
    }

    /// The count of `ticker` (0 when statistics are not enabled).
    pub fn get_ticker_count(&self, ticker: Ticker) -> u64 {
        self.statistics.as_ref().map_or(0, |s| s.ticker(ticker))
    }

    /// The summary of `histogram` (empty when statistics are not enabled).
    pub fn get_histogram_data(&self, histogram: Histogram) -> HistogramData {
        self.statistics
            .as_ref()
            .map_or_else(HistogramData::default, |s| s.histogram(histogram))
    }

    /// Accepted for compatibility: AlexDB's counters are cheap enough to
    /// keep at every level, so the level changes nothing.
    pub fn set_statistics_level(&self, _level: StatsLevel) {}

    /// Records whether synced WAL files are tracked (AlexDB always checks
    /// its logs on open).
    pub fn set_track_and_verify_wals_in_manifest(&mut self, val: bool) {
        self.track_and_verify_wals_in_manifest = val;
    }

    /// The value given to [`Options::set_track_and_verify_wals_in_manifest`].
    pub fn get_track_and_verify_wals_in_manifest(&self) -> bool {
        self.track_and_verify_wals_in_manifest
    }

    /// Records where the database id is kept (AlexDB keeps its own).
    ///
    /// Default: true.
    pub fn set_write_dbid_to_manifest(&mut self, val: bool) {
        self.write_dbid_to_manifest = val;
    }

    /// The value given to [`Options::set_write_dbid_to_manifest`].
    pub fn get_write_dbid_to_manifest(&self) -> bool {
        self.write_dbid_to_manifest
    }
}

/// Parses a boolean option value as RocksDB does (`true`/`false`, `1`/`0`).
fn parse_flag(name: &str, value: &str) -> Result<bool, Error> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Error::invalid_argument(format_args!(
            "Error parsing {name}:{value}"
        ))),
    }
}

/// Parses a numeric option value.
fn parse_number<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, Error> {
    value
        .parse()
        .map_err(|_| Error::invalid_argument(format_args!("Error parsing {name}:{value}")))
}
