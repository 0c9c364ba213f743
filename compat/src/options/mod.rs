//! Option types: [`Options`] for databases and column families, per-call
//! options ([`ReadOptions`], [`WriteOptions`], ...), table, cache and
//! environment settings, and the enums they name.
//!
//! Every type is re-exported at the crate root, where rocksdb puts it.

mod cache;
mod cf_tuning;
mod compaction;
mod db_options;
mod enums;
mod env;
mod info_logger;
mod read;
mod recorded;
mod set_options;
mod table;
mod tuning;
mod write;

pub(crate) use cache::CacheKind;
pub use cache::{Cache, LruCacheOptions, WriteBufferManager};
pub use compaction::{
    CompactOptions, FifoCompactOptions, UniversalCompactOptions, WaitForCompactOptions,
};
pub use db_options::Options;
pub(crate) use db_options::{CompactionFilterBox, SharedCompactionFilter, SharedFilterFactory};
pub use enums::{
    BlockBasedIndexType, BlockBasedTablePinningTier, BottommostLevelCompaction, ChecksumType,
    CompactionPri, DBCompactionStyle, DBCompressionType, DBRecoveryMode, DataBlockIndexType,
    KeyEncodingType, LogLevel, MemtableFactory, ReadTier, UniversalCompactionStopStyle,
};
pub use env::{DBPath, Env};
pub(crate) use info_logger::InfoLogSettings;
pub use info_logger::InfoLogger;
pub use read::ReadOptions;
pub(crate) use set_options::validate as validate_set_options;
pub use table::{BlockBasedOptions, CuckooTableOptions, PlainTableFactoryOptions};
pub use write::{FlushOptions, IngestExternalFileOptions, WriteOptions};
