//! Performance counters and memory usage, as rocksdb's `perf` module.
//!
//! [`PerfContext`] reads the calling thread's counters, which count while
//! [`set_perf_stats`] has set the thread's level to `EnableCount` or more.
//! AlexDB counts the metric it has a real figure for, `get_read_bytes`
//! (bytes of values returned by point reads); every other metric stays 0.
//!
//! [`MemoryUsage`] reports AlexDB's real memory: the learned indexes stand
//! where RocksDB's memtables do (`mem_table_total`, and
//! `mem_table_unflushed`, since an index is never flushed away), the key
//! filters of the segment files where its table readers' index and filter
//! blocks do (`mem_table_readers_total`; the segments themselves are mapped
//! files, not heap),
//! and caches report their usage (`cache_total`; AlexDB fills no block
//! cache, so it is 0).

pub(crate) mod context;
mod memory;
pub(crate) mod metric;

pub(crate) use self::context::count as count_perf;
pub use self::context::{PerfContext, PerfStatsLevel, set_perf_stats};
pub use self::memory::{MemoryUsage, MemoryUsageBuilder, MemoryUsageStats, get_memory_usage_stats};
pub use self::metric::PerfMetric;
