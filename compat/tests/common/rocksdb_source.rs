//! Fixtures for the tests that convert a RocksDB database written by the
//! real crate: a concatenating merge operator in both crates, and every
//! column family's contents read through either crate.

use std::collections::BTreeMap;

use alexdb::MergeOperands;

/// Every column family's contents: family name -> key -> value.
pub type Contents = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// The merge operator's name in both crates.
pub const CONCAT: &str = "concat";

/// AlexDB's concatenating merge function.
pub fn concat(_key: &[u8], base: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut value = base.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands {
        value.extend_from_slice(operand);
    }
    Some(value)
}

/// The real crate's options for a family whose merges concatenate (RocksDB
/// needs the operator even to replay merges from its WAL).
pub fn rocksdb_concat_options() -> ::rocksdb::Options {
    let mut opts = ::rocksdb::Options::default();
    opts.set_merge_operator_associative(CONCAT, |_key, base, operands| {
        let mut value = base.map(<[u8]>::to_vec).unwrap_or_default();
        for operand in operands {
            value.extend_from_slice(operand);
        }
        Some(value)
    });
    opts
}

/// `families` of a database open in the real crate.
pub fn rocksdb_contents(db: &::rocksdb::DB, families: &[&str]) -> Contents {
    families
        .iter()
        .map(|name| {
            let cf = db.cf_handle(name).unwrap();
            let entries = db.iterator_cf(cf, ::rocksdb::IteratorMode::Start);
            (name.to_string(), collect(entries))
        })
        .collect()
}

/// `families` of a database open in AlexDB.
pub fn alexdb_contents(db: &alexdb::DB, families: &[&str]) -> Contents {
    families
        .iter()
        .map(|name| {
            let cf = db.cf_handle(name).unwrap();
            let entries = db.iterator_cf(&cf, alexdb::IteratorMode::Start);
            (name.to_string(), collect(entries))
        })
        .collect()
}

/// An iterator's entries (either crate's), every one read without error.
pub fn collect<E: std::fmt::Debug>(
    entries: impl Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), E>>,
) -> BTreeMap<Vec<u8>, Vec<u8>> {
    entries
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}
