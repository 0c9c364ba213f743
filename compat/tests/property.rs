//! `property_value` and `property_int_value`: the key count, sizes, the
//! stats text, unknown names, and the `properties` constants.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::properties;

#[test]
fn estimate_num_keys_is_the_exact_live_key_count() {
    let (_dir, db) = open_with_cf();
    assert_eq!(
        db.property_int_value(properties::ESTIMATE_NUM_KEYS)
            .unwrap(),
        Some(0)
    );
    db.put(b"a", b"1").unwrap();
    assert_eq!(
        db.property_int_value(properties::ESTIMATE_NUM_KEYS)
            .unwrap(),
        Some(1)
    );
    db.put(b"a", b"2").unwrap();
    db.put(b"b", b"2").unwrap();
    db.delete(b"a").unwrap();
    assert_eq!(
        db.property_int_value("rocksdb.estimate-num-keys").unwrap(),
        Some(1)
    );
    assert_eq!(
        db.property_value(properties::ESTIMATE_NUM_KEYS)
            .unwrap()
            .as_deref(),
        Some("1")
    );
}

#[test]
fn estimate_num_keys_is_per_column_family() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"x", b"1").unwrap();
    db.put_cf(&cf, b"y", b"1").unwrap();
    db.put(b"z", b"1").unwrap();
    assert_eq!(
        db.property_int_value_cf(&cf, properties::ESTIMATE_NUM_KEYS)
            .unwrap(),
        Some(2)
    );
    assert_eq!(
        db.property_int_value(properties::ESTIMATE_NUM_KEYS)
            .unwrap(),
        Some(1)
    );
}

#[test]
fn sizes_grow_with_the_data() {
    let (_dir, db) = open_with_cf();
    let before = db
        .property_int_value(properties::TOTAL_SST_FILES_SIZE)
        .unwrap()
        .unwrap();
    db.put(b"k", vec![1u8; 10_000]).unwrap();
    let after = db
        .property_int_value(properties::TOTAL_SST_FILES_SIZE)
        .unwrap()
        .unwrap();
    assert!(after >= before + 10_000, "{before} -> {after}");
    let live = db
        .property_int_value(properties::ESTIMATE_LIVE_DATA_SIZE)
        .unwrap()
        .unwrap();
    assert!(live >= 10_000 && live <= after, "{live} of {after}");
}

/// Regression (sov-schema-db's `test_report_size`): the byte figures were
/// the whole database's for every column family, so an empty default family
/// reported the others' data.
#[test]
fn live_data_size_is_per_column_family() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    for i in 0u32..1000 {
        db.put_cf(&cf, i.to_be_bytes(), i.to_be_bytes()).unwrap();
    }
    db.flush_cf(&cf).unwrap();
    let size_of = |name| db.property_int_value(name).unwrap().unwrap();
    let cf_size_of = |name| db.property_int_value_cf(&cf, name).unwrap().unwrap();
    assert_eq!(size_of(properties::ESTIMATE_LIVE_DATA_SIZE), 0);
    assert_eq!(size_of(properties::LIVE_SST_FILES_SIZE), 0);
    assert_eq!(size_of(properties::TOTAL_SST_FILES_SIZE), 0);
    assert!(cf_size_of(properties::ESTIMATE_LIVE_DATA_SIZE) >= 8_000);
    db.put(b"k", vec![1u8; 100]).unwrap();
    let (default, family) = (
        size_of(properties::ESTIMATE_LIVE_DATA_SIZE),
        cf_size_of(properties::ESTIMATE_LIVE_DATA_SIZE),
    );
    assert!(default > 0 && default < family, "{default} vs {family}");
}

/// Regression from a real project's suite (ethrex-storage flushes a
/// column family after many range deletes and waits for its SST bytes): a
/// family holding only range deletes holds their records, so its byte
/// figures are not 0.
#[test]
fn a_family_of_range_deletes_has_bytes() {
    let (_dir, db) = open_with_cf();
    db.put(b"k", vec![1u8; 100]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    let cf_size_of = |name| db.property_int_value_cf(&cf, name).unwrap().unwrap();
    assert_eq!(cf_size_of(properties::LIVE_SST_FILES_SIZE), 0);
    for end in 1u64..=100 {
        db.delete_range_cf(&cf, 0u64.to_be_bytes(), end.to_be_bytes())
            .unwrap();
    }
    db.flush_cf(&cf).unwrap();
    assert!(cf_size_of(properties::LIVE_SST_FILES_SIZE) > 0);
    assert!(cf_size_of(properties::TOTAL_SST_FILES_SIZE) > 0);
}

#[test]
fn stats_is_text_mentioning_stats() {
    let (_dir, db) = open_with_cf();
    let stats = db.property_value(properties::STATS).unwrap().unwrap();
    assert!(stats.contains("Stats"), "{stats}");
    let err = db.property_int_value(properties::STATS).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Failed to convert property value"),
        "{err}"
    );
}

#[test]
fn an_unknown_property_is_none() {
    let (_dir, db) = open_with_cf();
    assert_eq!(db.property_value("rocksdb.no-such-thing").unwrap(), None);
    assert_eq!(db.property_int_value("alexdb.anything").unwrap(), None);
    let cf = db.cf_handle("cf").unwrap();
    assert_eq!(
        db.property_value_cf(&cf, "rocksdb.no-such-thing").unwrap(),
        None
    );
}

/// The family's index stands where RocksDB's memtables do, the segments'
/// key filters where its table readers do (as `get_memory_usage_stats`
/// reports them); the counters of memtable entries stay 0, and so does the
/// block cache, which AlexDB does not fill.
#[test]
fn memtable_and_table_reader_sizes_are_the_index_and_the_filters() {
    let (_dir, db) = open_with_cf();
    let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
    db.put(b"k", b"v").unwrap();
    let one = int("rocksdb.size-all-mem-tables");
    assert!(one > 0);
    for i in 0..20_000u32 {
        db.put(i.to_be_bytes(), b"v").unwrap();
    }
    let many = int("rocksdb.size-all-mem-tables");
    assert!(many > one, "{many} after 20,000 keys, {one} after one");
    assert_eq!(int("rocksdb.cur-size-all-mem-tables"), many);
    let cf = db.cf_handle("cf").unwrap();
    let family = db
        .property_int_value_cf(&cf, properties::SIZE_ALL_MEM_TABLES)
        .unwrap()
        .unwrap();
    assert!(
        family < many / 10,
        "an empty family's index is small: {family}"
    );
    let usage = rocksdb::perf::get_memory_usage_stats(Some(&[&db]), None).unwrap();
    assert_eq!(
        int("rocksdb.estimate-table-readers-mem"),
        usage.mem_table_readers_total
    );
    for name in [
        properties::BLOCK_CACHE_USAGE,
        properties::NUM_ENTRIES_ACTIVE_MEM_TABLE,
    ] {
        let value = db.property_int_value(name).unwrap();
        assert_eq!(value, Some(0), "{name}");
    }
}

/// As in RocksDB, `num-snapshots` counts the snapshots taken, not the
/// iterators open, and `oldest-snapshot-time` and
/// `oldest-snapshot-sequence` are 0 while no snapshot is open.
#[test]
fn snapshot_properties_count_snapshots_not_iterators() {
    let (_dir, db) = open_with_cf();
    let int = |name: &str| db.property_int_value(name).unwrap();
    db.put(b"a", b"1").unwrap();
    let iter = db.iterator(rocksdb::IteratorMode::Start);
    assert_eq!(int("rocksdb.num-snapshots"), Some(0));
    assert_eq!(int("rocksdb.oldest-snapshot-time"), Some(0));
    assert_eq!(int("rocksdb.oldest-snapshot-sequence"), Some(0));
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let first = db.snapshot();
    db.put(b"b", b"2").unwrap();
    let second = db.snapshot();
    assert_eq!(int("rocksdb.num-snapshots"), Some(2));
    assert_eq!(
        db.property_int_value(properties::NUM_SNAPSHOTS).unwrap(),
        Some(2)
    );
    assert!(
        db.property_int_value(properties::OLDEST_SNAPSHOT_TIME)
            .unwrap()
            .is_some_and(|t| t > 0)
    );
    let time = int("rocksdb.oldest-snapshot-time").unwrap();
    assert!(
        time + 1 >= before && time <= before + 60,
        "{time} vs {before}"
    );
    assert_eq!(int("rocksdb.oldest-snapshot-sequence"), Some(1));
    drop(first);
    assert_eq!(int("rocksdb.num-snapshots"), Some(1));
    assert_eq!(int("rocksdb.oldest-snapshot-sequence"), Some(2));
    drop(second);
    drop(iter);
    assert_eq!(int("rocksdb.num-snapshots"), Some(0));
}

#[test]
fn files_by_level_agree_with_live_files_and_end_at_num_levels() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.set_num_levels(4);
    let db = rocksdb::DB::open(&opts, dir.path()).unwrap();
    for i in 0..100u32 {
        db.put(i.to_be_bytes(), [7u8; 50]).unwrap();
    }
    db.delete(3u32.to_be_bytes()).unwrap();
    let files = db.live_files().unwrap().len();
    assert!(files > 0);
    let int = |name: &str| db.property_int_value(name).unwrap();
    assert_eq!(int("rocksdb.num-files-at-level0"), Some(files as u64));
    assert_eq!(int("rocksdb.num-files-at-level3"), Some(0));
    assert_eq!(int("rocksdb.num-files-at-level4"), None);
    assert_eq!(int("rocksdb.num-files-at-level"), None);
    assert_eq!(int("rocksdb.base-level"), Some(3));
    let text = |name: &str| db.property_value(name).unwrap();
    assert_eq!(
        text("rocksdb.compression-ratio-at-level1").as_deref(),
        Some("-1.000000")
    );
    let tables = text("rocksdb.aggregated-table-properties").unwrap();
    assert!(tables.contains("# entries=101; "), "{tables}");
    assert!(tables.contains("# deletions=1; "), "{tables}");
    assert!(tables.contains("raw key size=404; "), "{tables}");
    let levels = text("rocksdb.levelstats").unwrap();
    assert_eq!(levels.lines().count(), 2 + 4, "{levels}");
    let sstables = text("rocksdb.sstables").unwrap();
    assert_eq!(sstables.matches("--- level ").count(), 4, "{sstables}");
    assert!(
        sstables.contains("['00000000' .. '00000063']"),
        "{sstables}"
    );
}

#[test]
fn file_deletion_and_statistics_properties_follow_the_handle() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    let db = rocksdb::DB::open(&opts, dir.path()).unwrap();
    let enabled = || {
        db.property_int_value(properties::IS_FILE_DELETIONS_ENABLED)
            .unwrap()
    };
    assert_eq!(enabled(), Some(1));
    db.disable_file_deletions().unwrap();
    assert_eq!(enabled(), Some(0));
    db.enable_file_deletions().unwrap();
    assert_eq!(enabled(), Some(1));
    assert_eq!(
        db.property_value(properties::OPTIONS_STATISTICS).unwrap(),
        None
    );
    drop(db);
    opts.enable_statistics();
    let db = rocksdb::DB::open(&opts, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    let report = db
        .property_value(properties::OPTIONS_STATISTICS)
        .unwrap()
        .unwrap();
    assert!(
        report.contains("rocksdb.number.keys.written COUNT : 1"),
        "{report}"
    );
}
