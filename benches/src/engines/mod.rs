//! The engines under test, each behind the same small [`Engine`] trait, and
//! the list of them ([`EngineKind`]).
//!
//! Every engine runs in the same durability class: no fsync per write, and
//! every acknowledged write survives a crash of the process.

#[macro_use]
mod rocks_api;

pub mod alexdb_compat;
pub mod alexdb_engine;
pub mod floor;
pub mod i64_api;
pub mod lmdb;
pub mod rocksdb;
pub mod sqlite;

use std::path::Path;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::workloads::Workload;

/// The engines the runner knows, in report order.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    /// AlexDB through `alexdb`, the drop-in for the `rocksdb` crate.
    Alexdb,
    /// AlexDB through `alexdb-engine` directly.
    AlexdbEngine,
    /// RocksDB (the `rocksdb` crate) with default options.
    RocksdbDefault,
    /// RocksDB tuned as the seeds' RocksStorage, plus bloom filter and cache.
    RocksdbTuned,
    /// SQLite (rusqlite, bundled), on disk, WAL, `synchronous=NORMAL`.
    Sqlite,
    /// LMDB (heed), no sync per commit.
    Lmdb,
    /// The seeds' RocksStorage-style i64 API on AlexDB (`alexdb::storage`).
    AlexdbI64,
    /// The seeds' RocksStorage-style i64 API over tuned RocksDB.
    RocksdbI64,
    /// Not a store: the floor of a point get (binary search of the sorted
    /// keys plus one read of the value from a warm memory map).
    Floor,
}

impl EngineKind {
    /// Every engine, in report order.
    pub const ALL: [EngineKind; 9] = [
        EngineKind::Alexdb,
        EngineKind::AlexdbEngine,
        EngineKind::RocksdbDefault,
        EngineKind::RocksdbTuned,
        EngineKind::Sqlite,
        EngineKind::Lmdb,
        EngineKind::AlexdbI64,
        EngineKind::RocksdbI64,
        EngineKind::Floor,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Alexdb => "alexdb",
            EngineKind::AlexdbEngine => "alexdb-engine",
            EngineKind::RocksdbDefault => "rocksdb-default",
            EngineKind::RocksdbTuned => "rocksdb-tuned",
            EngineKind::Sqlite => "sqlite",
            EngineKind::Lmdb => "lmdb",
            EngineKind::AlexdbI64 => "alexdb-i64",
            EngineKind::RocksdbI64 => "rocksdb-i64",
            EngineKind::Floor => "floor",
        }
    }

    /// Whether this engine is AlexDB (a baseline for ratios).
    pub fn is_alexdb(self) -> bool {
        matches!(self, EngineKind::Alexdb | EngineKind::AlexdbEngine)
    }

    /// Whether the engine needs 8-byte integer keys.
    pub fn needs_integer_keys(self) -> bool {
        matches!(self, EngineKind::AlexdbI64 | EngineKind::RocksdbI64)
    }

    /// How the engine is configured, for the report.
    pub fn configuration(self) -> &'static str {
        match self {
            EngineKind::Alexdb => alexdb_compat::CONFIGURATION,
            EngineKind::AlexdbEngine => alexdb_engine::CONFIGURATION,
            EngineKind::RocksdbDefault => rocksdb::DEFAULT_CONFIGURATION,
            EngineKind::RocksdbTuned => rocksdb::TUNED_CONFIGURATION,
            EngineKind::Sqlite => sqlite::CONFIGURATION,
            EngineKind::Lmdb => lmdb::CONFIGURATION,
            EngineKind::AlexdbI64 => i64_api::ALEX_CONFIGURATION,
            EngineKind::RocksdbI64 => i64_api::ROCKS_CONFIGURATION,
            EngineKind::Floor => floor::CONFIGURATION,
        }
    }
}

/// What an engine may size itself by when it opens.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    /// Number of keys that will be loaded.
    pub keys: usize,
    /// Bytes per key.
    pub key_bytes: usize,
    /// Bytes per value.
    pub value_bytes: usize,
}

impl Sizing {
    /// Raw bytes of the data set (keys and values).
    pub fn data_bytes(&self) -> u64 {
        (self.keys * (self.key_bytes + self.value_bytes)) as u64
    }
}

/// One store under test, as the workloads drive it.
///
/// Reads return a [`touch`] of the value (so the value's bytes are read and
/// the optimizer cannot drop the call) or `None` if the key is absent.
pub trait Engine: Sized {
    /// Opens, creating if needed, the store in the empty or existing `dir`.
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self>;

    /// Whether the engine can run `workload` (all can run most;
    /// `cmp-seek10` needs [`Self::open_reverse_ordered`], `compact-plain`
    /// and `filter-compact` [`Self::open_compacting`], the merge workloads
    /// [`Self::open_merging`]).
    fn supports(workload: Workload) -> bool {
        !matches!(
            workload,
            Workload::CmpSeek10
                | Workload::CompactPlain
                | Workload::FilterCompact
                | Workload::MergeAppend
                | Workload::MergeAppendDisk
                | Workload::MergeCounter
        )
    }

    /// Writes `pairs` in one batch (one transaction where the engine has them).
    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()>;

    /// Writes one key outside any batch.
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()>;

    /// Reads `key` into an owned buffer (the engine's copying get).
    fn get(&mut self, key: &[u8]) -> Result<Option<u64>>;

    /// Reads `key` without copying it, where the engine can.
    fn get_pinned(&mut self, key: &[u8]) -> Result<Option<u64>> {
        let _ = key;
        Err(unsupported("zero-copy get"))
    }

    /// Reads every key of `keys` (copying the values) with the engine's
    /// multi-get, a loop of [`Self::get`] where it has none; returns the sum
    /// of touches and the keys found.
    fn multi_get(&mut self, keys: &[&[u8]]) -> Result<(u64, usize)> {
        let mut sum = 0u64;
        let mut found = 0;
        for key in keys {
            if let Some(t) = self.get(key)? {
                sum = sum.wrapping_add(t);
                found += 1;
            }
        }
        Ok((sum, found))
    }

    /// Seeks to the first key ≥ `key` and steps `nexts` times, touching
    /// each entry; returns the sum of touches and the entries visited.
    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)> {
        let _ = (key, nexts);
        Err(unsupported("seek"))
    }

    /// Visits every entry in key order; returns the sum of touches and the
    /// entries visited.
    fn scan(&mut self) -> Result<(u64, usize)> {
        Err(unsupported("scan"))
    }

    /// Bytes of the in-memory index, where the engine reports it.
    fn index_bytes(&self) -> Option<u64> {
        None
    }

    /// Errors of the engine's background work since it was opened (a
    /// failed or panicked compaction), where the engine counts them.
    fn background_errors(&self) -> Option<u64> {
        None
    }

    /// A handle other threads may use at the same time, where the engine
    /// allows it (the threaded workloads need one).
    fn shared(&self) -> Option<&dyn SharedAccess> {
        None
    }

    /// Deletes `keys` in one batch (one transaction where the engine has them).
    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<()> {
        let _ = keys;
        Err(unsupported("delete"))
    }

    /// Deletes every key in `[start, end)`.
    fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        let _ = (start, end);
        Err(unsupported("range delete"))
    }

    /// Waits until the background work the writes so far left behind
    /// (compactions) is done, where the engine runs any; the runner calls it
    /// after the reopen so every engine's reads are timed on settled data.
    fn settle(&mut self) -> Result<()> {
        Ok(())
    }

    /// Compacts everything now, waiting for it to finish.
    fn compact(&mut self) -> Result<()> {
        Err(unsupported("compaction"))
    }

    /// Opens the store in `dir` (closed by the caller) for read-modify-write
    /// transactions, as the engine offers them.
    fn open_transactional(dir: &Path, sizing: &Sizing) -> Result<Box<dyn ReadModifyWrite>> {
        let _ = (dir, sizing);
        Err(unsupported("transactions"))
    }

    /// Opens a new store in the empty `dir` whose keys are ordered by a
    /// custom comparator, reverse bytewise (`Options::set_comparator`).
    fn open_reverse_ordered(dir: &Path, sizing: &Sizing) -> Result<Box<dyn OrderedSeek>> {
        let _ = (dir, sizing);
        Err(unsupported("custom comparator"))
    }

    /// Opens a new store in the empty `dir` with automatic compactions off;
    /// with `filtered`, its compactions run a filter that removes the keys
    /// [`crate::workloads::compact::removed_by_filter`] names
    /// (`Options::set_compaction_filter`).
    fn open_compacting(dir: &Path, sizing: &Sizing, filtered: bool) -> Result<Box<dyn Compacting>> {
        let _ = (dir, sizing, filtered);
        Err(unsupported("compaction filters"))
    }

    /// Opens a new store in the empty `dir` whose merge operator is
    /// `shape`'s (`Options::set_merge_operator_associative`).
    fn open_merging(dir: &Path, sizing: &Sizing, shape: MergeShape) -> Result<Box<dyn MergeStore>> {
        let _ = (dir, sizing, shape);
        Err(unsupported("merge operator"))
    }

    /// Closes the store, waiting for whatever closing involves.
    fn close(self) -> Result<()> {
        Ok(())
    }
}

/// A store whose compaction `compact-plain` and `filter-compact` time.
pub trait Compacting {
    /// As [`Engine::write_batch`].
    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()>;

    /// Compacts the whole key range (`compact_range(None, None)`).
    fn compact_all(&mut self) -> Result<()>;

    /// How many entries a full scan finds.
    fn count(&mut self) -> Result<usize>;
}

/// The merge operator of a [`MergeStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeShape {
    /// Appends operands to the value
    /// ([`crate::workloads::append_all`]).
    Append,
    /// Adds 8-byte little-endian integers ([`crate::workloads::add_all`]).
    Counter,
}

/// A store with a merge operator, as the merge workloads drive it.
pub trait MergeStore {
    /// Merges `operand` into `key` (a single write, no sync).
    fn merge(&mut self, key: &[u8], operand: &[u8]) -> Result<()>;

    /// Reads `key`'s merged value.
    fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Compacts everything now, waiting for it to finish.
    fn compact(&mut self) -> Result<()>;
}

/// A store ordered by a custom comparator, as `cmp-seek10` drives it.
pub trait OrderedSeek {
    /// As [`Engine::write_batch`].
    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()>;

    /// As [`Engine::seek_next`], in the comparator's order.
    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)>;
}

/// What threads other than the owner's may do at the same time.
pub trait SharedAccess: Sync {
    /// As [`Engine::get`].
    fn get(&self, key: &[u8]) -> Result<Option<u64>>;

    /// As [`Engine::put`].
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
}

/// A store open for read-modify-write transactions.
pub trait ReadModifyWrite {
    /// In one transaction: reads `key` as a read that conflicts with
    /// concurrent writes of it (`get_for_update`), writes `value` under it
    /// and commits; returns the [`touch`] of what was read.
    fn read_modify_write(&mut self, key: &[u8], value: &[u8]) -> Result<Option<u64>>;

    /// Closes the store, waiting for whatever closing involves.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Reads a value's first and last byte and its length: cheap, but it makes
/// a zero-copy read actually load the value, as a real user would.
#[inline]
pub fn touch(value: &[u8]) -> u64 {
    match (value.first(), value.last()) {
        (Some(&a), Some(&b)) => value.len() as u64 + u64::from(a) + u64::from(b),
        _ => 0,
    }
}

/// The error for a workload an engine cannot run.
pub fn unsupported(what: &str) -> BenchError {
    BenchError(format!("this engine has no {what}"))
}
