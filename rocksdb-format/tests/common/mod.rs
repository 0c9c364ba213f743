//! Shared harness of the differential tests: write a database with the
//! real RocksDB, read it with this crate and with RocksDB, compare.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::path::Path;

use alexdb_rocksdb_format::RocksDir;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, ChecksumType, ColumnFamilyDescriptor, DB,
    DBCompressionType, DataBlockIndexType, MergeOperands, Options,
};

/// The families every test database has; `counts` has a merge operator.
pub const FAMILIES: [&str; 3] = ["default", "second", "counts"];
/// The merge operator's name.
pub const MERGE_NAME: &str = "concat";

/// How the database's tables are written.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub compression: DBCompressionType,
    pub format_version: i32,
    pub block_size: usize,
    pub partitioned: bool,
    /// RocksDB's checksum type number (0 none, 1 crc32c, 2 xxHash,
    /// 3 xxHash64, 4 XXH3).
    pub checksum: u8,
    pub hash_index: bool,
    pub restart_interval: i32,
    pub recycle_logs: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            compression: DBCompressionType::None,
            format_version: 7,
            block_size: 256,
            partitioned: false,
            checksum: 1,
            hash_index: false,
            restart_interval: 16,
            recycle_logs: false,
        }
    }
}

fn checksum_type(n: u8) -> ChecksumType {
    match n {
        0 => ChecksumType::NoChecksum,
        2 => ChecksumType::XXHash,
        3 => ChecksumType::XXHash64,
        4 => ChecksumType::XXH3,
        _ => ChecksumType::CRC32c,
    }
}

fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        out.push(b',');
        out.extend_from_slice(op);
    }
    Some(out)
}

/// The same merge for this crate's reader.
pub fn our_concat(_key: &[u8], existing: Option<&[u8]>, operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        out.push(b',');
        out.extend_from_slice(op);
    }
    Some(out)
}

fn family_options(layout: &Layout, merge: bool) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(layout.format_version);
    table.set_block_size(layout.block_size);
    table.set_checksum_type(checksum_type(layout.checksum));
    table.set_block_restart_interval(layout.restart_interval);
    if layout.partitioned {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_bloom_filter(10.0, false);
        table.set_metadata_block_size(256);
    }
    if layout.hash_index {
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    }
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table);
    opts.set_compression_type(layout.compression);
    opts.set_disable_auto_compactions(true);
    if merge {
        opts.set_merge_operator_associative(MERGE_NAME, concat);
    }
    opts
}

/// Opens (creating) the database at `path` with every family.
pub fn open(path: &Path, layout: &Layout) -> DB {
    let mut db_opts = family_options(layout, false);
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    if layout.recycle_logs {
        db_opts.set_recycle_log_file_num(4);
    }
    let cfs = FAMILIES
        .iter()
        .map(|&n| ColumnFamilyDescriptor::new(n, family_options(layout, n == "counts")));
    DB::open_cf_descriptors(&db_opts, path, cfs).expect("open rocksdb")
}

/// Every family's contents as RocksDB reads them (read-only: nothing in
/// the directory changes).
pub fn reference(path: &Path, layout: &Layout) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    let db_opts = family_options(layout, false);
    let cfs = FAMILIES
        .iter()
        .map(|&n| ColumnFamilyDescriptor::new(n, family_options(layout, n == "counts")));
    let db = DB::open_cf_descriptors_read_only(&db_opts, path, cfs, false).expect("open read-only");
    FAMILIES
        .iter()
        .map(|n| {
            let cf = db.cf_handle(n).expect("family");
            db.iterator_cf(cf, rocksdb::IteratorMode::Start)
                .map(|r| {
                    let (k, v) = r.expect("iterate");
                    (k.to_vec(), v.to_vec())
                })
                .collect()
        })
        .collect()
}

/// Every family's contents as this crate reads them.
pub fn ours(path: &Path) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
    let dir = RocksDir::open(path).expect("open with rocksdb-format");
    FAMILIES
        .iter()
        .map(|n| dir.entries(n, Some(&our_concat)).expect("read family"))
        .collect()
}

/// Asserts both readers see the same contents; returns how many entries.
pub fn assert_same(path: &Path, layout: &Layout) -> usize {
    let got = ours(path);
    let want = reference(path, layout);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.len(),
            w.len(),
            "family {} entry count ({layout:?})",
            FAMILIES[i]
        );
        for (a, b) in g.iter().zip(w) {
            assert_eq!(a, b, "family {} ({layout:?})", FAMILIES[i]);
        }
    }
    got.iter().map(Vec::len).sum()
}

/// A key with a long shared prefix, so blocks use prefix compression.
pub fn key(i: u32) -> Vec<u8> {
    format!("user/{:04}/item-{i:06}", i % 97).into_bytes()
}

/// A value whose length varies with `i`.
pub fn value(i: u32, round: u32) -> Vec<u8> {
    let len = (i * 7 + round * 13) % 60;
    let mut v = format!("v{round}-{i}-").into_bytes();
    v.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len as usize));
    v
}

/// The full workload: puts, overwrites across levels, deletes, single
/// deletes, range deletes and merges, flushed in rounds and partly
/// compacted; the last round stays in the WAL only.
pub fn write_workload(db: &DB, n: u32) {
    let cf = |name: &str| db.cf_handle(name).expect("family");
    let (default, second, counts) = (cf("default"), cf("second"), cf("counts"));
    for i in 0..n {
        db.put_cf(default, key(i), value(i, 0)).unwrap();
        db.put_cf(second, key(i), value(i, 1)).unwrap();
        db.merge_cf(counts, key(i % 50), format!("m{i}")).unwrap();
    }
    db.flush_cf(default).unwrap();
    db.flush_cf(second).unwrap();
    db.flush_cf(counts).unwrap();
    for i in (0..n).step_by(3) {
        db.put_cf(default, key(i), value(i, 2)).unwrap();
    }
    let mut batch = rocksdb::WriteBatch::default();
    for i in (1..n).step_by(5) {
        batch.delete_cf(default, key(i));
        batch.single_delete_cf(second, key(i));
    }
    db.write(batch).unwrap();
    db.delete_range_cf(default, b"user/0030".as_slice(), b"user/0036".as_slice())
        .unwrap();
    db.delete_range_cf(second, b"user/0010".as_slice(), b"user/0020".as_slice())
        .unwrap();
    db.put_cf(counts, key(3), b"base").unwrap();
    db.flush_cf(default).unwrap();
    db.flush_cf(second).unwrap();
    db.flush_cf(counts).unwrap();
    db.compact_range_cf(default, None::<&[u8]>, Some(key(n / 3)));
    db.compact_range_cf(counts, None::<&[u8]>, None::<&[u8]>);
    for i in (0..n).step_by(4) {
        db.put_cf(default, key(i), value(i, 4)).unwrap();
        db.merge_cf(counts, key(i % 50), format!("f{i}")).unwrap();
    }
    db.delete_range_cf(default, b"user/0040".as_slice(), b"user/0041".as_slice())
        .unwrap();
    db.flush_cf(default).unwrap();
    db.flush_cf(counts).unwrap();
    write_wal_round(db, n);
}

/// Writes that stay in the WAL (never flushed).
pub fn write_wal_round(db: &DB, n: u32) {
    let cf = |name: &str| db.cf_handle(name).expect("family");
    let (default, second, counts) = (cf("default"), cf("second"), cf("counts"));
    for i in (0..n).step_by(7) {
        db.put_cf(default, key(i), value(i, 3)).unwrap();
        db.merge_cf(counts, key(i % 50), format!("w{i}")).unwrap();
    }
    db.delete_range_cf(
        default,
        b"user/0050/item-000500".as_slice(),
        b"user/0060".as_slice(),
    )
    .unwrap();
    db.delete_cf(second, key(4)).unwrap();
    db.put_cf(second, key(n + 1), b"wal-only").unwrap();
}
