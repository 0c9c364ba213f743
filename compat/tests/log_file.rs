//! The `LOG` file: RocksDB's options dump at open and at a column family's
//! creation, AlexDB's messages, rolling, retention, `db_log_dir`, and
//! `DB::destroy` removing it.

use std::fs;
use std::path::Path;

use alexdb as rocksdb;

use rocksdb::{
    BlockBasedOptions, Cache, DB, DBCompressionType, FifoCompactOptions, InfoLogger,
    KeyEncodingType, LogLevel, MemtableFactory, Options, PlainTableFactoryOptions,
    UniversalCompactOptions, UniversalCompactionStopStyle,
};

fn read_log(dir: &Path) -> String {
    fs::read_to_string(dir.join("LOG")).expect("the database keeps a LOG file")
}

fn rolled_logs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("LOG.old."))
        .collect();
    names.sort();
    names
}

fn creating() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts
}

#[test]
fn open_writes_rocksdbs_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let _db = DB::open(&creating(), dir.path()).unwrap();
    let log = read_log(dir.path());
    for line in [
        "Options.create_if_missing: 1\n",
        "Options.max_open_files: -1\n",
        "--------------- Options for column family [default]:\n",
        "Options.comparator: leveldb.BytewiseComparator\n",
        "Options.ttl: 2592000\n",
        "  cache_index_and_filter_blocks: 0\n",
        "  format_version: 7\n",
        "  block_cache_name: AutoHyperClockCache\n",
        "Options.write_buffer_size: 67108864\n",
        "Jemalloc supported: 0\n",
    ] {
        assert!(log.contains(line), "{line:?} missing from:\n{log}");
    }
    assert!(log.contains("AlexDB: opened database"), "{log}");
}

#[test]
fn open_writes_the_options_as_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_max_open_files(123);
    opts.set_use_fsync(false);
    opts.set_ttl(86_400);
    opts.set_target_file_size_base(102_030);
    opts.set_compression_type(DBCompressionType::Snappy);
    opts.add_compact_on_deletion_collector_factory(5, 10, 0.5);
    let mut block = BlockBasedOptions::default();
    block.set_block_size(323_232);
    block.set_format_version(5);
    block.set_cache_index_and_filter_blocks(true);
    block.set_data_block_hash_ratio(0.35);
    block.set_block_cache(&Cache::new_lru_cache(115_343_360));
    opts.set_block_based_table_factory(&block);
    let _db = DB::open(&opts, dir.path()).unwrap();
    let log = read_log(dir.path());
    for line in [
        "Options.max_open_files: 123\n",
        "Options.use_fsync: 0\n",
        "Options.ttl: 86400\n",
        "Options.target_file_size_base: 102030\n",
        "Options.compression: Snappy\n",
        "CompactOnDeletionCollector (Sliding window size = 5 Deletion trigger = 10 Deletion ratio = 0.5)",
        "  block_size: 323232\n",
        "  format_version: 5\n",
        "  cache_index_and_filter_blocks: 1\n",
        "  data_block_hash_table_util_ratio: 0.350000\n",
        "  block_cache_name: LRUCache\n",
        "block_cache_options:\n    capacity : 115343360\n",
    ] {
        assert!(log.contains(line), "{line:?} missing from:\n{log}");
    }
}

#[test]
fn compaction_styles_memtables_and_levels_are_logged_as_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    let mut universal = UniversalCompactOptions::default();
    universal.set_size_ratio(7);
    universal.set_stop_style(UniversalCompactionStopStyle::Similar);
    opts.set_universal_compaction_options(&universal);
    let mut fifo = FifoCompactOptions::default();
    fifo.set_max_table_files_size(12_345);
    opts.set_fifo_compaction_options(&fifo);
    opts.set_memtable_factory(MemtableFactory::Vector);
    opts.set_max_bytes_for_level_multiplier_additional(&[3, 4]);
    opts.set_compression_per_level(&[DBCompressionType::None, DBCompressionType::Zstd]);
    let _db = DB::open(&opts, dir.path()).unwrap();
    let log = read_log(dir.path());
    for line in [
        "Options.compaction_options_universal.size_ratio: 7\n",
        "Options.compaction_options_universal.stop_style: kCompactionStopStyleSimilarSize\n",
        "Options.compaction_options_fifo.max_table_files_size: 12345\n",
        "Options.memtable_factory: VectorRepFactory\n",
        "Options.max_bytes_for_level_multiplier_addtl[1]: 4\n",
        "Options.max_bytes_for_level_multiplier_addtl[2]: 1\n",
        "Options.compression[0]: NoCompression\n",
        "Options.compression[1]: ZSTD\n",
    ] {
        assert!(log.contains(line), "{line:?} missing from:\n{log}");
    }
    assert!(!log.contains("Options.compression: "), "{log}");
}

#[test]
fn a_plain_table_factory_is_named_without_block_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    let _db = DB::open(&opts, dir.path()).unwrap();
    let log = read_log(dir.path());
    assert!(log.contains("Options.table_factory: PlainTable\n"), "{log}");
    assert!(!log.contains("table_factory options:"), "{log}");
}

#[test]
fn a_new_column_family_logs_its_options() {
    let dir = tempfile::tempdir().unwrap();
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = DB::open(&creating(), dir.path()).unwrap();
    let mut cf_opts = Options::default();
    cf_opts.set_target_file_size_base(4_242);
    db.create_cf("events", &cf_opts).unwrap();
    let log = read_log(dir.path());
    let section = log
        .split("--------------- Options for column family [events]:")
        .nth(1)
        .expect("the new family's section");
    assert!(section.contains("Options.target_file_size_base: 4242\n"));
}

#[test]
fn reopening_rolls_the_log_and_keeps_as_many_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_keep_log_file_num(2);
    for round in 0..4 {
        let db = DB::open(&opts, dir.path()).unwrap();
        db.put(format!("k{round}"), b"v").unwrap();
    }
    assert_eq!(rolled_logs(dir.path()).len(), 2);
    assert!(read_log(dir.path()).contains("Options.keep_log_file_num: 2\n"));
}

#[test]
fn a_full_log_is_rolled() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_max_log_file_size(1);
    drop(DB::open(&opts, dir.path()).unwrap());
    let rolled = rolled_logs(dir.path());
    assert!(!rolled.is_empty());
    let first = fs::read_to_string(dir.path().join(&rolled[0])).unwrap();
    assert!(first.contains("Options.max_log_file_size: 1\n"), "{first}");
}

#[test]
fn the_level_filters_alexdbs_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_log_level(LogLevel::Warn);
    drop(DB::open(&opts, dir.path()).unwrap());
    let log = read_log(dir.path());
    assert!(log.contains("Options.create_if_missing: 1\n"));
    assert!(!log.contains("AlexDB: opened database"), "{log}");
}

#[test]
fn an_info_logger_replaces_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = creating();
    opts.set_info_logger(InfoLogger::new_callback_logger(LogLevel::Info, |_, _| {}));
    drop(DB::open(&opts, dir.path()).unwrap());
    assert!(!dir.path().join("LOG").exists());
}

#[test]
fn a_read_only_open_leaves_the_log_alone() {
    let dir = tempfile::tempdir().unwrap();
    drop(DB::open(&creating(), dir.path()).unwrap());
    let before = read_log(dir.path());
    drop(DB::open_for_read_only(&Options::default(), dir.path(), false).unwrap());
    assert_eq!(read_log(dir.path()), before);
    assert!(rolled_logs(dir.path()).is_empty());
}

#[test]
fn db_log_dir_holds_the_log_and_destroy_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("db");
    let mut opts = creating();
    opts.set_db_log_dir(logs.path());
    drop(DB::open(&opts, &db_path).unwrap());
    drop(DB::open(&opts, &db_path).unwrap());
    let names: Vec<String> = fs::read_dir(logs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.contains("_db_LOG")), "{names:?}");
    assert!(!db_path.join("LOG").exists());
    DB::destroy(&opts, &db_path).unwrap();
    assert!(!db_path.exists());
    assert_eq!(fs::read_dir(logs.path()).unwrap().count(), 0);
}

#[test]
fn destroy_removes_the_log_files() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("db");
    drop(DB::open(&creating(), &db_path).unwrap());
    drop(DB::open(&creating(), &db_path).unwrap());
    DB::destroy(&Options::default(), &db_path).unwrap();
    assert!(!db_path.exists());
}
