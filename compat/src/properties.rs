//! Names of the properties readable with `DB::property_value` and
//! `DB::property_int_value` (and their `_cf` forms).
//!
//! The strings are RocksDB's own (`"rocksdb.<name>"`), byte for byte as the
//! rocksdb crate 0.25 defines them, including its `CFSTATS` constant, which
//! spells the name in capitals (`"rocksdb.CFSTATS"`).

pub use crate::prop_name::{PropName, PropertyName};

macro_rules! property {
    ($suffix:literal) => {
        PropName::new_unwrap(concat!("rocksdb.", $suffix, "\0"))
    };
}

/// `"rocksdb.num-files-at-level<N>"`: the number of files at level `N`.
pub fn num_files_at_level(level: usize) -> PropertyName {
    PropertyName::at_level("num-files-at-level", level)
}

/// `"rocksdb.compression-ratio-at-level<N>"`: uncompressed over compressed
/// size at level `N` (`"-1.0"` when the level has no files).
pub fn compression_ratio_at_level(level: usize) -> PropertyName {
    PropertyName::at_level("compression-ratio-at-level", level)
}

/// `"rocksdb.aggregated-table-properties-at-level<N>"`: the aggregated table
/// properties of level `N`.
pub fn aggregated_table_properties_at_level(level: usize) -> PropertyName {
    PropertyName::at_level("aggregated-table-properties-at-level", level)
}

/// `"rocksdb.num-files-at-level"`: the prefix of [`num_files_at_level`].
pub const NUM_FILES_AT_LEVEL_PREFIX: &PropName = property!("num-files-at-level");
/// `"rocksdb.compression-ratio-at-level"`: the prefix of [`compression_ratio_at_level`].
pub const COMPRESSION_RATIO_AT_LEVEL: &PropName = property!("compression-ratio-at-level");
/// `"rocksdb.stats"`: multi-line column family and DB statistics.
pub const STATS: &PropName = property!("stats");
/// `"rocksdb.sstables"`: a summary of the table files.
pub const SSTABLES: &PropName = property!("sstables");
/// `"rocksdb.CFSTATS"`: the rocksdb crate's spelling of the cfstats property.
pub const CFSTATS: &PropName = property!("CFSTATS");
/// `"rocksdb.cfstats-no-file-histogram"`: per-level column family statistics.
pub const CFSTATS_NO_FILE_HISTOGRAM: &PropName = property!("cfstats-no-file-histogram");
/// `"rocksdb.cf-file-histogram"`: file read counts and latency histograms.
pub const CF_FILE_HISTOGRAM: &PropName = property!("cf-file-histogram");
/// `"rocksdb.dbstats"`: database-wide statistics.
pub const DBSTATS: &PropName = property!("dbstats");
/// `"rocksdb.levelstats"`: files and size per level.
pub const LEVELSTATS: &PropName = property!("levelstats");
/// `"rocksdb.num-immutable-mem-table"`: immutable memtables not yet flushed.
pub const NUM_IMMUTABLE_MEM_TABLE: &PropName = property!("num-immutable-mem-table");
/// `"rocksdb.num-immutable-mem-table-flushed"`: immutable memtables already flushed.
pub const NUM_IMMUTABLE_MEM_TABLE_FLUSHED: &PropName = property!("num-immutable-mem-table-flushed");
/// `"rocksdb.mem-table-flush-pending"`: 1 if a flush is pending, else 0.
pub const MEM_TABLE_FLUSH_PENDING: &PropName = property!("mem-table-flush-pending");
/// `"rocksdb.num-running-flushes"`: flushes currently running.
pub const NUM_RUNNING_FLUSHES: &PropName = property!("num-running-flushes");
/// `"rocksdb.compaction-pending"`: 1 if a compaction is pending, else 0.
pub const COMPACTION_PENDING: &PropName = property!("compaction-pending");
/// `"rocksdb.num-running-compactions"`: compactions currently running.
pub const NUM_RUNNING_COMPACTIONS: &PropName = property!("num-running-compactions");
/// `"rocksdb.background-errors"`: accumulated background errors.
pub const BACKGROUND_ERRORS: &PropName = property!("background-errors");
/// `"rocksdb.cur-size-active-mem-table"`: approximate bytes in the active memtable.
pub const CUR_SIZE_ACTIVE_MEM_TABLE: &PropName = property!("cur-size-active-mem-table");
/// `"rocksdb.cur-size-all-mem-tables"`: bytes in active and unflushed memtables.
pub const CUR_SIZE_ALL_MEM_TABLES: &PropName = property!("cur-size-all-mem-tables");
/// `"rocksdb.size-all-mem-tables"`: bytes in all memtables, pinned ones included.
pub const SIZE_ALL_MEM_TABLES: &PropName = property!("size-all-mem-tables");
/// `"rocksdb.num-entries-active-mem-table"`: entries in the active memtable.
pub const NUM_ENTRIES_ACTIVE_MEM_TABLE: &PropName = property!("num-entries-active-mem-table");
/// `"rocksdb.num-entries-imm-mem-tables"`: entries in unflushed immutable memtables.
pub const NUM_ENTRIES_IMM_MEM_TABLES: &PropName = property!("num-entries-imm-mem-tables");
/// `"rocksdb.num-deletes-active-mem-table"`: deletes in the active memtable.
pub const NUM_DELETES_ACTIVE_MEM_TABLE: &PropName = property!("num-deletes-active-mem-table");
/// `"rocksdb.num-deletes-imm-mem-tables"`: deletes in unflushed immutable memtables.
pub const NUM_DELETES_IMM_MEM_TABLES: &PropName = property!("num-deletes-imm-mem-tables");
/// `"rocksdb.estimate-num-keys"`: estimated number of keys.
pub const ESTIMATE_NUM_KEYS: &PropName = property!("estimate-num-keys");
/// `"rocksdb.estimate-table-readers-mem"`: memory used by table readers.
pub const ESTIMATE_TABLE_READERS_MEM: &PropName = property!("estimate-table-readers-mem");
/// `"rocksdb.is-file-deletions-enabled"`: 1 if obsolete-file deletion is enabled, else 0.
pub const IS_FILE_DELETIONS_ENABLED: &PropName = property!("is-file-deletions-enabled");
/// `"rocksdb.num-snapshots"`: unreleased snapshots.
pub const NUM_SNAPSHOTS: &PropName = property!("num-snapshots");
/// `"rocksdb.oldest-snapshot-time"`: unix time of the oldest unreleased snapshot.
pub const OLDEST_SNAPSHOT_TIME: &PropName = property!("oldest-snapshot-time");
/// `"rocksdb.num-live-versions"`: live internal versions.
pub const NUM_LIVE_VERSIONS: &PropName = property!("num-live-versions");
/// `"rocksdb.current-super-version-number"`: a counter bumped on every change of the tree.
pub const CURRENT_SUPER_VERSION_NUMBER: &PropName = property!("current-super-version-number");
/// `"rocksdb.estimate-live-data-size"`: estimated bytes of live data.
pub const ESTIMATE_LIVE_DATA_SIZE: &PropName = property!("estimate-live-data-size");
/// `"rocksdb.min-log-number-to-keep"`: the oldest log file that must be kept.
pub const MIN_LOG_NUMBER_TO_KEEP: &PropName = property!("min-log-number-to-keep");
/// `"rocksdb.min-obsolete-sst-number-to-keep"`: the oldest obsolete table file kept.
pub const MIN_OBSOLETE_SST_NUMBER_TO_KEEP: &PropName = property!("min-obsolete-sst-number-to-keep");
/// `"rocksdb.total-sst-files-size"`: bytes in all table files.
pub const TOTAL_SST_FILES_SIZE: &PropName = property!("total-sst-files-size");
/// `"rocksdb.live-sst-files-size"`: bytes in the table files of the current version.
pub const LIVE_SST_FILES_SIZE: &PropName = property!("live-sst-files-size");
/// `"rocksdb.base-level"`: the level level-0 data is compacted into.
pub const BASE_LEVEL: &PropName = property!("base-level");
/// `"rocksdb.estimate-pending-compaction-bytes"`: bytes compaction still has to rewrite.
pub const ESTIMATE_PENDING_COMPACTION_BYTES: &PropName =
    property!("estimate-pending-compaction-bytes");
/// `"rocksdb.aggregated-table-properties"`: aggregated table properties.
pub const AGGREGATED_TABLE_PROPERTIES: &PropName = property!("aggregated-table-properties");
/// `"rocksdb.aggregated-table-properties-at-level"`: the prefix of
/// [`aggregated_table_properties_at_level`].
pub const AGGREGATED_TABLE_PROPERTIES_AT_LEVEL: &PropName =
    property!("aggregated-table-properties-at-level");
/// `"rocksdb.actual-delayed-write-rate"`: the current delayed write rate (0: none).
pub const ACTUAL_DELAYED_WRITE_RATE: &PropName = property!("actual-delayed-write-rate");
/// `"rocksdb.is-write-stopped"`: 1 if writes are stopped.
pub const IS_WRITE_STOPPED: &PropName = property!("is-write-stopped");
/// `"rocksdb.estimate-oldest-key-time"`: estimated timestamp of the oldest key.
pub const ESTIMATE_OLDEST_KEY_TIME: &PropName = property!("estimate-oldest-key-time");
/// `"rocksdb.block-cache-capacity"`: block cache capacity.
pub const BLOCK_CACHE_CAPACITY: &PropName = property!("block-cache-capacity");
/// `"rocksdb.block-cache-usage"`: bytes held in the block cache.
pub const BLOCK_CACHE_USAGE: &PropName = property!("block-cache-usage");
/// `"rocksdb.block-cache-pinned-usage"`: bytes pinned in the block cache.
pub const BLOCK_CACHE_PINNED_USAGE: &PropName = property!("block-cache-pinned-usage");
/// `"rocksdb.options-statistics"`: the statistics collected through the options.
pub const OPTIONS_STATISTICS: &PropName = property!("options-statistics");

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_rocksdb_strings() {
        assert_eq!(
            super::ESTIMATE_NUM_KEYS.as_str(),
            "rocksdb.estimate-num-keys"
        );
        assert_eq!(
            super::CFSTATS_NO_FILE_HISTOGRAM.as_str(),
            "rocksdb.cfstats-no-file-histogram"
        );
        assert_eq!(
            super::num_files_at_level(5).as_str(),
            "rocksdb.num-files-at-level5"
        );
    }
}
