//! The options API compiles and runs as rocksdb users write it: tuned
//! setups modelled on zebra, openraft, kvdb-rocksdb and opendal, read and
//! write options, bounds, and the errors the options API can return.

// Written against the rocksdb API, as users of the drop-in write it.
use alexdb as rocksdb;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, BottommostLevelCompaction, Cache,
    ColumnFamilyDescriptor, CompactOptions, CuckooTableOptions, DBCompactionStyle,
    DBCompressionType, DBPath, DBRecoveryMode, DEFAULT_COLUMN_FAMILY_NAME, DataBlockIndexType, Env,
    ErrorKind, FifoCompactOptions, FlushOptions, IngestExternalFileOptions, KeyEncodingType,
    LogLevel, LruCacheOptions, MemtableFactory, MergeOperands, Options, PlainTableFactoryOptions,
    PrefixRange, ReadOptions, ReadTier, SliceTransform, UniversalCompactOptions,
    UniversalCompactionStopStyle, WaitForCompactOptions, WriteBufferManager, WriteOptions,
    properties,
};

fn concat_merge(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands {
        out.extend_from_slice(operand);
    }
    Some(out)
}

fn first_three(key: &[u8]) -> &[u8] {
    &key[..3]
}

/// Consumes descriptors the way `DB::open_cf_descriptors` does.
fn open_names(descriptors: impl IntoIterator<Item = ColumnFamilyDescriptor>) -> Vec<String> {
    descriptors
        .into_iter()
        .map(|descriptor| descriptor.name().to_owned())
        .collect()
}

/// A block-based, cached, compressed setup like zebra's and kvdb-rocksdb's.
fn tuned_options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.increase_parallelism(4);
    opts.set_max_background_jobs(4);
    opts.set_max_open_files(1024);
    opts.set_use_fsync(false);
    opts.set_bytes_per_sync(1 << 20);
    opts.set_compression_type(DBCompressionType::Lz4);
    opts.set_bottommost_compression_type(DBCompressionType::Zstd);
    opts.set_compression_per_level(&[DBCompressionType::None, DBCompressionType::Lz4]);
    opts.set_wal_compression_type(DBCompressionType::Zstd);
    opts.set_level_compaction_dynamic_level_bytes(true);
    opts.optimize_level_style_compaction(512 << 20);
    opts.set_write_buffer_size(128 << 20);
    opts.set_max_write_buffer_number(4);
    opts.set_target_file_size_base(64 << 20);
    opts.set_keep_log_file_num(10);
    opts.set_log_level(LogLevel::Warn);
    opts.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    opts.set_compaction_style(DBCompactionStyle::Level);
    opts.set_memtable_factory(MemtableFactory::Vector);
    opts.set_allow_concurrent_memtable_write(false);
    opts.enable_statistics();

    let cache = Cache::new_lru_cache(256 << 20);
    let mut block_opts = BlockBasedOptions::default();
    block_opts.set_block_cache(&cache);
    block_opts.set_bloom_filter(10.0, false);
    block_opts.set_block_size(16 * 1024);
    block_opts.set_cache_index_and_filter_blocks(true);
    block_opts.set_pin_l0_filter_and_index_blocks_in_cache(true);
    block_opts.set_format_version(5);
    block_opts.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    block_opts.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    opts.set_block_based_table_factory(&block_opts);
    opts.set_row_cache(&cache);
    opts
}

#[test]
fn tuned_setup_with_column_families() {
    let opts = tuned_options();
    assert!(opts.get_statistics().is_some());
    assert!(Options::default().get_statistics().is_none());

    let mut cf_opts = opts.clone();
    cf_opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(8));
    cf_opts.set_memtable_prefix_bloom_ratio(0.1);
    cf_opts.set_merge_operator_associative("concat", concat_merge);
    let descriptors = vec![
        ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, opts.clone()),
        ColumnFamilyDescriptor::new("state", cf_opts),
        ColumnFamilyDescriptor::new(String::from("blocks"), Options::default()),
    ];
    assert_eq!(open_names(descriptors), ["default", "state", "blocks"]);
}

#[test]
fn raft_log_style_setup() {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_manual_wal_flush(true);
    opts.set_atomic_flush(true);
    opts.set_max_total_wal_size(1 << 30);
    opts.set_merge_operator("full", concat_merge, concat_merge);
    opts.set_comparator("reverse", Box::new(|a: &[u8], b: &[u8]| b.cmp(a)));
    opts.set_prefix_extractor(SliceTransform::create("three", first_three, None));
    opts.set_prefix_extractor(SliceTransform::create_noop());
    opts.set_compaction_filter(
        "drop_underscore",
        |_level: u32, key: &[u8], _value: &[u8]| {
            if key.starts_with(b"_") {
                rocksdb::CompactionDecision::Remove
            } else {
                rocksdb::compaction_filter::Decision::Keep
            }
        },
    );
    let env = Env::new().unwrap();
    opts.set_env(&env);
    opts.set_db_paths(&[DBPath::new("/tmp/alexdb-extra", 1 << 30).unwrap()]);
    opts.set_wal_dir("/tmp/alexdb-wal");
    opts.set_db_log_dir("/tmp/alexdb-log");
    opts.set_ratelimiter(10 << 20, 100_000, 10);
    let _copy = opts.clone();
}

#[test]
fn table_compaction_and_cache_types() {
    let mut opts = Options::default();
    let mut universal = UniversalCompactOptions::default();
    universal.set_size_ratio(2);
    universal.set_stop_style(UniversalCompactionStopStyle::Total);
    opts.set_universal_compaction_options(&universal);
    let mut fifo = FifoCompactOptions::default();
    fifo.set_max_table_files_size(1 << 30);
    opts.set_fifo_compaction_options(&fifo);
    let mut cuckoo = CuckooTableOptions::default();
    cuckoo.set_hash_ratio(0.8);
    opts.set_cuckoo_table_factory(&cuckoo);
    opts.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 20,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    });

    let mut lru = LruCacheOptions::default();
    lru.set_capacity(1 << 20);
    lru.set_num_shard_bits(4);
    let mut cache = Cache::new_lru_cache_opts(&lru);
    cache.set_capacity(2 << 20);
    assert_eq!(cache.get_usage(), 0);
    assert_eq!(
        Cache::new_hyper_clock_cache(1 << 20, 0).get_pinned_usage(),
        0
    );

    let manager = WriteBufferManager::new_write_buffer_manager_with_cache(100, false, cache);
    assert_eq!(manager.get_buffer_size(), 100);
    assert!(manager.enabled());
    opts.set_write_buffer_manager(&manager);
    drop(opts);
    assert!(manager.enabled());

    let mut compact = CompactOptions::default();
    compact.set_exclusive_manual_compaction(true);
    compact.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    let mut wait = WaitForCompactOptions::default();
    wait.set_flush(true);
    wait.set_timeout(1_000);
}

#[test]
fn read_write_flush_and_ingest_options() {
    let mut write = WriteOptions::default();
    write.set_sync(true);
    write.disable_wal(false);
    write.set_ignore_missing_column_families(true);
    write.set_no_slowdown(false);
    write.set_low_pri(false);
    write.set_memtable_insert_hint_per_batch(false);
    let _ = WriteOptions::new();

    let mut flush = FlushOptions::default();
    flush.set_wait(false);
    let _ = FlushOptions::new();

    let mut ingest = IngestExternalFileOptions::default();
    ingest.set_move_files(true);

    let mut read = ReadOptions::default();
    read.fill_cache(false);
    read.set_total_order_seek(true);
    read.set_prefix_same_as_start(true);
    read.set_verify_checksums(true);
    read.set_readahead_size(4 << 20);
    read.set_tailing(false);
    read.set_pin_data(true);
    read.set_async_io(true);
    read.set_read_tier(ReadTier::All);
    read.set_iterate_lower_bound(b"a".to_vec());
    read.set_iterate_upper_bound(b"z");
    read.set_iterate_range(..);
    read.set_iterate_range(b"a".as_slice()..b"b".as_slice());
    read.set_iterate_range(b"a".to_vec()..);
    read.set_iterate_range(..vec![b'z']);
    read.set_iterate_range(PrefixRange(b"ab".as_slice()));
    read.set_iterate_range(PrefixRange("ab"));
}

#[test]
fn property_names_are_rocksdb_strings() {
    assert_eq!(
        properties::ESTIMATE_NUM_KEYS.as_str(),
        "rocksdb.estimate-num-keys"
    );
    assert_eq!(properties::STATS.as_str(), "rocksdb.stats");
    assert_eq!(
        properties::ESTIMATE_LIVE_DATA_SIZE.as_str(),
        "rocksdb.estimate-live-data-size"
    );
    assert_eq!(
        properties::TOTAL_SST_FILES_SIZE.as_str(),
        "rocksdb.total-sst-files-size"
    );
    assert_eq!(
        properties::LIVE_SST_FILES_SIZE.as_str(),
        "rocksdb.live-sst-files-size"
    );
    assert_eq!(properties::CFSTATS.as_str(), "rocksdb.CFSTATS");
    assert_eq!(
        properties::num_files_at_level(3).as_str(),
        "rocksdb.num-files-at-level3"
    );
    assert_eq!(
        properties::ESTIMATE_NUM_KEYS.as_c_str().to_bytes(),
        b"rocksdb.estimate-num-keys"
    );
}

#[test]
fn option_string_errors_carry_rocksdb_kinds() {
    let mut base = Options::default();
    let parsed = base
        .get_options_from_string("create_if_missing=true;max_open_files=100")
        .unwrap();
    let _ = parsed;

    let err = base.get_options_from_string("no_equals_sign").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().starts_with("Invalid argument: "));

    let err = base
        .get_options_from_string("create_if_missing=maybe")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);

    let env = Env::new().unwrap();
    let err =
        Options::load_latest("/nonexistent", env, false, Cache::new_lru_cache(0)).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::IOError,
        "as RocksDB, which cannot list the directory"
    );
    let message: String = err.clone().into_string();
    assert_eq!(message, err.to_string());
}

#[test]
#[should_panic(expected = "not supported for WAL compression")]
fn wal_compression_rejects_other_codecs_like_rocksdb() {
    Options::default().set_wal_compression_type(DBCompressionType::Lz4);
}
