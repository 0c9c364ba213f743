//! Checking `set_options`/`set_options_cf` input as RocksDB does: the names
//! of RocksDB's mutable column family options, each with the kind of value
//! it takes. A name RocksDB does not know, or a value it cannot parse, is
//! `Invalid argument`; an empty list too.

use crate::Error;

/// The kind of value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Unsigned,
    Double,
    Compression,
    /// Structured or free text (`compression_opts`, `prefix_extractor`, ...):
    /// not parsed further.
    Text,
}

/// RocksDB 11.8's mutable column family options.
const MUTABLE_OPTIONS: &[(&str, Kind)] = &[
    ("write_buffer_size", Kind::Unsigned),
    ("max_write_buffer_number", Kind::Unsigned),
    ("arena_block_size", Kind::Unsigned),
    ("memtable_prefix_bloom_size_ratio", Kind::Double),
    ("memtable_whole_key_filtering", Kind::Bool),
    ("memtable_huge_page_size", Kind::Unsigned),
    ("max_successive_merges", Kind::Unsigned),
    ("strict_max_successive_merges", Kind::Bool),
    ("inplace_update_num_locks", Kind::Unsigned),
    ("prefix_extractor", Kind::Text),
    ("experimental_mempurge_threshold", Kind::Double),
    ("memtable_protection_bytes_per_key", Kind::Unsigned),
    ("block_protection_bytes_per_key", Kind::Unsigned),
    ("disable_auto_compactions", Kind::Bool),
    ("soft_pending_compaction_bytes_limit", Kind::Unsigned),
    ("hard_pending_compaction_bytes_limit", Kind::Unsigned),
    ("level0_file_num_compaction_trigger", Kind::Unsigned),
    ("level0_slowdown_writes_trigger", Kind::Unsigned),
    ("level0_stop_writes_trigger", Kind::Unsigned),
    ("max_compaction_bytes", Kind::Unsigned),
    ("target_file_size_base", Kind::Unsigned),
    ("target_file_size_multiplier", Kind::Unsigned),
    ("max_bytes_for_level_base", Kind::Unsigned),
    ("max_bytes_for_level_multiplier", Kind::Double),
    ("max_bytes_for_level_multiplier_additional", Kind::Text),
    ("ttl", Kind::Unsigned),
    ("periodic_compaction_seconds", Kind::Unsigned),
    ("compaction_options_fifo", Kind::Text),
    ("compaction_options_universal", Kind::Text),
    ("enable_blob_files", Kind::Bool),
    ("min_blob_size", Kind::Unsigned),
    ("blob_file_size", Kind::Unsigned),
    ("blob_compression_type", Kind::Compression),
    ("enable_blob_garbage_collection", Kind::Bool),
    ("blob_garbage_collection_age_cutoff", Kind::Double),
    ("blob_garbage_collection_force_threshold", Kind::Double),
    ("blob_compaction_readahead_size", Kind::Unsigned),
    ("blob_file_starting_level", Kind::Unsigned),
    ("prepopulate_blob_cache", Kind::Text),
    ("max_sequential_skip_in_iterations", Kind::Unsigned),
    ("check_flush_compaction_key_order", Kind::Bool),
    ("paranoid_file_checks", Kind::Bool),
    ("report_bg_io_stats", Kind::Bool),
    ("compression", Kind::Compression),
    ("bottommost_compression", Kind::Compression),
    ("compression_opts", Kind::Text),
    ("bottommost_compression_opts", Kind::Text),
    ("sample_for_compression", Kind::Unsigned),
    ("last_level_temperature", Kind::Text),
    ("default_write_temperature", Kind::Text),
    ("bottommost_file_compaction_delay", Kind::Unsigned),
    ("uncache_aggressiveness", Kind::Unsigned),
    ("memtable_max_range_deletions", Kind::Unsigned),
    ("table_factory", Kind::Text),
    ("block_based_table_factory", Kind::Text),
];

/// RocksDB's names of the compression types.
const COMPRESSIONS: &[&str] = &[
    "kNoCompression",
    "kSnappyCompression",
    "kZlibCompression",
    "kBZip2Compression",
    "kLZ4Compression",
    "kLZ4HCCompression",
    "kXpressCompression",
    "kZSTD",
    "kZSTDNotFinalCompression",
    "kDisableCompressionOption",
];

/// Checks `opts` as RocksDB's `SetOptions` does.
pub(crate) fn validate(opts: &[(&str, &str)]) -> Result<(), Error> {
    if opts.is_empty() {
        return Err(Error::invalid_argument("empty input"));
    }
    for (name, value) in opts {
        if name.contains('\0') || value.contains('\0') {
            return Err(Error::new("Failed to convert to CString".to_string()));
        }
        let kind = MUTABLE_OPTIONS
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, kind)| *kind)
            .ok_or_else(|| {
                Error::invalid_argument(format_args!("Could not find option: {name}"))
            })?;
        if !parses(kind, value.trim()) {
            return Err(Error::invalid_argument(format_args!(
                "Error parsing {name}:{value}"
            )));
        }
    }
    Ok(())
}

/// Whether `value` is a valid value of `kind`.
fn parses(kind: Kind, value: &str) -> bool {
    match kind {
        Kind::Bool => matches!(value, "true" | "false" | "1" | "0"),
        Kind::Unsigned => parse_unsigned(value),
        Kind::Double => value.parse::<f64>().is_ok(),
        Kind::Compression => COMPRESSIONS.contains(&value),
        Kind::Text => true,
    }
}

/// A decimal number with an optional `k`/`m`/`g`/`t` multiplier, as
/// RocksDB's option parser accepts; like its `std::stoull`, a leading sign
/// is accepted (`-5` wraps around rather than failing).
fn parse_unsigned(value: &str) -> bool {
    let value = value.strip_prefix(['-', '+']).unwrap_or(value);
    let digits = value.trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G', 't', 'T']);
    value.len() - digits.len() <= 1 && !digits.is_empty() && digits.parse::<u64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::validate;
    use crate::ErrorKind;

    #[test]
    fn names_and_values_are_checked() {
        validate(&[("disable_auto_compactions", "true")]).unwrap();
        validate(&[("write_buffer_size", "64M"), ("compression", "kZSTD")]).unwrap();
        for bad in [
            &[("disable_auto_compactions", "INVALID_VALUE")][..],
            &[("INVALID_NAME", "1")],
            &[("write_buffer_size", "1x")],
            &[],
        ] {
            assert_eq!(
                validate(bad).unwrap_err().kind(),
                ErrorKind::InvalidArgument
            );
        }
        assert!(validate(&[("disable_auto_compactions", "true\0")]).is_err());
    }
}
