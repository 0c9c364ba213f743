//! Memory usage of databases and caches: [`MemoryUsageBuilder`],
//! [`MemoryUsage`], [`get_memory_usage_stats`].

use std::marker::PhantomData;

use crate::db::DBInner;
use crate::{Cache, DB, DBCommon, Error, ThreadMode};

/// Memory usage figures, summed over databases and caches.
pub struct MemoryUsageStats {
    /// Heap bytes of the databases' indexes (RocksDB: all memtables).
    pub mem_table_total: u64,
    /// The same: an index is never flushed (RocksDB: unflushed memtables).
    pub mem_table_unflushed: u64,
    /// Bytes of segment files mapped (RocksDB: table readers).
    pub mem_table_readers_total: u64,
    /// Bytes the caches hold.
    pub cache_total: u64,
}

/// Memory usage of the databases and caches given to a
/// [`MemoryUsageBuilder`], at the time `build` was called.
pub struct MemoryUsage {
    stats: MemoryUsageStats,
}

impl MemoryUsage {
    /// Heap bytes of the indexes.
    pub fn approximate_mem_table_total(&self) -> u64 {
        self.stats.mem_table_total
    }

    /// Heap bytes of the indexes (never flushed).
    pub fn approximate_mem_table_unflushed(&self) -> u64 {
        self.stats.mem_table_unflushed
    }

    /// Heap bytes of table readers: always 0, because AlexDB has none (its
    /// segment files are memory-mapped, their pages belong to the page
    /// cache, not to the process's heap).
    pub fn approximate_mem_table_readers_total(&self) -> u64 {
        self.stats.mem_table_readers_total
    }

    /// Bytes the caches hold.
    pub fn approximate_cache_total(&self) -> u64 {
        self.stats.cache_total
    }
}

/// Collects databases and caches whose memory usage to sum.
pub struct MemoryUsageBuilder<'a> {
    figures: Vec<Box<dyn Fn() -> MemoryUsageStats + 'a>>,
    _marker: PhantomData<&'a ()>,
}

impl<'a> MemoryUsageBuilder<'a> {
    /// An empty builder.
    pub fn new() -> Result<Self, Error> {
        Ok(Self {
            figures: Vec::new(),
            _marker: PhantomData,
        })
    }

    /// Adds a database.
    pub fn add_db<T: ThreadMode, D: DBInner>(&mut self, db: &'a DBCommon<T, D>) {
        self.figures.push(Box::new(move || {
            let stats = db.core().engine.stats();
            MemoryUsageStats {
                mem_table_total: stats.index_bytes,
                mem_table_unflushed: stats.index_bytes,
                mem_table_readers_total: stats.memory_use.segment_filter_bytes,
                cache_total: 0,
            }
        }));
    }

    /// Adds a transaction database.
    pub fn add_tx_db<T: ThreadMode>(&mut self, db: &'a crate::TransactionDB<T>) {
        self.add_db(db);
    }

    /// Adds a cache.
    pub fn add_cache(&mut self, cache: &'a Cache) {
        self.figures.push(Box::new(move || MemoryUsageStats {
            mem_table_total: 0,
            mem_table_unflushed: 0,
            mem_table_readers_total: 0,
            cache_total: cache.get_usage() as u64,
        }));
    }

    /// Reads the figures of everything added, now.
    pub fn build(&self) -> Result<MemoryUsage, Error> {
        let mut total = MemoryUsageStats {
            mem_table_total: 0,
            mem_table_unflushed: 0,
            mem_table_readers_total: 0,
            cache_total: 0,
        };
        for figures in &self.figures {
            let s = figures();
            total.mem_table_total += s.mem_table_total;
            total.mem_table_unflushed += s.mem_table_unflushed;
            total.mem_table_readers_total += s.mem_table_readers_total;
            total.cache_total += s.cache_total;
        }
        Ok(MemoryUsage { stats: total })
    }
}

/// The memory usage of `dbs` and `caches`, summed.
pub fn get_memory_usage_stats(
    dbs: Option<&[&DB]>,
    caches: Option<&[&Cache]>,
) -> Result<MemoryUsageStats, Error> {
    let mut builder = MemoryUsageBuilder::new()?;
    for db in dbs.unwrap_or_default() {
        builder.add_db(db);
    }
    for cache in caches.unwrap_or_default() {
        builder.add_cache(cache);
    }
    Ok(builder.build()?.stats)
}
