//! RocksDB through the `rocksdb` crate, with default options and tuned as
//! the seeds' RocksStorage was.

use rocksdb::{BlockBasedOptions, Cache, DB, Options};

use super::Sizing;

/// How `rocksdb-default` is configured, for the report.
pub const DEFAULT_CONFIGURATION: &str = "`rocksdb` 0.25 (RocksDB C++ bundled), \
`Options::default()` + `create_if_missing`; WAL on, no sync per write (`put`/`write` with \
default `WriteOptions`): acknowledged writes survive a process crash. Copying get = `get`, \
zero-copy get = `get_pinned`; seek/scan with `raw_iterator`.";

/// How `rocksdb-tuned` is configured, for the report.
pub const TUNED_CONFIGURATION: &str = "as `rocksdb-default`, plus the seeds' RocksStorage \
tuning: 256 MiB write buffer, 128 MiB target file size, level-0 compaction trigger 8, \
512 MiB max bytes for level base; and a 10-bit bloom filter (full filter) with an LRU block \
cache of 1.5x the raw data size (at least 64 MiB).";

/// RocksDB with default options.
pub struct RocksDefault {
    db: DB,
}

impl RocksDefault {
    fn options(_sizing: &Sizing) -> Options {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts
    }

    fn index_bytes_of(db: &DB) -> Option<u64> {
        table_readers_mem(db)
    }
}

optimistic_txn_store!(RocksOptimistic, rocksdb);
rocks_api_engine!(RocksDefault, rocksdb, RocksOptimistic);

/// RocksDB tuned as the seeds' RocksStorage, plus bloom filter and cache.
pub struct RocksTuned {
    db: DB,
}

impl RocksTuned {
    /// The tuned options (shared with the i64 API engine).
    pub fn options(sizing: &Sizing) -> Options {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_write_buffer_size(256 << 20);
        opts.set_target_file_size_base(128 << 20);
        opts.set_level_zero_file_num_compaction_trigger(8);
        opts.set_max_bytes_for_level_base(512 << 20);
        let mut table = BlockBasedOptions::default();
        table.set_bloom_filter(10.0, false);
        let cache_bytes = (sizing.data_bytes() * 3 / 2).max(64 << 20);
        let cache = Cache::new_lru_cache(usize::try_from(cache_bytes).unwrap_or(usize::MAX));
        table.set_block_cache(&cache);
        opts.set_block_based_table_factory(&table);
        opts
    }

    fn index_bytes_of(db: &DB) -> Option<u64> {
        table_readers_mem(db)
    }
}

rocks_api_engine!(RocksTuned, rocksdb, RocksOptimistic);

/// Memory of the index and filter blocks held by open table readers: what
/// RocksDB keeps in memory to find a key (memtables aside, and they are
/// empty after the reopen flushed them).
fn table_readers_mem(db: &DB) -> Option<u64> {
    db.property_int_value("rocksdb.estimate-table-readers-mem")
        .ok()
        .flatten()
}
