//! Database-wide tuning knobs of [`Options`] that AlexDB accepts and ignores.
//!
//! Each of these changes only how RocksDB uses threads, files, logs and I/O.
//! AlexDB makes those choices itself, so the setters exist for
//! compatibility, with the same signatures as rocksdb 0.25, and have no
//! effect.

use super::cache::WriteBufferManager;
use super::db_options::Options;
use super::enums::LogLevel;
use super::env::DBPath;

impl Options {
    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn increase_parallelism(&mut self, _parallelism: i32) {}

    /// Accepted for compatibility; AlexDB keeps all its files under the database path, so this has no effect.
    pub fn set_db_paths(&mut self, _paths: &[DBPath]) {}

    /// Accepted for compatibility; AlexDB keeps every column family in the
    /// segment files under the database path, so this has no effect.
    pub fn set_cf_paths(&mut self, _paths: &[DBPath]) {}

    /// Accepted for compatibility; AlexDB has no memtable to purge, so this
    /// has no effect.
    pub fn set_experimental_mempurge_threshold(&mut self, _threshold: f64) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_compaction_readahead_size(&mut self, _compaction_readahead_size: usize) {}

    /// Accepted for compatibility; AlexDB deletes obsolete files as soon as no reader needs them, so this has no effect.
    pub fn set_delete_obsolete_files_period_micros(&mut self, _micros: u64) {}

    /// Accepted for compatibility; AlexDB needs no bulk-load mode, so this has no effect.
    pub fn prepare_for_bulk_load(&mut self) {}

    /// Accepted for compatibility; AlexDB maps its files on open without a thread pool, so this has no effect.
    pub fn set_max_file_opening_threads(&mut self, _nthreads: i32) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_log_level(&mut self, _level: LogLevel) {}

    /// Accepted for compatibility; AlexDB syncs at its own points, so this has no effect.
    pub fn set_bytes_per_sync(&mut self, _nbytes: u64) {}

    /// Accepted for compatibility; AlexDB syncs at its own points, so this has no effect.
    pub fn set_wal_bytes_per_sync(&mut self, _nbytes: u64) {}

    /// Accepted for compatibility; AlexDB sizes its own write buffers, so this has no effect.
    pub fn set_writable_file_max_buffer_size(&mut self, _nbytes: u64) {}

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_allow_concurrent_memtable_write(&mut self, _allow: bool) {}

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_enable_write_thread_adaptive_yield(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB iterators never reseek, so this has no effect.
    pub fn set_max_sequential_skip_in_iterations(&mut self, _num: u64) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_use_direct_reads(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB writes through the page cache, so this has no effect.
    pub fn set_use_direct_io_for_flush_and_compaction(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB always opens files close-on-exec, so this has no effect.
    pub fn set_is_fd_close_on_exec(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_allow_os_buffer(&mut self, _is_allow: bool) {}

    /// Accepted for compatibility; AlexDB has no table cache, so this has no effect.
    pub fn set_table_cache_num_shard_bits(&mut self, _nbits: i32) {}

    /// Accepted for compatibility; AlexDB has no MANIFEST file, so this has no effect.
    pub fn set_max_manifest_file_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB always keeps snapshots immutable, so this has no effect.
    pub fn set_unordered_write(&mut self, _unordered: bool) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_subcompactions(&mut self, _num: u32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_jobs(&mut self, _jobs: i32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_compactions(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_flushes(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB detects transaction conflicts without keeping old write buffers, so this has no effect.
    pub fn set_max_write_buffer_size_to_maintain(&mut self, _size: i64) {}

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_enable_pipelined_write(&mut self, _value: bool) {}

    /// Accepted for compatibility; AlexDB collects no I/O statistics, so this has no effect.
    pub fn set_report_bg_io_stats(&mut self, _enable: bool) {}

    /// Accepted for compatibility; AlexDB bounds its log by flushing on its own, so this has no effect.
    pub fn set_max_total_wal_size(&mut self, _size: u64) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_stats_dump_period_sec(&mut self, _period: u32) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_stats_persist_period_sec(&mut self, _period: u32) {}

    /// Accepted for compatibility; AlexDB gives its own access hints to the kernel, so this has no effect.
    pub fn set_advise_random_on_open(&mut self, _advise: bool) {}

    /// Accepted for compatibility; AlexDB uses its own locks, so this has no effect.
    pub fn set_use_adaptive_mutex(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB keeps no archived logs, so this has no effect.
    pub fn set_wal_ttl_seconds(&mut self, _secs: u64) {}

    /// Accepted for compatibility; AlexDB keeps no archived logs, so this has no effect.
    pub fn set_wal_size_limit_mb(&mut self, _size: u64) {}

    /// Accepted for compatibility; AlexDB has no MANIFEST file, so this has no effect.
    pub fn set_manifest_preallocation_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB loads no table statistics on open, so this has no effect.
    pub fn set_skip_stats_update_on_db_open(&mut self, _skip: bool) {}

    /// Accepted for compatibility; AlexDB checks its files by checksum, so this has no effect.
    pub fn set_skip_checking_sst_file_sizes_on_db_open(&mut self, _value: bool) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_keep_log_file_num(&mut self, _nfiles: usize) {}

    /// Accepted for compatibility; AlexDB chooses how it writes its files, so this has no effect.
    pub fn set_allow_mmap_writes(&mut self, _is_enabled: bool) {}

    /// Accepted for compatibility; AlexDB always reads through memory maps, so this has no effect.
    pub fn set_allow_mmap_reads(&mut self, _is_enabled: bool) {}

    /// Accepted for compatibility; AlexDB flushes all column families together, so this has no effect.
    pub fn set_atomic_flush(&mut self, _atomic_flush: bool) {}

    /// Accepted for compatibility; AlexDB does not rate-limit background I/O, so this has no effect.
    pub fn set_ratelimiter(
        &mut self,
        _rate_bytes_per_sec: i64,
        _refill_period_us: i64,
        _fairness: i32,
    ) {
    }

    /// Accepted for compatibility; AlexDB does not rate-limit background I/O, so this has no effect.
    pub fn set_auto_tuned_ratelimiter(
        &mut self,
        _rate_bytes_per_sec: i64,
        _refill_period_us: i64,
        _fairness: i32,
    ) {
    }

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_max_log_file_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_log_file_time_to_roll(&mut self, _secs: usize) {}

    /// Accepted for compatibility; AlexDB does not recycle log files, so this has no effect.
    pub fn set_recycle_log_file_num(&mut self, _num: usize) {}

    /// Accepted for compatibility; AlexDB writes no RocksDB info log, so this has no effect.
    pub fn set_dump_malloc_stats(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB has no levels to reserve, so this has no effect.
    pub fn set_allow_ingest_behind(&mut self, _val: bool) {}

    /// Accepted for compatibility; AlexDB does not yet share a write buffer budget, so this has no effect.
    pub fn set_write_buffer_manager(&mut self, _write_buffer_manager: &WriteBufferManager) {}

    /// Accepted for compatibility; AlexDB already defers file deletion to the background, so this has no effect.
    pub fn set_avoid_unnecessary_blocking_io(&mut self, _val: bool) {}
}
