//! Table format options: [`BlockBasedOptions`], [`CuckooTableOptions`] and
//! [`PlainTableFactoryOptions`].
//!
//! AlexDB stores data in its own segment format, with a learned index instead
//! of index blocks and filters, and reads it through memory maps instead of a
//! block cache. These options are accepted so that tuning code compiles and
//! runs; none of them changes how AlexDB stores or finds data.

use super::cache::Cache;
use super::enums::{
    BlockBasedIndexType, BlockBasedTablePinningTier, ChecksumType, DataBlockIndexType,
    KeyEncodingType,
};
use super::recorded::{Recorded, fixed6, flag};

/// Settings of RocksDB's block-based table format, for
/// `Options::set_block_based_table_factory`.
///
/// AlexDB does not use block-based tables; every setting is accepted, has
/// no effect on storage (the block cache is kept alive, as in RocksDB) and
/// is printed in the `LOG` file's options dump.
#[derive(Clone, Debug, Default)]
pub struct BlockBasedOptions {
    block_cache: Option<Cache>,
    /// The settings as `LOG` prints them (see `Recorded`).
    recorded: Recorded,
}

impl BlockBasedOptions {
    /// Accepted for compatibility; AlexDB has no data blocks, so this has no effect.
    pub fn set_block_size(&mut self, size: usize) {
        self.recorded.set("block_size", size);
    }

    /// Accepted for compatibility; AlexDB has no metadata blocks, so this has no effect.
    pub fn set_metadata_block_size(&mut self, size: usize) {
        self.recorded.set("metadata_block_size", size);
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_partition_filters(&mut self, size: bool) {
        self.recorded.set("partition_filters", flag(size));
    }

    /// Accepted for compatibility; AlexDB has no block cache, so the cache
    /// is only kept alive and otherwise has no effect.
    pub fn set_block_cache(&mut self, cache: &Cache) {
        self.block_cache = Some(cache.clone());
        self.recorded.set("no_block_cache", 0);
    }

    /// The block cache set, if any.
    pub(crate) fn block_cache(&self) -> Option<&Cache> {
        self.block_cache.as_ref()
    }

    /// The settings as `LOG` prints them.
    pub(crate) fn recorded(&self) -> &Recorded {
        &self.recorded
    }

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn disable_cache(&mut self) {
        self.block_cache = None;
        self.recorded.set("no_block_cache", 1);
    }

    /// Accepted for compatibility; AlexDB's learned index needs no Bloom
    /// filter, so this has no effect.
    pub fn set_bloom_filter(&mut self, _bits_per_key: f64, _block_based: bool) {
        self.recorded.set("filter_policy", "bloomfilter");
    }

    /// Accepted for compatibility; AlexDB's learned index needs no Ribbon
    /// filter, so this has no effect.
    pub fn set_ribbon_filter(&mut self, _bloom_equivalent_bits_per_key: f64) {
        self.recorded.set("filter_policy", "ribbonfilter");
    }

    /// Accepted for compatibility; AlexDB's learned index needs no filter,
    /// so this has no effect.
    pub fn set_hybrid_ribbon_filter(
        &mut self,
        _bloom_equivalent_bits_per_key: f64,
        _bloom_before_level: i32,
    ) {
        self.recorded.set("filter_policy", "ribbonfilter");
    }

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_cache_index_and_filter_blocks(&mut self, v: bool) {
        self.recorded.set("cache_index_and_filter_blocks", flag(v));
    }

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_cache_index_and_filter_blocks_with_high_priority(&mut self, v: bool) {
        self.recorded
            .set("cache_index_and_filter_blocks_with_high_priority", flag(v));
    }

    /// Accepted for compatibility; AlexDB uses its learned index, so this has no effect.
    pub fn set_index_type(&mut self, index_type: BlockBasedIndexType) {
        self.recorded.set("index_type", index_type as i32);
    }

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_pin_l0_filter_and_index_blocks_in_cache(&mut self, v: bool) {
        self.recorded
            .set("pin_l0_filter_and_index_blocks_in_cache", flag(v));
    }

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_pin_top_level_index_and_filter(&mut self, v: bool) {
        self.recorded.set("pin_top_level_index_and_filter", flag(v));
    }

    /// Accepted for compatibility; AlexDB versions its own segment format,
    /// so this has no effect.
    pub fn set_format_version(&mut self, version: i32) {
        self.recorded.set("format_version", version);
    }

    /// Accepted for compatibility; AlexDB has no data blocks, so this has no effect.
    pub fn set_block_restart_interval(&mut self, interval: i32) {
        self.recorded.set("block_restart_interval", interval);
    }

    /// Accepted for compatibility; AlexDB has no index blocks, so this has no effect.
    pub fn set_index_block_restart_interval(&mut self, interval: i32) {
        self.recorded.set("index_block_restart_interval", interval);
    }

    /// Accepted for compatibility; AlexDB has no data blocks, so this has no effect.
    pub fn set_data_block_index_type(&mut self, index_type: DataBlockIndexType) {
        self.recorded
            .set("data_block_index_type", index_type as i32);
    }

    /// Accepted for compatibility; AlexDB has no data blocks, so this has no effect.
    pub fn set_data_block_hash_ratio(&mut self, ratio: f64) {
        self.recorded
            .set("data_block_hash_table_util_ratio", fixed6(ratio));
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_whole_key_filtering(&mut self, v: bool) {
        self.recorded.set("whole_key_filtering", flag(v));
    }

    /// Accepted for compatibility; AlexDB always checksums records with
    /// CRC32C, so this has no effect.
    pub fn set_checksum_type(&mut self, checksum_type: ChecksumType) {
        self.recorded.set("checksum", checksum_type as i32);
    }

    /// Accepted for compatibility; AlexDB has no filters, so this has no effect.
    pub fn set_optimize_filters_for_memory(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_top_level_index_pinning_tier(&mut self, _tier: BlockBasedTablePinningTier) {}

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_partition_pinning_tier(&mut self, _tier: BlockBasedTablePinningTier) {}

    /// Accepted for compatibility; AlexDB has no block cache, so this has no effect.
    pub fn set_unpartitioned_pinning_tier(&mut self, _tier: BlockBasedTablePinningTier) {}
}

/// Settings of RocksDB's cuckoo hash table format, for
/// `Options::set_cuckoo_table_factory`.
///
/// AlexDB does not use cuckoo tables; every setting is accepted and has no effect.
#[derive(Clone, Debug, Default)]
pub struct CuckooTableOptions {}

impl CuckooTableOptions {
    /// Accepted for compatibility; AlexDB has no cuckoo tables, so this has no effect.
    pub fn set_hash_ratio(&mut self, _ratio: f64) {}

    /// Accepted for compatibility; AlexDB has no cuckoo tables, so this has no effect.
    pub fn set_max_search_depth(&mut self, _depth: u32) {}

    /// Accepted for compatibility; AlexDB has no cuckoo tables, so this has no effect.
    pub fn set_cuckoo_block_size(&mut self, _size: u32) {}

    /// Accepted for compatibility; AlexDB has no cuckoo tables, so this has no effect.
    pub fn set_identity_as_first_hash(&mut self, _flag: bool) {}

    /// Accepted for compatibility; AlexDB has no cuckoo tables, so this has no effect.
    pub fn set_use_module_hash(&mut self, _flag: bool) {}
}

/// Settings of RocksDB's plain table format, for
/// `Options::set_plain_table_factory`.
///
/// AlexDB does not use plain tables; the settings have no effect.
#[derive(Clone, Copy, Debug)]
pub struct PlainTableFactoryOptions {
    /// Fixed key length, or 0 for variable-length keys.
    pub user_key_length: u32,
    /// Bloom filter bits per key.
    pub bloom_bits_per_key: i32,
    /// Hash table utilisation.
    pub hash_table_ratio: f64,
    /// Keys per index record.
    pub index_sparseness: usize,
    /// Huge page size for the index, or 0.
    pub huge_page_tlb_size: usize,
    /// Key encoding.
    pub encoding_type: KeyEncodingType,
    /// Whether to read files by full scan only.
    pub full_scan_mode: bool,
    /// Whether to store the index in the file.
    pub store_index_in_file: bool,
}
