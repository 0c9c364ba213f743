//! Flushes, compaction, properties and the maintenance calls that mean
//! little to AlexDB.
//!
//! AlexDB has no memtable: every acknowledged write is already in its log
//! segment. `flush` therefore makes the log durable (an `fdatasync`), and
//! `compact_range` runs the engine's compaction, which rewrites whole
//! segments regardless of the key range.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::PoisonError;

use alexdb_engine::{KeyspaceId, Stats};

use super::access::Access;
use super::core::DEFAULT_LEVELS;
use super::errors::IntoRocks;
use super::level_properties::{FamilyFiles, level_suffix};
use super::{DBCommon, DBInner, ThreadMode};
use crate::{
    AsColumnFamilyRef, CStrLike, CompactOptions, Error, FlushOptions, WaitForCompactOptions,
};

/// A data file of the database, as `live_files` reports it.
#[derive(Debug, Clone)]
pub struct LiveFile {
    /// The column family the file belongs to.
    pub column_family_name: String,
    /// The file name.
    pub name: String,
    /// The file size in bytes.
    pub size: usize,
    /// The LSM level of the file.
    pub level: i32,
    /// The smallest key in the file.
    pub start_key: Option<Vec<u8>>,
    /// The largest key in the file.
    pub end_key: Option<Vec<u8>>,
    /// Entries in the file.
    pub num_entries: u64,
    /// Deletions in the file.
    pub num_deletions: u64,
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Makes every acknowledged write durable (AlexDB has no memtable to
    /// write out; see the module notes).
    pub fn flush(&self) -> Result<(), Error> {
        self.flush_opt(&FlushOptions::default())
    }

    /// [`Self::flush`]; the options change nothing.
    pub fn flush_opt(&self, _flushopts: &FlushOptions) -> Result<(), Error> {
        self.core().engine.sync().rocks()
    }

    /// [`Self::flush`]: the log is shared by every column family.
    pub fn flush_cf(&self, cf: &impl AsColumnFamilyRef) -> Result<(), Error> {
        self.flush_cf_opt(cf, &FlushOptions::default())
    }

    /// [`Self::flush`]: the log is shared by every column family.
    pub fn flush_cf_opt(
        &self,
        _cf: &impl AsColumnFamilyRef,
        flushopts: &FlushOptions,
    ) -> Result<(), Error> {
        self.flush_opt(flushopts)
    }

    /// [`Self::flush`]: the log is shared by every column family.
    pub fn flush_cfs_opt(
        &self,
        _cfs: &[&impl AsColumnFamilyRef],
        opts: &FlushOptions,
    ) -> Result<(), Error> {
        self.flush_opt(opts)
    }

    /// With `sync`, makes every acknowledged write durable; without, does
    /// nothing (writes already reach the operating system before they are
    /// acknowledged).
    pub fn flush_wal(&self, sync: bool) -> Result<(), Error> {
        if sync {
            self.core().engine.sync().rocks()?;
        }
        Ok(())
    }

    /// Compacts the database now, running the column families' compaction
    /// filters and TTL expiry over all their keys. AlexDB compacts whole
    /// segments, so the range is not used (the filters see every key, not
    /// only the range's); errors are counted in `rocksdb.background-errors`
    /// (the rocksdb signature returns nothing).
    pub fn compact_range<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        _start: Option<S>,
        _end: Option<E>,
    ) {
        self.compact_now();
    }

    /// [`Self::compact_range`]; of the options, only
    /// `set_full_history_ts_low` changes something.
    pub fn compact_range_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) {
        if self.raise_history_low_for(0, start.is_some() || end.is_some(), opts) {
            self.compact_range(start, end);
        }
    }

    /// Raises `full_history_ts_low` of column family `cf` if `opts` asks:
    /// whether the compaction goes ahead (RocksDB refuses a compaction
    /// that raises it over a key range, or whose raise fails).
    fn raise_history_low_for(&self, cf: u32, ranged: bool, opts: &CompactOptions) -> bool {
        let Some(ts) = &opts.full_history_ts_low else {
            return true;
        };
        if ranged {
            self.core()
                .log("AlexDB: Cannot specify compaction range with full_history_ts_low");
            return false;
        }
        match self.raise_history_low(cf, ts) {
            Ok(()) => true,
            Err(e) => {
                self.core().log(&format!("AlexDB: compaction refused: {e}"));
                false
            }
        }
    }

    /// [`Self::compact_range`]: segments hold every column family.
    pub fn compact_range_cf<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        _cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
    ) {
        self.compact_range(start, end);
    }

    /// [`Self::compact_range`]: segments hold every column family. Of the
    /// options, only `set_full_history_ts_low` changes something.
    pub fn compact_range_cf_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) {
        let ranged = start.is_some() || end.is_some();
        if self.raise_history_low_for(cf.cf_id(), ranged, opts) {
            self.compact_range(start, end);
        }
    }

    fn compact_now(&self) {
        // A failed pass leaves the database consistent and is retried by the
        // next compaction; the engine counts it in its statistics. The
        // compaction runs the column families' filters and TTL expiry over
        // every key (see `filter_hook.rs`).
        let core = self.core();
        core.log("AlexDB: manual compaction");
        if let Err(e) = core.engine.compact() {
            core.log(&format!("AlexDB: compaction failed: {e}"));
        }
    }

    /// Returns once no compaction is due: waits for the background pass
    /// under way, then runs what the next would (unless automatic
    /// compaction is disabled). `flush` has nothing to flush (every write is
    /// in the log). With a timeout, a wait that took longer fails with
    /// `Timed out` (the compaction itself completed). `abort_on_pause`
    /// concerns RocksDB's `PauseBackgroundWork`, which AlexDB has not.
    pub fn wait_for_compact(&self, opts: &WaitForCompactOptions) -> Result<(), Error> {
        let started = std::time::Instant::now();
        self.core().engine.wait_for_compaction().rocks()?;
        let limit = std::time::Duration::from_micros(opts.timeout_micros);
        match opts.timeout_micros > 0 && started.elapsed() > limit {
            true => Err(Error::timed_out("Timed out waiting for compactions")),
            false => Ok(()),
        }
    }

    /// Checks the options as RocksDB does (known mutable option names,
    /// parseable values, a non-empty list: else `Invalid argument`), then
    /// applies them to the default column family. `disable_auto_compactions`
    /// pauses or resumes background compaction (see
    /// [`Options::set_disable_auto_compactions`](crate::Options::set_disable_auto_compactions));
    /// `compression` and `bottommost_compression` turn compression on or
    /// off for what compaction writes from now on; the other options
    /// RocksDB can change at run time are tuning knobs AlexDB does not
    /// have, accepted and ignored.
    pub fn set_options(&self, opts: &[(&str, &str)]) -> Result<(), Error> {
        crate::options::validate_set_options(opts)?;
        self.core().set_auto_compactions_option(0, opts);
        self.core().set_compression_option(0, opts)
    }

    /// [`Self::set_options`] for column family `cf`.
    pub fn set_options_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        opts: &[(&str, &str)],
    ) -> Result<(), Error> {
        crate::options::validate_set_options(opts)?;
        self.core().set_auto_compactions_option(cf.cf_id(), opts);
        self.core().set_compression_option(cf.cf_id(), opts)
    }

    /// A property of the default column family (or of the whole database),
    /// as text; `None` for a property AlexDB does not know.
    ///
    /// Known: `rocksdb.estimate-num-keys` (exact), `rocksdb.total-sst-files-size`
    /// (bytes of the segment files' records), `rocksdb.estimate-live-data-size`
    /// and `rocksdb.live-sst-files-size` (bytes still reachable),
    /// `rocksdb.estimate-pending-compaction-bytes` (dead bytes); these byte
    /// figures are per column family, as in RocksDB: the database's, in the
    /// proportion of the family's live keys (segments hold every family's
    /// records together), so a family without keys reports 0;
    /// `rocksdb.stats`/`rocksdb.dbstats`/`rocksdb.cfstats`/
    /// `rocksdb.cfstats-no-file-histogram` (text), `rocksdb.cf-file-histogram`
    /// (its header: no file reads are timed by level),
    /// `rocksdb.num-snapshots`, `rocksdb.oldest-snapshot-time` and
    /// `-sequence`, `rocksdb.background-errors`, `rocksdb.num-running-compactions`
    /// (1 while a compaction pass runs), `rocksdb.compaction-pending` (1
    /// while one was asked for and not yet started),
    /// `rocksdb.is-file-deletions-enabled`, `rocksdb.current-super-version-number`
    /// (changes of the set of segment files since open),
    /// `rocksdb.min-log-number-to-keep` (the oldest segment still in log
    /// order), `rocksdb.num-live-versions` (1), `rocksdb.min-obsolete-sst-number-to-keep`
    /// (`u64::MAX`: no job keeps an obsolete file), `rocksdb.base-level`,
    /// `rocksdb.options-statistics` (with statistics enabled); the files by
    /// level (`rocksdb.num-files-at-level<N>`, `compression-ratio-at-level<N>`,
    /// `aggregated-table-properties`, `-at-level<N>`, `levelstats`,
    /// `sstables`: every segment file at level 0, as [`Self::live_files`]
    /// reports them; they read every record); and the memtable, flush,
    /// block-cache and write-stall counters, which are always 0 (AlexDB has
    /// none of those).
    pub fn property_value(&self, name: impl CStrLike) -> Result<Option<String>, Error> {
        self.property(0, name)
    }

    /// [`Self::property_value`] for column family `cf`.
    pub fn property_value_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        name: impl CStrLike,
    ) -> Result<Option<String>, Error> {
        self.property(cf.cf_id(), name)
    }

    /// [`Self::property_value`] parsed as an integer.
    pub fn property_int_value(&self, name: impl CStrLike) -> Result<Option<u64>, Error> {
        self.property(0, name)?.map(|v| parse_int(&v)).transpose()
    }

    /// [`Self::property_value_cf`] parsed as an integer.
    pub fn property_int_value_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        name: impl CStrLike,
    ) -> Result<Option<u64>, Error> {
        self.property(cf.cf_id(), name)?
            .map(|v| parse_int(&v))
            .transpose()
    }

    /// `bytes` of the whole database apportioned to column family `cf` by
    /// its share of the live keys and range deletes of every column family
    /// (0 if none has any): a family holding only range deletes holds their
    /// records, as RocksDB's SST files hold range tombstones.
    fn family_share(&self, cf: u32, bytes: u64) -> Result<u64, Error> {
        let engine = &self.core().engine;
        let ids: Vec<u32> = self.core().families().keys().copied().collect();
        let (mut mine, mut total) = (0u64, 0u64);
        for id in ids {
            let ks = KeyspaceId(id);
            let keys = engine.live_keys(ks).rocks()? + engine.live_range_deletes(ks).rocks()?;
            total += keys;
            if id == cf {
                mine = keys;
            }
        }
        Ok(match total {
            0 => 0,
            _ => (u128::from(bytes) * u128::from(mine) / u128::from(total)) as u64,
        })
    }

    fn property(&self, cf: u32, name: impl CStrLike) -> Result<Option<String>, Error> {
        let name = name
            .into_c_string()
            .map_err(|e| Error::new(format!("Failed to convert property name to CString: {e}")))?;
        let name = name.to_string_lossy();
        let engine = &self.core().engine;
        let stats = engine.stats();
        if let Some(answer) = self.file_property(cf, &name, &stats)? {
            return Ok(answer);
        }
        let value = match name.as_ref() {
            "rocksdb.estimate-num-keys" => engine.live_keys(KeyspaceId(cf)).rocks()?,
            "rocksdb.total-sst-files-size" => self.family_share(cf, stats.data_bytes)?,
            "rocksdb.estimate-live-data-size" | "rocksdb.live-sst-files-size" => {
                self.family_share(cf, stats.live_bytes())?
            }
            "rocksdb.num-snapshots" => stats.snapshots_open,
            "rocksdb.oldest-snapshot-time" => stats.oldest_snapshot.map_or(0, |(_, age)| {
                unix_seconds_now().saturating_sub(age.as_secs())
            }),
            "rocksdb.oldest-snapshot-sequence" => stats.oldest_snapshot.map_or(0, |(seq, _)| seq),
            "rocksdb.actual-delayed-write-rate" => engine.delayed_write_rate(),
            "rocksdb.background-errors" => stats.compaction_errors,
            "rocksdb.num-running-compactions" => u64::from(engine.compaction_running()),
            "rocksdb.compaction-pending" => u64::from(engine.compaction_requested()),
            "rocksdb.estimate-pending-compaction-bytes" => {
                self.family_share(cf, stats.dead_bytes)?
            }
            "rocksdb.stats"
            | "rocksdb.dbstats"
            | "rocksdb.cfstats"
            | "rocksdb.cfstats-no-file-histogram" => {
                return Ok(Some(stats_text(self.path(), &stats)));
            }
            "rocksdb.cf-file-histogram" => {
                // No file reads are timed per level: the header alone, as
                // RocksDB prints it before any read.
                let name = self.core().family_name(cf);
                return Ok(Some(format!(
                    "\n** File Read Latency Histogram By Level [{name}] **\n"
                )));
            }
            "rocksdb.options-statistics" => {
                return Ok(self.core().statistics().map(|s| s.report()));
            }
            "rocksdb.is-file-deletions-enabled" => u64::from(
                self.core()
                    .file_holds
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_empty(),
            ),
            // One current set of files: readers hold segments, not versions.
            "rocksdb.num-live-versions" => 1,
            "rocksdb.current-super-version-number" => stats.segment_table_changes,
            "rocksdb.min-log-number-to-keep" => stats.oldest_log_segment.map_or(0, u64::from),
            // No running job keeps an obsolete file for itself.
            "rocksdb.min-obsolete-sst-number-to-keep" => u64::MAX,
            "rocksdb.base-level" => self
                .core()
                .families()
                .get(&cf)
                .map_or(0, |f| f.base_level as u64),
            // As in `get_memory_usage_stats`: the family's learned index
            // stands where RocksDB's memtables do (it is never flushed
            // away), the segments' key filters where its table readers'
            // index and filter blocks do.
            "rocksdb.cur-size-active-mem-table"
            | "rocksdb.cur-size-all-mem-tables"
            | "rocksdb.size-all-mem-tables" => {
                engine.index_stats(KeyspaceId(cf)).rocks()?.memory_bytes as u64
            }
            "rocksdb.estimate-table-readers-mem" => {
                self.family_share(cf, stats.memory_use.segment_filter_bytes)?
            }
            "rocksdb.num-entries-active-mem-table"
            | "rocksdb.num-entries-imm-mem-tables"
            | "rocksdb.num-deletes-active-mem-table"
            | "rocksdb.num-deletes-imm-mem-tables"
            | "rocksdb.num-immutable-mem-table"
            | "rocksdb.num-immutable-mem-table-flushed"
            | "rocksdb.mem-table-flush-pending"
            | "rocksdb.num-running-flushes"
            | "rocksdb.is-write-stopped"
            | "rocksdb.block-cache-capacity"
            | "rocksdb.block-cache-usage"
            | "rocksdb.block-cache-pinned-usage" => 0,
            _ => return Ok(None),
        };
        Ok(Some(value.to_string()))
    }

    /// The properties that describe column family `cf`'s files by level
    /// (see `level_properties.rs`): `Some` with the answer when `name` is
    /// one of them, `None` when it is another property.
    fn file_property(
        &self,
        cf: u32,
        name: &str,
        stats: &Stats,
    ) -> Result<Option<Option<String>>, Error> {
        type ByLevel = fn(&FamilyFiles, usize) -> Option<String>;
        let by_level: [(&str, ByLevel); 3] = [
            (
                "rocksdb.num-files-at-level",
                FamilyFiles::num_files_at_level,
            ),
            (
                "rocksdb.compression-ratio-at-level",
                FamilyFiles::compression_ratio_at_level,
            ),
            (
                "rocksdb.aggregated-table-properties-at-level",
                FamilyFiles::table_properties_at_level,
            ),
        ];
        for (prefix, answer) in by_level {
            if let Some(level) = level_suffix(name, prefix) {
                return Ok(Some(match level {
                    Some(level) => answer(&self.family_files(cf)?, level),
                    None => None,
                }));
            }
        }
        let text = match name {
            "rocksdb.levelstats" => self.family_files(cf)?.level_stats(),
            "rocksdb.sstables" => self.family_files(cf)?.sstables(stats.segment_table_changes),
            "rocksdb.aggregated-table-properties" => {
                let files = self.family_files(cf)?;
                files.table_properties(&files.files)
            }
            _ => return Ok(None),
        };
        Ok(Some(Some(text)))
    }

    /// Column family `cf`'s segment files (reads every record).
    fn family_files(&self, cf: u32) -> Result<FamilyFiles, Error> {
        let core = self.core();
        let summaries = core.engine.segment_summaries().rocks()?;
        let (name, levels) = core
            .families()
            .get(&cf)
            .map_or((String::new(), DEFAULT_LEVELS), |f| {
                (f.name.clone(), f.levels)
            });
        Ok(FamilyFiles {
            name,
            id: cf,
            levels,
            files: summaries
                .into_iter()
                .filter(|s| s.keyspace.0 == cf)
                .collect(),
        })
    }

    /// The sequence number of the last write: 0 for a new database, and
    /// each write advances it by its number of operations.
    pub fn latest_sequence_number(&self) -> u64 {
        self.core().engine.latest_sequence_number()
    }

    /// On a secondary instance ([`Self::open_as_secondary`]): moves it to
    /// what the primary has written since it opened or last caught up:
    /// the batches appended since are applied in place, each whole; after a
    /// compaction or a column family change the database is recovered
    /// afresh and the new state replaces the old one at once. Every read
    /// sees a prefix of the primary's batches; snapshots and iterators made
    /// before keep their view. Beside a primary that is compacting, it
    /// retries when a segment it was about to open was removed, and fails
    /// with the `IO error` or `Corruption` of its last attempt otherwise.
    /// On any other handle it fails as RocksDB does (`Not implemented:
    /// Supported only by secondary instance`).
    pub fn try_catch_up_with_primary(&self) -> Result<(), Error> {
        let core = self.core();
        if core.access() != Access::Secondary {
            return Err(Error::not_supported("Supported only by secondary instance"));
        }
        core.engine.catch_up().rocks()?;
        core.refill_ordered_keys()
    }

    /// The data files: one entry per segment file and column family with
    /// records in it (column families share AlexDB's segment files), named
    /// as RocksDB names its files (`/` and the file name), with the file's
    /// size, the family's smallest and largest key in it, and its records
    /// (`num_entries`, every put, merge and delete, live or not) and deletes
    /// (`num_deletions`). Every file is at level 0: segments' key ranges
    /// overlap, as RocksDB's level-0 files may. Keys are the stored ones in
    /// byte order (encoded version keys in a family with user timestamps;
    /// no custom comparator applied). Reads every record.
    pub fn live_files(&self) -> Result<Vec<LiveFile>, Error> {
        let core = self.core();
        let summaries = core.engine.segment_summaries().rocks()?;
        let families = core.families();
        let files = summaries.into_iter().filter_map(|s| {
            let family = families.get(&s.keyspace.0)?;
            Some(LiveFile {
                column_family_name: family.name.clone(),
                name: format!("/{}", s.file_name),
                size: usize::try_from(s.file_bytes).unwrap_or(usize::MAX),
                level: 0,
                start_key: Some(s.smallest_key),
                end_key: Some(s.largest_key),
                num_entries: s.entries,
                num_deletions: s.deletions,
            })
        });
        Ok(files.collect())
    }

    /// Does nothing, which RocksDB allows: it only promises to drop files
    /// lying entirely within the range, and may keep keys of the range.
    pub fn delete_file_in_range<K: AsRef<[u8]>>(&self, _from: K, _to: K) -> Result<(), Error> {
        Ok(())
    }

    /// Does nothing; see [`Self::delete_file_in_range`].
    pub fn delete_file_in_range_cf<K: AsRef<[u8]>>(
        &self,
        _cf: &impl AsColumnFamilyRef,
        _from: K,
        _to: K,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// Stops background compaction for the rest of this handle's life (as
    /// RocksDB does before a close); with `wait`, returns once a pass under
    /// way has ended. `compact_range` still compacts.
    pub fn cancel_all_background_work(&self, wait: bool) {
        let engine = &self.core().engine;
        engine.set_auto_compaction(false);
        if wait {
            // Paused: this only waits for the running pass.
            let _ = engine.wait_for_compaction();
        }
    }
}

/// Parses an integer property as rocksdb does, with its error text.
fn parse_int(value: &str) -> Result<u64, Error> {
    value.parse::<u64>().map_err(|err| {
        Error::new(format!(
            "Failed to convert property value {value} to int: {err}"
        ))
    })
}

/// Seconds since the Unix epoch now (0 if the clock is before it).
fn unix_seconds_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The text of `rocksdb.stats`: a RocksDB-style "DB Stats" block with
/// AlexDB's counters.
fn stats_text(path: &Path, stats: &Stats) -> String {
    let mut out = String::from("\n** DB Stats **\n");
    // RocksDB's lines that tools read: writes since open (each batch is its
    // own commit group here), and the compaction section's header.
    let _ = writeln!(
        out,
        "Cumulative writes: {} writes, {} keys, {} commit groups, 1.0 writes per commit group",
        stats.writes, stats.keys_written, stats.writes
    );
    let _ = writeln!(
        out,
        "Cumulative compaction: {} compactions, {} bytes reclaimed",
        stats.compactions, stats.bytes_reclaimed
    );
    let rows = [
        ("Path", path.display().to_string()),
        ("Live keys", stats.live_keys.to_string()),
        ("Segments", stats.segments.to_string()),
        ("Data bytes", stats.data_bytes.to_string()),
        ("Dead bytes", stats.dead_bytes.to_string()),
        ("Index entries", stats.index_entries.to_string()),
        ("Index bytes", stats.index_bytes.to_string()),
        ("Memory held", stats.memory_use.total().to_string()),
        (
            "Memory over budget",
            match stats.memory_over_budget {
                true => "yes",
                false => "no",
            }
            .to_string(),
        ),
        ("Compactions", stats.compactions.to_string()),
        ("Bytes reclaimed", stats.bytes_reclaimed.to_string()),
        ("Compaction errors", stats.compaction_errors.to_string()),
        ("Open snapshots", stats.snapshots_open.to_string()),
        ("Latest sequence", stats.latest_sequence.to_string()),
    ];
    for (label, value) in rows {
        let _ = writeln!(out, "{label}: {value}");
    }
    let _ = writeln!(
        out,
        "\n** Compaction Stats [all column families] **\nSegments: {}, data bytes: {}, dead bytes: {}",
        stats.segments, stats.data_bytes, stats.dead_bytes
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::{DB, Options};

    /// `disable_auto_compactions` pauses the engine's background compaction
    /// while every open column family has it, at open and through
    /// Compression is on by default (RocksDB compresses with Snappy), off
    /// with `kNoCompression` at open or through `set_options(_cf)`, and the
    /// bottommost type wins over `compression`.
    #[test]
    fn compression_types_turn_compression_on_and_off() {
        use crate::{AsColumnFamilyRef, DBCompressionType};
        use alexdb_engine::{Compression, KeyspaceId};
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        #[cfg_attr(
            feature = "multi-threaded-cf",
            expect(unused_mut, reason = "`create_cf` takes `&self` there")
        )]
        let mut db = DB::open(&opts, dir.path()).unwrap();
        let of = |db: &DB, cf: u32| db.core().engine.compression(KeyspaceId(cf)).unwrap();
        assert_eq!(of(&db, 0), Compression::Lz4, "RocksDB's default compresses");
        let mut plain = Options::default();
        plain.set_compression_type(DBCompressionType::None);
        db.create_cf("plain", &plain).unwrap();
        let mut zstd_last = Options::default();
        zstd_last.set_compression_type(DBCompressionType::None);
        zstd_last.set_bottommost_compression_type(DBCompressionType::Zstd);
        db.create_cf("zstd_last", &zstd_last).unwrap();
        let (p, z) = (
            db.cf_handle("plain").unwrap().cf_id(),
            db.cf_handle("zstd_last").unwrap().cf_id(),
        );
        assert_eq!(
            (of(&db, p), of(&db, z)),
            (Compression::None, Compression::Lz4)
        );
        db.set_options(&[("compression", "kNoCompression")])
            .unwrap();
        assert_eq!(of(&db, 0), Compression::None);
        let plain_cf = db.cf_handle("plain").unwrap();
        db.set_options_cf(
            &plain_cf,
            &[
                ("compression", "kNoCompression"),
                ("bottommost_compression", "kLZ4Compression"),
            ],
        )
        .unwrap();
        assert_eq!(of(&db, p), Compression::Lz4);
        db.set_options_cf(
            &plain_cf,
            &[("bottommost_compression", "kDisableCompressionOption")],
        )
        .unwrap();
        assert_eq!(of(&db, p), Compression::Lz4, "nothing named: unchanged");
    }

    /// `set_options`, `set_options_cf`, `create_cf` and `drop_cf`.
    #[test]
    fn disable_auto_compactions_pauses_while_every_family_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_disable_auto_compactions(true);
        #[cfg_attr(
            feature = "multi-threaded-cf",
            expect(unused_mut, reason = "`create_cf` takes `&self` there")
        )]
        let mut db = DB::open(&opts, dir.path()).unwrap();
        let running = |db: &DB| db.core().engine.auto_compaction();
        assert!(!running(&db));
        db.create_cf("b", &Options::default()).unwrap();
        assert!(running(&db), "family b wants compaction");
        let b = db.cf_handle("b").unwrap();
        db.set_options_cf(&b, &[("disable_auto_compactions", "true")])
            .unwrap();
        assert!(!running(&db));
        db.set_options(&[("disable_auto_compactions", "false")])
            .unwrap();
        assert!(running(&db));
        db.set_options(&[("disable_auto_compactions", "1")])
            .unwrap();
        assert!(!running(&db));
        assert!(
            db.set_options(&[("disable_auto_compactions", "maybe")])
                .is_err()
        );
        assert!(!running(&db), "a refused setting changes nothing");
        db.drop_cf("b").unwrap();
        assert!(!running(&db));
        drop(db);
        let db = DB::open(&Options::default(), dir.path()).unwrap();
        assert!(running(&db), "the setting is the opening options'");
    }

    /// `cancel_all_background_work` pauses compaction for good;
    /// `wait_for_compact` returns once nothing is due.
    #[test]
    fn cancel_and_wait_for_compactions() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).unwrap();
        db.put(b"k", b"v").unwrap();
        let wait = crate::WaitForCompactOptions::default();
        db.wait_for_compact(&wait).unwrap();
        db.cancel_all_background_work(true);
        assert!(!db.core().engine.auto_compaction());
        db.wait_for_compact(&wait).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
