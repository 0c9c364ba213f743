//! The options dump RocksDB writes to `LOG`: the database-wide options at
//! open, and each column family's options at open and at its creation.
//!
//! Every line of [`super::template`] is printed, with the value AlexDB
//! holds for the options it keeps itself (comparator, merge operator,
//! create flags, ...), else the value the program set (recorded by the
//! setter), else RocksDB's default.

use crate::options::{CacheKind, Options};

use super::template::{CF_OPTIONS_HEAD, CF_OPTIONS_TAIL, DB_OPTIONS, TABLE_OPTIONS};

/// Width the option names are right-aligned to, as RocksDB roughly does.
const NAME_WIDTH: usize = 40;

/// The block cache RocksDB 11 makes when none is set: 32 MiB.
const DEFAULT_BLOCK_CACHE_BYTES: usize = 32 << 20;

/// The database-wide part of the dump: one message per line.
pub(crate) fn db_options(opts: &Options) -> Vec<String> {
    let mut lines = option_lines(DB_OPTIONS, |name| {
        db_value(opts, name).or_else(|| opts.recorded.get(name).map(str::to_owned))
    });
    lines.push("Compression algorithms supported:".to_owned());
    for codec in [
        "kZSTD",
        "kZlibCompression",
        "kXpressCompression",
        "kLZ4HCCompression",
        "kLZ4Compression",
        "kBZip2Compression",
        "kSnappyCompression",
    ] {
        // AlexDB's one codec is LZ4 (with a dictionary per compaction
        // output); every other type a program names is served by it.
        let supported = u8::from(codec == "kLZ4Compression");
        lines.push(format!("\t{codec} supported: {supported}"));
    }
    lines.push(format!("Fast CRC32 supported: {}", fast_crc32()));
    lines.push("Jemalloc supported: 0".to_owned());
    lines
}

/// One column family's part of the dump: a header, its options, and its
/// block-based table factory's options as one multi-line message (a
/// cuckoo or plain table factory's are not printed).
pub(crate) fn column_family(name: &str, opts: &Options) -> Vec<String> {
    let value = |option: &str| {
        cf_value(opts, option).or_else(|| opts.recorded.get(option).map(str::to_owned))
    };
    let mut lines = vec![format!(
        "--------------- Options for column family [{name}]:"
    )];
    lines.extend(option_lines(CF_OPTIONS_HEAD, value));
    if opts
        .recorded
        .get("table_factory")
        .is_none_or(|t| t == "BlockBasedTable")
    {
        lines.push(table_options(opts));
    }
    for line in option_lines(CF_OPTIONS_TAIL, value) {
        match compression_per_level(opts, &line) {
            Some(levels) => lines.extend(levels),
            None => lines.push(line),
        }
    }
    lines
}

/// With `set_compression_per_level`, RocksDB prints one
/// `Options.compression[<level>]` line per level where it would print
/// `Options.compression`.
fn compression_per_level(opts: &Options, line: &str) -> Option<Vec<String>> {
    if opts.compression_per_level.is_empty()
        || !line.trim_start().starts_with("Options.compression:")
    {
        return None;
    }
    let lines = opts
        .compression_per_level
        .iter()
        .enumerate()
        .map(|(level, name)| {
            format!(
                "{:>NAME_WIDTH$}: {name}",
                format!("Options.compression[{level}]")
            )
        });
    Some(lines.collect())
}

/// `Options.<name>: <value>` for every line of `template`.
fn option_lines(template: &str, value: impl Fn(&str) -> Option<String>) -> Vec<String> {
    template_entries(template)
        .map(|(name, default)| {
            let shown = value(name).unwrap_or_else(|| default.to_owned());
            format!("{:>NAME_WIDTH$}: {shown}", format!("Options.{name}"))
        })
        .collect()
}

/// The `(name, default)` pairs of a template.
fn template_entries(template: &str) -> impl Iterator<Item = (&str, &str)> {
    template.lines().filter_map(|line| line.split_once('\t'))
}

/// Values of database-wide options AlexDB keeps itself.
fn db_value(opts: &Options, name: &str) -> Option<String> {
    let flag = |v: bool| u8::from(v).to_string();
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    Some(match name {
        "error_if_exists" => flag(opts.error_if_exists),
        "create_if_missing" => flag(opts.create_if_missing),
        "paranoid_checks" => flag(opts.paranoid_checks),
        "create_missing_column_families" => flag(opts.create_missing_column_families),
        "max_open_files" => opts.max_open_files.to_string(),
        "use_fsync" => flag(opts.use_fsync),
        "manual_wal_flush" => flag(opts.manual_wal_flush),
        "wal_dir" => path(&opts.wal_dir),
        "db_log_dir" => path(&opts.db_log_dir),
        "wal_recovery_mode" => (opts.wal_recovery_mode as i32).to_string(),
        "track_and_verify_wals_in_manifest" => flag(opts.track_and_verify_wals_in_manifest),
        "write_dbid_to_manifest" => flag(opts.write_dbid_to_manifest),
        "statistics" if opts.statistics.is_some() => "AlexDB statistics".to_owned(),
        "row_cache" => match &opts.row_cache {
            Some(cache) => format!("{} bytes", cache.capacity()),
            None => "None".to_owned(),
        },
        "info_log" if opts.info_logger.is_some() => {
            "a callback or standard-error logger".to_owned()
        }
        "env" if opts.env.is_some() => "an alexdb Env".to_owned(),
        _ => return None,
    })
}

/// Values of column-family options AlexDB keeps itself.
fn cf_value(opts: &Options, name: &str) -> Option<String> {
    Some(match name {
        "comparator" => opts.comparator.as_ref()?.name.clone(),
        "merge_operator" => opts.merge_operator.as_ref()?.name.clone(),
        "compaction_filter" => opts.compaction_filter.as_ref()?.name.clone(),
        "compaction_filter_factory" => opts.compaction_filter_factory.as_ref()?.name.clone(),
        "prefix_extractor" => opts.prefix_extractor.as_ref()?.name().to_owned(),
        "write_buffer_size" => opts.write_buffer_size.to_string(),
        _ => return None,
    })
}

/// The table factory's options: one message, a line per option.
fn table_options(opts: &Options) -> String {
    let table = opts.table.as_ref();
    let mut text = String::from(
        "           table_factory options:   flush_block_policy_factory: \
         FlushBlockBySizePolicyFactory",
    );
    for (name, default) in template_entries(TABLE_OPTIONS) {
        if name == "block_cache" {
            text.push_str(&block_cache_lines(opts));
            continue;
        }
        let shown = table
            .and_then(|t| t.recorded().get(name))
            .unwrap_or(default);
        text.push_str(&format!("\n  {name}: {shown}"));
    }
    text
}

/// The block cache's lines, as RocksDB prints them for its cache kinds.
fn block_cache_lines(opts: &Options) -> String {
    let table = opts.table.as_ref();
    if table.and_then(|t| t.recorded().get("no_block_cache")) == Some("1") {
        return "\n  block_cache: (nil)".to_owned();
    }
    let (address, kind, capacity) = match table.and_then(|t| t.block_cache()) {
        Some(cache) => (cache.address(), cache.kind(), cache.capacity()),
        None => (0, CacheKind::AutoHyperClock, DEFAULT_BLOCK_CACHE_BYTES),
    };
    let (name, shard_bits, ratios) = match kind {
        CacheKind::Lru => (
            "LRUCache",
            lru_shard_bits(capacity),
            "\n    high_pri_pool_ratio: 0.500\n    low_pri_pool_ratio: 0.000",
        ),
        CacheKind::AutoHyperClock => ("AutoHyperClockCache", 0, ""),
        CacheKind::FixedHyperClock => ("FixedHyperClockCache", 0, ""),
    };
    format!(
        "\n  block_cache: {address:#x}\n  block_cache_name: {name}\n  block_cache_options:\
         \n    capacity : {capacity}\n    num_shard_bits : {shard_bits}\
         \n    strict_capacity_limit : 0\n    memory_allocator : None{ratios}"
    )
}

/// RocksDB's default shard count for an LRU cache: a shard per 512 KiB,
/// at most 2^6 shards.
fn lru_shard_bits(capacity: usize) -> u32 {
    let shards = capacity / (512 << 10);
    if shards == 0 {
        0
    } else {
        shards.ilog2().min(6)
    }
}

/// Whether the CPU has the CRC32C instruction AlexDB's checksums use
/// (detected at run time), in RocksDB's wording.
fn fast_crc32() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            "Supported on x86"
        } else {
            "Not supported on x86"
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("crc") {
            "Supported on Arm64"
        } else {
            "Not supported on Arm64"
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "Not supported"
    }
}

#[cfg(test)]
mod tests {
    use super::lru_shard_bits;

    #[test]
    fn lru_shards_follow_rocksdb() {
        assert_eq!(lru_shard_bits(0), 0);
        assert_eq!(lru_shard_bits(1 << 20), 1);
        assert_eq!(lru_shard_bits(8 << 20), 4);
        assert_eq!(lru_shard_bits(1 << 30), 6);
    }
}
