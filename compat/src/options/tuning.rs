//! Database-wide tuning knobs of [`Options`].
//!
//! Most of these change only how RocksDB uses threads, files and I/O.
//! AlexDB makes those choices itself, so those setters exist for
//! compatibility, with the same signatures as rocksdb 0.25: they have no
//! effect but to be printed in the `LOG` file's options dump. The settings
//! of the `LOG` file itself (level, rolling, old files kept) do apply.

use super::cache::WriteBufferManager;
use super::db_options::Options;
use super::enums::LogLevel;
use super::env::DBPath;
use super::recorded::{fixed6, flag};

impl Options {
    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn increase_parallelism(&mut self, parallelism: i32) {
        self.recorded.set("max_background_jobs", parallelism);
    }

    /// Accepted for compatibility; AlexDB keeps all its files under the database path, so this has no effect.
    pub fn set_db_paths(&mut self, _paths: &[DBPath]) {}

    /// Accepted for compatibility; AlexDB keeps every column family in the
    /// segment files under the database path, so this has no effect.
    pub fn set_cf_paths(&mut self, _paths: &[DBPath]) {}

    /// Accepted for compatibility; AlexDB has no memtable to purge, so this
    /// has no effect.
    pub fn set_experimental_mempurge_threshold(&mut self, threshold: f64) {
        self.recorded
            .set("experimental_mempurge_threshold", fixed6(threshold));
    }

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_compaction_readahead_size(&mut self, compaction_readahead_size: usize) {
        self.recorded
            .set("compaction_readahead_size", compaction_readahead_size);
    }

    /// Accepted for compatibility; AlexDB deletes obsolete files as soon as no reader needs them, so this has no effect.
    pub fn set_delete_obsolete_files_period_micros(&mut self, micros: u64) {
        self.recorded
            .set("delete_obsolete_files_period_micros", micros);
    }

    /// Accepted for compatibility; AlexDB needs no bulk-load mode, so this has no effect.
    pub fn prepare_for_bulk_load(&mut self) {}

    /// Accepted for compatibility; AlexDB maps its files on open without a thread pool, so this has no effect.
    pub fn set_max_file_opening_threads(&mut self, nthreads: i32) {
        self.recorded.set("max_file_opening_threads", nthreads);
    }

    /// Sets the lowest level of message written to the `LOG` file (the
    /// options dump at open is always written, at the header level).
    pub fn set_log_level(&mut self, level: LogLevel) {
        self.info_log.level = level;
    }

    /// Accepted for compatibility; AlexDB syncs at its own points, so this has no effect.
    pub fn set_bytes_per_sync(&mut self, nbytes: u64) {
        self.recorded.set("bytes_per_sync", nbytes);
    }

    /// Accepted for compatibility; AlexDB syncs at its own points, so this has no effect.
    pub fn set_wal_bytes_per_sync(&mut self, nbytes: u64) {
        self.recorded.set("wal_bytes_per_sync", nbytes);
    }

    /// Accepted for compatibility; AlexDB sizes its own write buffers, so this has no effect.
    pub fn set_writable_file_max_buffer_size(&mut self, nbytes: u64) {
        self.recorded.set("writable_file_max_buffer_size", nbytes);
    }

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_allow_concurrent_memtable_write(&mut self, allow: bool) {
        self.recorded
            .set("allow_concurrent_memtable_write", flag(allow));
    }

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_enable_write_thread_adaptive_yield(&mut self, enabled: bool) {
        self.recorded
            .set("enable_write_thread_adaptive_yield", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB iterators never reseek, so this has no effect.
    pub fn set_max_sequential_skip_in_iterations(&mut self, num: u64) {
        self.recorded.set("max_sequential_skip_in_iterations", num);
    }

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_use_direct_reads(&mut self, enabled: bool) {
        self.recorded.set("use_direct_reads", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB writes through the page cache, so this has no effect.
    pub fn set_use_direct_io_for_flush_and_compaction(&mut self, enabled: bool) {
        self.recorded
            .set("use_direct_io_for_flush_and_compaction", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB always opens files close-on-exec, so this has no effect.
    pub fn set_is_fd_close_on_exec(&mut self, enabled: bool) {
        self.recorded.set("is_fd_close_on_exec", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB reads through memory maps, so this has no effect.
    pub fn set_allow_os_buffer(&mut self, _is_allow: bool) {}

    /// Accepted for compatibility; AlexDB has no table cache, so this has no effect.
    pub fn set_table_cache_num_shard_bits(&mut self, nbits: i32) {
        self.recorded.set("table_cache_numshardbits", nbits);
    }

    /// Accepted for compatibility; AlexDB has no MANIFEST file, so this has no effect.
    pub fn set_max_manifest_file_size(&mut self, size: usize) {
        self.recorded.set("max_manifest_file_size", size);
    }

    /// Accepted for compatibility; AlexDB always keeps snapshots immutable, so this has no effect.
    pub fn set_unordered_write(&mut self, unordered: bool) {
        self.recorded.set("unordered_write", flag(unordered));
    }

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_subcompactions(&mut self, num: u32) {
        self.recorded.set("max_subcompactions", num);
    }

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_jobs(&mut self, jobs: i32) {
        self.recorded.set("max_background_jobs", jobs);
    }

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_compactions(&mut self, n: i32) {
        self.recorded.set("max_background_compactions", n);
    }

    /// Accepted for compatibility; AlexDB sizes its own background work, so this has no effect.
    pub fn set_max_background_flushes(&mut self, n: i32) {
        self.recorded.set("max_background_flushes", n);
    }

    /// Accepted for compatibility; AlexDB detects transaction conflicts without keeping old write buffers, so this has no effect.
    pub fn set_max_write_buffer_size_to_maintain(&mut self, size: i64) {
        self.recorded.set("max_write_buffer_size_to_maintain", size);
    }

    /// Accepted for compatibility; AlexDB's write path has its own concurrency, so this has no effect.
    pub fn set_enable_pipelined_write(&mut self, value: bool) {
        self.recorded.set("enable_pipelined_write", flag(value));
    }

    /// Accepted for compatibility; AlexDB collects no I/O statistics, so this has no effect.
    pub fn set_report_bg_io_stats(&mut self, enable: bool) {
        self.recorded.set("report_bg_io_stats", flag(enable));
    }

    /// Accepted for compatibility; AlexDB bounds its log by flushing on its own, so this has no effect.
    pub fn set_max_total_wal_size(&mut self, size: u64) {
        self.recorded.set("max_total_wal_size", size);
    }

    /// Accepted for compatibility; AlexDB does not dump statistics into `LOG`, so this has no effect.
    pub fn set_stats_dump_period_sec(&mut self, period: u32) {
        self.recorded.set("stats_dump_period_sec", period);
    }

    /// Accepted for compatibility; AlexDB does not persist statistics, so this has no effect.
    pub fn set_stats_persist_period_sec(&mut self, period: u32) {
        self.recorded.set("stats_persist_period_sec", period);
    }

    /// Accepted for compatibility; AlexDB gives its own access hints to the kernel, so this has no effect.
    pub fn set_advise_random_on_open(&mut self, advise: bool) {
        self.recorded.set("advise_random_on_open", flag(advise));
    }

    /// Accepted for compatibility; AlexDB uses its own locks, so this has no effect.
    pub fn set_use_adaptive_mutex(&mut self, enabled: bool) {
        self.recorded.set("use_adaptive_mutex", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB keeps no archived logs, so this has no effect.
    pub fn set_wal_ttl_seconds(&mut self, secs: u64) {
        self.recorded.set("WAL_ttl_seconds", secs);
    }

    /// Accepted for compatibility; AlexDB keeps no archived logs, so this has no effect.
    pub fn set_wal_size_limit_mb(&mut self, size: u64) {
        self.recorded.set("WAL_size_limit_MB", size);
    }

    /// Accepted for compatibility; AlexDB has no MANIFEST file, so this has no effect.
    pub fn set_manifest_preallocation_size(&mut self, size: usize) {
        self.recorded.set("manifest_preallocation_size", size);
    }

    /// Accepted for compatibility; AlexDB loads no table statistics on open, so this has no effect.
    pub fn set_skip_stats_update_on_db_open(&mut self, _skip: bool) {}

    /// Accepted for compatibility; AlexDB checks its files by checksum, so this has no effect.
    pub fn set_skip_checking_sst_file_sizes_on_db_open(&mut self, _value: bool) {}

    /// Sets how many old `LOG` files (`LOG.old.<microseconds>`) are kept;
    /// older ones are deleted when a new `LOG` is started (default 1000).
    pub fn set_keep_log_file_num(&mut self, nfiles: usize) {
        self.info_log.keep_file_num = nfiles;
        self.recorded.set("keep_log_file_num", nfiles);
    }

    /// Accepted for compatibility; AlexDB chooses how it writes its files, so this has no effect.
    pub fn set_allow_mmap_writes(&mut self, is_enabled: bool) {
        self.recorded.set("allow_mmap_writes", flag(is_enabled));
    }

    /// Accepted for compatibility; AlexDB always reads through memory maps, so this has no effect.
    pub fn set_allow_mmap_reads(&mut self, is_enabled: bool) {
        self.recorded.set("allow_mmap_reads", flag(is_enabled));
    }

    /// Accepted for compatibility; AlexDB flushes all column families together, so this has no effect.
    pub fn set_atomic_flush(&mut self, atomic_flush: bool) {
        self.recorded.set("atomic_flush", flag(atomic_flush));
    }

    /// Accepted for compatibility; AlexDB does not rate-limit background I/O, so this has no effect.
    pub fn set_ratelimiter(
        &mut self,
        rate_bytes_per_sec: i64,
        _refill_period_us: i64,
        _fairness: i32,
    ) {
        self.recorded.set(
            "rate_limiter",
            format_args!("GenericRateLimiter ({rate_bytes_per_sec} bytes/s)"),
        );
    }

    /// Accepted for compatibility; AlexDB does not rate-limit background I/O, so this has no effect.
    pub fn set_auto_tuned_ratelimiter(
        &mut self,
        rate_bytes_per_sec: i64,
        _refill_period_us: i64,
        _fairness: i32,
    ) {
        self.recorded.set(
            "rate_limiter",
            format_args!("GenericRateLimiter ({rate_bytes_per_sec} bytes/s)"),
        );
    }

    /// Starts a new `LOG` file once the current one reaches `size` bytes
    /// (0, the default: never for its size).
    pub fn set_max_log_file_size(&mut self, size: usize) {
        self.info_log.max_file_size = size;
        self.recorded.set("max_log_file_size", size);
    }

    /// Starts a new `LOG` file once the current one is `secs` seconds old
    /// (0, the default: never for its age).
    pub fn set_log_file_time_to_roll(&mut self, secs: usize) {
        self.info_log.time_to_roll_secs = secs;
        self.recorded.set("log_file_time_to_roll", secs);
    }

    /// Accepted for compatibility; AlexDB does not recycle log files, so this has no effect.
    pub fn set_recycle_log_file_num(&mut self, num: usize) {
        self.recorded.set("recycle_log_file_num", num);
    }

    /// Accepted for compatibility; AlexDB does not dump allocator statistics into `LOG`, so this has no effect.
    pub fn set_dump_malloc_stats(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB has no levels to reserve, so this has no effect.
    pub fn set_allow_ingest_behind(&mut self, val: bool) {
        self.recorded.set("allow_ingest_behind", flag(val));
    }

    /// Opens the database within `write_buffer_manager`'s memory budget
    /// (see [`WriteBufferManager`]: AlexDB has no write buffers, and bounds
    /// its index, its free index memory and compaction's filters by it).
    pub fn set_write_buffer_manager(&mut self, write_buffer_manager: &WriteBufferManager) {
        self.memory_budget = Some(write_buffer_manager.memory_budget());
    }

    /// Accepted for compatibility; AlexDB already defers file deletion to the background, so this has no effect.
    pub fn set_avoid_unnecessary_blocking_io(&mut self, val: bool) {
        self.recorded
            .set("avoid_unnecessary_blocking_io", flag(val));
    }
}
