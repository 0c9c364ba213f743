//! [`Recorded`]: RocksDB tuning values as the program set them, kept for
//! the options dump of the `LOG` file (`crate::info_log`).
//!
//! Most of RocksDB's tuning knobs change nothing in AlexDB (it has no
//! memtables, levels, data blocks or compression). Their setters still
//! record the value, formatted as RocksDB's `LOG` prints it, so that the
//! options a program configured can be read back from `LOG` as with
//! RocksDB.

use std::collections::BTreeMap;
use std::fmt::Display;

use super::enums::{CompactionPri, DBCompactionStyle, DBCompressionType, MemtableFactory};

/// Option names (as `LOG` spells them) and the values set, formatted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorded(BTreeMap<&'static str, String>);

impl Recorded {
    /// Records `value` as the setting of `name`.
    pub(crate) fn set(&mut self, name: &'static str, value: impl Display) {
        self.0.insert(name, value.to_string());
    }

    /// Records every setting of `other` over this one's.
    pub(crate) fn extend(&mut self, other: &Recorded) {
        self.0
            .extend(other.0.iter().map(|(name, value)| (*name, value.clone())));
    }

    /// The recorded setting of `name`, if any.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// A flag as `LOG` prints most of them: `0` or `1`.
pub(crate) fn flag(v: bool) -> u8 {
    u8::from(v)
}

/// A ratio as `LOG` prints it (C's `%f`).
pub(crate) fn fixed6(v: f64) -> String {
    format!("{v:.6}")
}

/// A compression type's name in `LOG`.
pub(crate) fn compression_name(t: DBCompressionType) -> &'static str {
    match t {
        DBCompressionType::None => "NoCompression",
        DBCompressionType::Snappy => "Snappy",
        DBCompressionType::Zlib => "Zlib",
        DBCompressionType::Bz2 => "BZip2",
        DBCompressionType::Lz4 => "LZ4",
        DBCompressionType::Lz4hc => "LZ4HC",
        DBCompressionType::Zstd => "ZSTD",
    }
}

/// The `LOG` names of the first levels' extra size multipliers.
pub(crate) const LEVEL_MULTIPLIER_NAMES: [&str; 7] = [
    "max_bytes_for_level_multiplier_addtl[0]",
    "max_bytes_for_level_multiplier_addtl[1]",
    "max_bytes_for_level_multiplier_addtl[2]",
    "max_bytes_for_level_multiplier_addtl[3]",
    "max_bytes_for_level_multiplier_addtl[4]",
    "max_bytes_for_level_multiplier_addtl[5]",
    "max_bytes_for_level_multiplier_addtl[6]",
];

/// A memtable factory's name in `LOG`.
pub(crate) fn memtable_factory_name(factory: &MemtableFactory) -> &'static str {
    match factory {
        MemtableFactory::Vector => "VectorRepFactory",
        MemtableFactory::HashSkipList { .. } => "HashSkipListRepFactory",
        MemtableFactory::HashLinkList { .. } => "HashLinkListRepFactory",
    }
}

/// A compaction style's name in `LOG`.
pub(crate) fn compaction_style_name(s: DBCompactionStyle) -> &'static str {
    match s {
        DBCompactionStyle::Level => "kCompactionStyleLevel",
        DBCompactionStyle::Universal => "kCompactionStyleUniversal",
        DBCompactionStyle::Fifo => "kCompactionStyleFIFO",
    }
}

/// A compaction priority's name in `LOG`.
pub(crate) fn compaction_pri_name(p: CompactionPri) -> &'static str {
    match p {
        CompactionPri::ByCompensatedSize => "kByCompensatedSize",
        CompactionPri::OldestLargestSeqFirst => "kOldestLargestSeqFirst",
        CompactionPri::OldestSmallestSeqFirst => "kOldestSmallestSeqFirst",
        CompactionPri::MinOverlappingRatio => "kMinOverlappingRatio",
        CompactionPri::RoundRobin => "kRoundRobin",
    }
}
