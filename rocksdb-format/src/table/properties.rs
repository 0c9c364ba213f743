//! The properties block: a block of `name → value` entries (integers as
//! varints, the index type as a fixed32). We keep what decides how to read
//! the table and what must be refused.

use std::collections::BTreeMap;

use crate::coding::{Reader, varint64_of};
use crate::error::{FormatError, Result};
use crate::table::block;

const WHAT: &str = "properties block";
/// The bytewise comparator, the only order this reader implements.
pub const BYTEWISE: &str = "leveldb.BytewiseComparator";

/// How the table's index is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexType {
    /// One index block (also the hash-search index, whose hash parts are
    /// separate meta blocks, and binary search with first keys).
    Binary,
    /// A top-level index over index partitions (`kTwoLevelIndexSearch`).
    TwoLevel,
}

/// The table properties this reader uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Properties {
    /// The comparator name.
    pub comparator: Option<String>,
    /// The column family id the table belongs to.
    pub column_family_id: Option<u64>,
    /// The compression name property (e.g. `Snappy`, or with format_version
    /// 7 `BuiltinV2;04;`).
    pub compression: Option<String>,
    /// The index layout.
    pub index_type: IndexType,
    /// Whether index values are delta-encoded handles.
    pub index_value_is_delta_encoded: bool,
    /// Whether index keys are user keys (no sequence trailer).
    pub index_key_is_user_key: bool,
    /// The number of entries (all kinds) in the table.
    pub num_entries: u64,
}

/// Decodes a properties block and refuses tables we cannot read faithfully.
pub fn decode(block: &[u8]) -> Result<Properties> {
    let mut map = BTreeMap::new();
    for e in block::entries(block, WHAT)? {
        map.insert(e.key, block[e.value].to_vec());
    }
    refuse_unsupported(&map)?;
    let text = |name: &str| {
        map.get(name.as_bytes())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let int = |name: &str| -> Result<Option<u64>> {
        map.get(name.as_bytes())
            .map(|v| varint64_of(v, WHAT))
            .transpose()
    };
    Ok(Properties {
        comparator: text("rocksdb.comparator"),
        column_family_id: int("rocksdb.column.family.id")?,
        compression: text("rocksdb.compression"),
        index_type: index_type(map.get(&b"rocksdb.block.based.table.index.type"[..]))?,
        index_value_is_delta_encoded: int("rocksdb.index.value.is.delta.encoded")?.unwrap_or(0)
            != 0,
        index_key_is_user_key: int("rocksdb.index.key.is.user.key")?.unwrap_or(0) != 0,
        num_entries: int("rocksdb.num.entries")?.unwrap_or(0),
    })
}

fn index_type(raw: Option<&Vec<u8>>) -> Result<IndexType> {
    let Some(raw) = raw else {
        return Ok(IndexType::Binary);
    };
    match Reader::new(raw, WHAT).fixed32("index type")? {
        0 | 1 | 3 => Ok(IndexType::Binary),
        2 => Ok(IndexType::TwoLevel),
        other => Err(FormatError::unsupported(format!("index type {other}"))),
    }
}

fn refuse_unsupported(map: &BTreeMap<Vec<u8>, Vec<u8>>) -> Result<()> {
    if map.contains_key(&b"rocksdb.external_sst_file.version"[..]) {
        return Err(FormatError::unsupported(
            "ingested external SST files (their global sequence number)",
        ));
    }
    if let Some(v) = map.get(&b"rocksdb.udi.is.primary.index"[..])
        && varint64_of(v, WHAT)? != 0
    {
        return Err(FormatError::unsupported("a user-defined primary index"));
    }
    if let Some(c) = map.get(&b"rocksdb.comparator"[..])
        && c.as_slice() != BYTEWISE.as_bytes()
    {
        return Err(comparator_error(&String::from_utf8_lossy(c)));
    }
    if let Some(c) = map.get(&b"rocksdb.compression"[..]) {
        check_compression_name(&String::from_utf8_lossy(c))?;
    }
    Ok(())
}

/// The error for a comparator other than the bytewise one.
pub fn comparator_error(name: &str) -> FormatError {
    if name.starts_with(BYTEWISE) {
        FormatError::unsupported(format!("user-defined timestamps (comparator `{name}`)"))
    } else {
        FormatError::unsupported(format!("a non-bytewise comparator (`{name}`)"))
    }
}

/// format_version 7 names the compression manager: only the built-in one.
fn check_compression_name(name: &str) -> Result<()> {
    match name.split_once(';') {
        Some((manager, _)) if !manager.is_empty() && manager != "BuiltinV2" => Err(
            FormatError::unsupported(format!("the custom compression manager `{manager}`")),
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamped_comparator_is_named_as_such() {
        let e = comparator_error("leveldb.BytewiseComparator.u64ts").to_string();
        assert!(e.contains("user-defined timestamps"), "{e}");
        let e = comparator_error("rocksdb.ReverseBytewiseComparator").to_string();
        assert!(e.contains("non-bytewise"), "{e}");
    }

    #[test]
    fn compression_manager_must_be_builtin() {
        assert!(check_compression_name("BuiltinV2;07;").is_ok());
        assert!(check_compression_name("Snappy").is_ok());
        assert!(check_compression_name("Mine;07;").is_err());
    }
}
