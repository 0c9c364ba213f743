//! Tables written with each compression, format_version, checksum and
//! index layout read the same as RocksDB reads them.

mod common;

use alexdb_rocksdb_format::RocksDir;
use alexdb_rocksdb_format::table::Table;
use alexdb_rocksdb_format::table::properties::IndexType;
use common::{Layout, assert_same, open, write_workload};
use rocksdb::DBCompressionType;

fn check(layout: Layout) {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path(), &layout);
        write_workload(&db, 1500);
    }
    let n = assert_same(dir.path(), &layout);
    assert!(n > 1000, "{n} entries");
    check_tables(dir.path(), &layout);
}

/// The tables really use the layout under test, and the WAL holds data.
fn check_tables(path: &std::path::Path, layout: &Layout) {
    let db = RocksDir::open(path).unwrap();
    let (tables, _) = db.table_stats("default").unwrap();
    assert!(tables >= 2, "{tables} tables");
    let levels: std::collections::BTreeSet<u32> = db
        .tables("default")
        .unwrap()
        .iter()
        .map(|t| t.level)
        .collect();
    assert!(levels.len() >= 2, "levels {levels:?}");
    assert!(db.wal_entries("default").unwrap() > 0);
    for entry in std::fs::read_dir(path).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "sst") {
            continue;
        }
        let t = Table::open(&p).unwrap();
        let compression = t.properties.compression.clone().unwrap_or_default();
        let want = match layout.compression {
            DBCompressionType::None => "",
            DBCompressionType::Snappy => "01",
            DBCompressionType::Zlib => "02",
            DBCompressionType::Lz4 => "04",
            DBCompressionType::Lz4hc => "05",
            _ => "07",
        };
        if layout.format_version >= 7 {
            assert!(compression.contains(&format!(";{want};")), "{compression}");
        }
        if layout.partitioned {
            assert_eq!(t.properties.index_type, IndexType::TwoLevel);
        }
    }
}

#[test]
fn every_compression_type() {
    for compression in [
        DBCompressionType::None,
        DBCompressionType::Snappy,
        DBCompressionType::Lz4,
        DBCompressionType::Lz4hc,
        DBCompressionType::Zstd,
        DBCompressionType::Zlib,
    ] {
        check(Layout {
            compression,
            ..Layout::default()
        });
    }
}

#[test]
fn every_format_version() {
    for format_version in [2, 3, 4, 5, 6, 7] {
        check(Layout {
            format_version,
            compression: DBCompressionType::Lz4,
            ..Layout::default()
        });
    }
}

#[test]
fn every_checksum_type() {
    for checksum in 0..=4 {
        for format_version in [5, 6] {
            check(Layout {
                checksum,
                format_version,
                ..Layout::default()
            });
        }
    }
}

#[test]
fn partitioned_index_at_old_and_new_format_versions() {
    for format_version in [3, 4, 6, 7] {
        check(Layout {
            partitioned: true,
            format_version,
            compression: DBCompressionType::Zstd,
            ..Layout::default()
        });
    }
}

#[test]
fn data_block_hash_index_and_restart_intervals() {
    for restart_interval in [1, 4, 16] {
        check(Layout {
            hash_index: true,
            restart_interval,
            ..Layout::default()
        });
    }
}

#[test]
fn large_blocks() {
    check(Layout {
        block_size: 16 * 1024,
        compression: DBCompressionType::Snappy,
        ..Layout::default()
    });
}
