//! Column-family tuning knobs of [`Options`] that AlexDB accepts and ignores:
//! write buffers, levels and compaction, compression, filters, table
//! formats and blob files.
//!
//! AlexDB stores data in its own segment format behind a learned index, so
//! these setters exist for compatibility, with the same signatures as
//! rocksdb 0.25, and have no effect.

use crate::compaction_filter_factory::CompactionFilterFactory;

use super::cache::Cache;
use super::compaction::{FifoCompactOptions, UniversalCompactOptions};
use super::db_options::Options;
use super::enums::{CompactionPri, DBCompactionStyle, DBCompressionType, MemtableFactory};
use super::table::{BlockBasedOptions, CuckooTableOptions, PlainTableFactoryOptions};

impl Options {
    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn optimize_level_style_compaction(&mut self, _memtable_memory_budget: usize) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn optimize_universal_style_compaction(&mut self, _memtable_memory_budget: usize) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_type(&mut self, _t: DBCompressionType) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_options_parallel_threads(&mut self, _num: i32) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_compression_type(&mut self, _t: DBCompressionType) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_per_level(&mut self, _level_types: &[DBCompressionType]) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_options(
        &mut self,
        _w_bits: i32,
        _level: i32,
        _strategy: i32,
        _max_dict_bytes: i32,
    ) {
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_compression_options(
        &mut self,
        _w_bits: i32,
        _level: i32,
        _strategy: i32,
        _max_dict_bytes: i32,
        _enabled: bool,
    ) {
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_zstd_max_train_bytes(&mut self, _value: i32) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_zstd_max_train_bytes(&mut self, _value: i32, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_level_compaction_dynamic_level_bytes(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_periodic_compaction_seconds(&mut self, _secs: u64) {}

    /// Accepted for compatibility; AlexDB's learned index already serves point lookups, so this has no effect.
    pub fn optimize_for_point_lookup(&mut self, _block_cache_size_mb: u64) {}

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_optimize_filters_for_hits(&mut self, _optimize_for_hits: bool) {}

    /// Accepted for compatibility; AlexDB sizes its own segments, so this has no effect.
    pub fn set_target_file_size_multiplier(&mut self, _multiplier: i32) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_min_write_buffer_number(&mut self, _nbuf: i32) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_max_write_buffer_number(&mut self, _nbuf: i32) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_db_write_buffer_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_base(&mut self, _size: u64) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_multiplier(&mut self, _mul: f64) {}

    /// Accepted for compatibility; AlexDB sizes its own segments, so this has no effect.
    pub fn set_target_file_size_base(&mut self, _size: u64) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_min_write_buffer_number_to_merge(&mut self, _to_merge: i32) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_level_zero_file_num_compaction_trigger(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_compaction_pri(&mut self, _pri: CompactionPri) {}

    /// Accepted for compatibility; AlexDB never slows writes down, so this has no effect.
    pub fn set_level_zero_slowdown_writes_trigger(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB never stops writes, so this has no effect.
    pub fn set_level_zero_stop_writes_trigger(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_compaction_style(&mut self, _style: DBCompactionStyle) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_universal_compaction_options(&mut self, _uco: &UniversalCompactOptions) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_fifo_compaction_options(&mut self, _fco: &FifoCompactOptions) {}

    /// Accepted for compatibility; AlexDB schedules its own compactions, so this has no effect.
    pub fn set_disable_auto_compactions(&mut self, _disable: bool) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_memtable_huge_page_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB resolves merges on read and compaction, so this has no effect.
    pub fn set_max_successive_merges(&mut self, _num: usize) {}

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_bloom_locality(&mut self, _v: u32) {}

    /// Accepted for compatibility; AlexDB never updates in place, so this has no effect.
    pub fn set_inplace_update_support(&mut self, _enabled: bool) {}

    /// Accepted for compatibility; AlexDB never updates in place, so this has no effect.
    pub fn set_inplace_update_locks(&mut self, _num: usize) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_multiplier_additional(&mut self, _level_values: &[i32]) {}

    /// Accepted for compatibility; AlexDB has its own write buffer, so this has no effect.
    pub fn set_memtable_factory(&mut self, _factory: MemtableFactory) {}

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_block_based_table_factory(&mut self, _factory: &BlockBasedOptions) {}

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_cuckoo_table_factory(&mut self, _factory: &CuckooTableOptions) {}

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_plain_table_factory(&mut self, _options: &PlainTableFactoryOptions) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_min_level_to_compress(&mut self, _lvl: i32) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_num_levels(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_memtable_prefix_bloom_ratio(&mut self, _ratio: f64) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_max_compaction_bytes(&mut self, _nbytes: u64) {}

    /// Accepted for compatibility; AlexDB never slows writes down, so this has no effect.
    pub fn set_soft_pending_compaction_bytes_limit(&mut self, _limit: usize) {}

    /// Accepted for compatibility; AlexDB never stops writes, so this has no effect.
    pub fn set_hard_pending_compaction_bytes_limit(&mut self, _limit: usize) {}

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_arena_block_size(&mut self, _size: usize) {}

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_memtable_whole_key_filtering(&mut self, _whole_key_filter: bool) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_enable_blob_files(&mut self, _val: bool) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_min_blob_size(&mut self, _val: u64) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_file_size(&mut self, _val: u64) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_compression_type(&mut self, _val: DBCompressionType) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_enable_blob_gc(&mut self, _val: bool) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_gc_age_cutoff(&mut self, _val: f64) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_gc_force_threshold(&mut self, _val: f64) {}

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_compaction_readahead_size(&mut self, _val: u64) {}

    /// Accepted for compatibility; AlexDB has no blob cache, so this has no effect.
    pub fn set_blob_cache(&mut self, _cache: &Cache) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn add_compact_on_deletion_collector_factory(
        &mut self,
        _window_size: usize,
        _num_dels_trigger: usize,
        _deletion_ratio: f64,
    ) {
    }

    /// Sets the compression of the write-ahead log; only
    /// [`DBCompressionType::None`] and [`DBCompressionType::Zstd`] are valid,
    /// and any other type panics, as in rocksdb. AlexDB does not compress its
    /// log, so a valid choice has no effect.
    pub fn set_wal_compression_type(&mut self, t: DBCompressionType) {
        match t {
            DBCompressionType::None | DBCompressionType::Zstd => {}
            other => panic!("{other:?} is not supported for WAL compression"),
        }
    }

    /// Records a compaction filter factory. AlexDB does not run factories
    /// yet, so opening a database (or creating a column family) with these
    /// options fails with `Not implemented` rather than ignore the filter.
    pub fn set_compaction_filter_factory<F>(&mut self, factory: F)
    where
        F: CompactionFilterFactory + 'static,
    {
        self.compaction_filter_factory = Some(factory.name().to_string_lossy().into_owned());
    }
}
