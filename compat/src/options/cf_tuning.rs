//! Column-family tuning knobs of [`Options`] that AlexDB accepts and ignores:
//! write buffers, levels and compaction, compression, filters, table
//! formats and blob files.
//!
//! AlexDB stores data in its own segment format behind a learned index, so
//! these setters exist for compatibility, with the same signatures as
//! rocksdb 0.25: they have no effect but to be printed in the `LOG` file's
//! options dump.

use super::cache::Cache;
use super::compaction::{FifoCompactOptions, UniversalCompactOptions};
use super::db_options::Options;
use super::enums::{CompactionPri, DBCompactionStyle, DBCompressionType, MemtableFactory};
use super::recorded::{
    LEVEL_MULTIPLIER_NAMES, compaction_pri_name, compaction_style_name, compression_name, fixed6,
    flag, memtable_factory_name,
};
use super::table::{BlockBasedOptions, CuckooTableOptions, PlainTableFactoryOptions};

impl Options {
    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn optimize_level_style_compaction(&mut self, _memtable_memory_budget: usize) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn optimize_universal_style_compaction(&mut self, _memtable_memory_budget: usize) {}

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_type(&mut self, t: DBCompressionType) {
        self.recorded.set("compression", compression_name(t));
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_options_parallel_threads(&mut self, num: i32) {
        self.recorded.set("compression_opts.parallel_threads", num);
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_compression_type(&mut self, t: DBCompressionType) {
        self.recorded
            .set("bottommost_compression", compression_name(t));
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_per_level(&mut self, level_types: &[DBCompressionType]) {
        self.compression_per_level = level_types.iter().map(|&t| compression_name(t)).collect();
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_compression_options(
        &mut self,
        w_bits: i32,
        level: i32,
        strategy: i32,
        max_dict_bytes: i32,
    ) {
        self.recorded.set("compression_opts.window_bits", w_bits);
        self.recorded.set("compression_opts.level", level);
        self.recorded.set("compression_opts.strategy", strategy);
        self.recorded
            .set("compression_opts.max_dict_bytes", max_dict_bytes);
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_compression_options(
        &mut self,
        w_bits: i32,
        level: i32,
        strategy: i32,
        max_dict_bytes: i32,
        enabled: bool,
    ) {
        self.recorded
            .set("bottommost_compression_opts.window_bits", w_bits);
        self.recorded
            .set("bottommost_compression_opts.level", level);
        self.recorded
            .set("bottommost_compression_opts.strategy", strategy);
        self.recorded
            .set("bottommost_compression_opts.max_dict_bytes", max_dict_bytes);
        self.recorded
            .set("bottommost_compression_opts.enabled", enabled);
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_zstd_max_train_bytes(&mut self, value: i32) {
        self.recorded
            .set("compression_opts.zstd_max_train_bytes", value);
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_bottommost_zstd_max_train_bytes(&mut self, value: i32, enabled: bool) {
        self.recorded
            .set("bottommost_compression_opts.zstd_max_train_bytes", value);
        self.recorded
            .set("bottommost_compression_opts.enabled", enabled);
    }

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_level_compaction_dynamic_level_bytes(&mut self, v: bool) {
        self.recorded
            .set("level_compaction_dynamic_level_bytes", flag(v));
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_periodic_compaction_seconds(&mut self, secs: u64) {
        self.recorded.set("periodic_compaction_seconds", secs);
    }

    /// Accepted for compatibility; AlexDB's learned index already serves point lookups, so this has no effect.
    pub fn optimize_for_point_lookup(&mut self, _block_cache_size_mb: u64) {}

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_optimize_filters_for_hits(&mut self, optimize_for_hits: bool) {
        self.recorded
            .set("optimize_filters_for_hits", flag(optimize_for_hits));
    }

    /// Accepted for compatibility; AlexDB sizes its own segments, so this has no effect.
    pub fn set_target_file_size_multiplier(&mut self, multiplier: i32) {
        self.recorded.set("target_file_size_multiplier", multiplier);
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_min_write_buffer_number(&mut self, nbuf: i32) {
        self.recorded.set("min_write_buffer_number_to_merge", nbuf);
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_max_write_buffer_number(&mut self, nbuf: i32) {
        self.recorded.set("max_write_buffer_number", nbuf);
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_db_write_buffer_size(&mut self, size: usize) {
        self.recorded.set("db_write_buffer_size", size);
    }

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_base(&mut self, size: u64) {
        self.recorded.set("max_bytes_for_level_base", size);
    }

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_multiplier(&mut self, mul: f64) {
        self.recorded
            .set("max_bytes_for_level_multiplier", fixed6(mul));
    }

    /// Accepted for compatibility; AlexDB sizes its own segments, so this has no effect.
    pub fn set_target_file_size_base(&mut self, size: u64) {
        self.recorded.set("target_file_size_base", size);
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_min_write_buffer_number_to_merge(&mut self, to_merge: i32) {
        self.recorded
            .set("min_write_buffer_number_to_merge", to_merge);
    }

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_level_zero_file_num_compaction_trigger(&mut self, n: i32) {
        self.recorded.set("level0_file_num_compaction_trigger", n);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_compaction_pri(&mut self, pri: CompactionPri) {
        self.recorded
            .set("compaction_pri", compaction_pri_name(pri));
    }

    /// Accepted for compatibility; AlexDB never slows writes down, so this has no effect.
    pub fn set_level_zero_slowdown_writes_trigger(&mut self, n: i32) {
        self.recorded.set("level0_slowdown_writes_trigger", n);
    }

    /// Accepted for compatibility; AlexDB never stops writes, so this has no effect.
    pub fn set_level_zero_stop_writes_trigger(&mut self, n: i32) {
        self.recorded.set("level0_stop_writes_trigger", n);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_compaction_style(&mut self, style: DBCompactionStyle) {
        self.recorded
            .set("compaction_style", compaction_style_name(style));
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_universal_compaction_options(&mut self, uco: &UniversalCompactOptions) {
        self.recorded.extend(&uco.recorded);
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_fifo_compaction_options(&mut self, fco: &FifoCompactOptions) {
        self.recorded.extend(&fco.recorded);
    }

    /// Pauses background compaction (`compact_range` still compacts), as
    /// bulk loads do before one manual compaction. AlexDB's column families
    /// share their files, so the pause holds while every open column family
    /// has it set; `set_options` with `disable_auto_compactions` changes it
    /// at run time.
    pub fn set_disable_auto_compactions(&mut self, disable: bool) {
        self.recorded.set("disable_auto_compactions", flag(disable));
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_memtable_huge_page_size(&mut self, size: usize) {
        self.recorded.set("memtable_huge_page_size", size);
    }

    /// The most merge operands a key stacks before a merge writes the
    /// merged value (as RocksDB: reads then merge at most this many
    /// operands). 0, the default, leaves AlexDB's own bound (32
    /// operands; see `alexdb_engine::merge::DEFAULT_MERGE_STACK_LIMIT`).
    pub fn set_max_successive_merges(&mut self, num: usize) {
        self.recorded.set("max_successive_merges", num);
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_bloom_locality(&mut self, v: u32) {
        self.recorded.set("bloom_locality", v);
    }

    /// Accepted for compatibility; AlexDB never updates in place, so this has no effect.
    pub fn set_inplace_update_support(&mut self, enabled: bool) {
        self.recorded.set("inplace_update_support", flag(enabled));
    }

    /// Accepted for compatibility; AlexDB never updates in place, so this has no effect.
    pub fn set_inplace_update_locks(&mut self, num: usize) {
        self.recorded.set("inplace_update_num_locks", num);
    }

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_max_bytes_for_level_multiplier_additional(&mut self, level_values: &[i32]) {
        for (name, value) in LEVEL_MULTIPLIER_NAMES.iter().zip(level_values) {
            self.recorded.set(name, value);
        }
    }

    /// Accepted for compatibility; AlexDB has its own write buffer, so this has no effect.
    pub fn set_memtable_factory(&mut self, factory: MemtableFactory) {
        self.recorded
            .set("memtable_factory", memtable_factory_name(&factory));
    }

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_block_based_table_factory(&mut self, factory: &BlockBasedOptions) {
        self.table = Some(factory.clone());
        self.recorded.set("table_factory", "BlockBasedTable");
    }

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_cuckoo_table_factory(&mut self, _factory: &CuckooTableOptions) {
        self.recorded.set("table_factory", "CuckooTable");
    }

    /// Accepted for compatibility; AlexDB stores data in its own segment format, so this has no effect.
    pub fn set_plain_table_factory(&mut self, _options: &PlainTableFactoryOptions) {
        self.recorded.set("table_factory", "PlainTable");
    }

    /// Accepted for compatibility; AlexDB does not compress its segments, so this has no effect.
    pub fn set_min_level_to_compress(&mut self, _lvl: i32) {}

    /// Accepted for compatibility; AlexDB has no levels, so this has no effect.
    pub fn set_num_levels(&mut self, n: i32) {
        self.recorded.set("num_levels", n);
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_memtable_prefix_bloom_ratio(&mut self, ratio: f64) {
        self.recorded
            .set("memtable_prefix_bloom_size_ratio", fixed6(ratio));
    }

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn set_max_compaction_bytes(&mut self, nbytes: u64) {
        self.recorded.set("max_compaction_bytes", nbytes);
    }

    /// Accepted for compatibility; AlexDB never slows writes down, so this has no effect.
    pub fn set_soft_pending_compaction_bytes_limit(&mut self, limit: usize) {
        self.recorded
            .set("soft_pending_compaction_bytes_limit", limit);
    }

    /// Accepted for compatibility; AlexDB never stops writes, so this has no effect.
    pub fn set_hard_pending_compaction_bytes_limit(&mut self, limit: usize) {
        self.recorded
            .set("hard_pending_compaction_bytes_limit", limit);
    }

    /// Accepted for compatibility; AlexDB manages its own write buffers, so this has no effect.
    pub fn set_arena_block_size(&mut self, size: usize) {
        self.recorded.set("arena_block_size", size);
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_memtable_whole_key_filtering(&mut self, whole_key_filter: bool) {
        self.recorded
            .set("memtable_whole_key_filtering", flag(whole_key_filter));
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_enable_blob_files(&mut self, val: bool) {
        self.recorded.set("enable_blob_files", val);
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_min_blob_size(&mut self, val: u64) {
        self.recorded.set("min_blob_size", val);
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_file_size(&mut self, val: u64) {
        self.recorded.set("blob_file_size", val);
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_compression_type(&mut self, val: DBCompressionType) {
        self.recorded
            .set("blob_compression_type", compression_name(val));
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_enable_blob_gc(&mut self, val: bool) {
        self.recorded.set("enable_blob_garbage_collection", val);
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_gc_age_cutoff(&mut self, val: f64) {
        self.recorded
            .set("blob_garbage_collection_age_cutoff", fixed6(val));
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_gc_force_threshold(&mut self, val: f64) {
        self.recorded
            .set("blob_garbage_collection_force_threshold", fixed6(val));
    }

    /// Accepted for compatibility; AlexDB stores values in its own segments, so this has no effect.
    pub fn set_blob_compaction_readahead_size(&mut self, val: u64) {
        self.recorded.set("blob_compaction_readahead_size", val);
    }

    /// Accepted for compatibility; AlexDB has no blob cache, so this has no effect.
    pub fn set_blob_cache(&mut self, _cache: &Cache) {}

    /// Accepted for compatibility; AlexDB chooses its own compaction, so this has no effect.
    pub fn add_compact_on_deletion_collector_factory(
        &mut self,
        window_size: usize,
        num_dels_trigger: usize,
        deletion_ratio: f64,
    ) {
        self.recorded.set(
            "table_properties_collectors",
            format_args!(
                "CompactOnDeletionCollector (Sliding window size = {window_size} \
                 Deletion trigger = {num_dels_trigger} Deletion ratio = {deletion_ratio}); "
            ),
        );
    }

    /// Sets the compression of the write-ahead log; only
    /// [`DBCompressionType::None`] and [`DBCompressionType::Zstd`] are valid,
    /// and any other type panics, as in rocksdb. AlexDB does not compress its
    /// log, so a valid choice has no effect.
    pub fn set_wal_compression_type(&mut self, t: DBCompressionType) {
        match t {
            DBCompressionType::None | DBCompressionType::Zstd => {
                self.recorded.set("wal_compression", t as i32);
            }
            other => panic!("{other:?} is not supported for WAL compression"),
        }
    }
}
