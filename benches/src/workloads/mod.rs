//! The workloads: what each one does to an engine and how it is timed.
//!
//! Timed loops read their keys from pre-generated access orders, so the
//! random number generator is never inside a timed region. Every loop
//! checks its results (every present key found, every absent key missed,
//! every entry scanned), so a broken engine cannot look fast.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

pub mod compact;
mod deletes;
mod flood;
mod merges;
mod ordered;
mod point;
mod shift;
mod threads;
mod txn;

pub use compact::{compact_all, removed_by_filter};
pub use deletes::{RangePlan, delete_heavy, delete_ranges};
pub use flood::flood;
pub use merges::{add_all, append_all, append_keys, counter_keys, merge_append, merge_counter};
pub use ordered::{cmp_seek10, load_ordered};
pub use point::{get_absent, get_present, load, mixed, multi_get, scan, seek10};
pub use shift::hot_range;
pub use threads::{get_two_readers, get_with_writer, writers};
pub use txn::read_modify_write;

use crate::latency::{Latency, Recorder};

/// Keys per write batch in the bulk load (and deletes in `delete-heavy`).
pub const BATCH: usize = 1_000;
/// Entries read after each seek (besides the one sought).
pub const NEXTS: usize = 10;
/// Share of writes in the mixed workload, in percent.
pub const MIXED_WRITE_PERCENT: u64 = 20;

/// What a timed loop measured: time per operation and, for loops timed
/// per operation, the latency of each kind of operation it ran.
#[derive(Debug)]
pub struct Timed {
    /// Nanoseconds per operation (wall time ÷ operations).
    pub per_op: f64,
    /// Latency per kind of operation, labelled (`"get"`, `"put"`).
    pub latency: Vec<(&'static str, Latency)>,
}

impl Timed {
    /// A figure with no latency.
    pub fn plain(per_op: f64) -> Timed {
        Timed {
            per_op,
            latency: Vec::new(),
        }
    }

    /// A figure with the latency of one kind of operation.
    pub fn with(per_op: f64, label: &'static str, recorder: Recorder) -> Timed {
        Timed {
            per_op,
            latency: recorder.latency().map(|l| (label, l)).into_iter().collect(),
        }
    }
}

/// One measured figure of a run.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Bulk load in batches of 1,000, per key.
    Load,
    /// Close and open again after the load.
    Reopen,
    /// Wait after the reopen for the engine's background compactions.
    Settle,
    /// Random point get of present keys, copying the value out.
    Get,
    /// Random point get of present keys without copying.
    GetPinned,
    /// Point get of keys that are not there.
    GetAbsent,
    /// Point get (copying) of present keys, Zipfian access (theta 0.99).
    GetZipf,
    /// Random present keys read 32 at a time with the engine's multi-get.
    MultiGet,
    /// 80% get (copying) / 20% overwrite of random present keys.
    Mixed,
    /// Seek to a random present key and read it and the 10 next entries.
    Seek10,
    /// `seek10` in a database whose comparator is reverse bytewise.
    CmpSeek10,
    /// `compact_range` over every key of a fresh database, per key.
    CompactPlain,
    /// The same with a compaction filter that removes about half the keys.
    FilterCompact,
    /// Appending merges (64-byte operands, 2,000 a key), per merge.
    MergeAppend,
    /// Disk after `merge-append` and a full compaction.
    #[value(skip)]
    MergeAppendDisk,
    /// Merges adding 1 to 8-byte counters, per merge.
    MergeCounter,
    /// Full ordered scan, per entry.
    Scan,
    /// Random get of present keys from 2 reader threads at once.
    #[serde(rename = "get-2r")]
    #[value(name = "get-2r")]
    Get2r,
    /// Random get of present keys while 1 writer thread keeps overwriting.
    GetW,
    /// Read-modify-write of one uniform key per (optimistic) transaction.
    OptimisticTxn,
    /// Single puts (overwrites) from 1 writer thread: the baseline of `writers-4`.
    #[value(skip)]
    #[serde(rename = "writers-1")]
    Writers1,
    /// Single puts (overwrites) from 4 writer threads, total throughput.
    #[serde(rename = "writers-4")]
    #[value(name = "writers-4")]
    Writers4,
    /// Full ordered scan after a full compaction (after the overwrites).
    ScanCompacted,
    /// Overwrites of 3x the keys from one writer as fast as it goes, in batches, per key.
    Flood,
    /// Disk right after `flood`, as a multiple of the live data.
    #[value(skip)]
    FloodDisk,
    /// New keys poured into one narrow key range after the load, single puts.
    HotRange,
    /// Range deletes of 10,000 consecutive keys each, per range.
    DeleteRange,
    /// Range deletes of 10 consecutive keys each, per range (`delete-range`'s scale check).
    #[value(skip)]
    #[serde(rename = "delete-range-10")]
    DeleteRange10,
    /// Delete half of the keys (batches of 1,000 deletes), per key.
    DeleteHeavy,
    /// Disk after deleting half and a full compaction, as a multiple of the live data.
    #[value(skip)]
    DeleteHeavyDisk,
    /// Index bytes per live key after deleting half and compacting.
    #[value(skip)]
    DeleteHeavyIndex,
    /// Close and reopen after deleting half and compacting.
    #[value(skip)]
    DeleteHeavyReopen,
    /// Allocated disk blocks after the reopen.
    DiskBytes,
    /// Allocated disk blocks once the background compactions the load left
    /// have finished (after `settle`).
    #[value(skip)]
    DiskSettled,
    /// Peak resident memory of the process (VmHWM).
    PeakRss,
    /// Bytes of the in-memory index per key.
    IndexBytes,
    /// Anonymous memory the open and the load added, per key, a few seconds
    /// after the last write.
    LoadAnon,
    /// Anonymous memory held after the load, the reopen and three rounds of
    /// "overwrite a random third, compact everything", per key, a few
    /// seconds later.
    OverwriteAnon,
    /// Larger than memory: first pass of random gets after dropping the page cache.
    #[value(skip)]
    LtmGetCold,
    /// Larger than memory: second pass of random gets over the same keys.
    #[value(skip)]
    LtmGet,
    /// Larger than memory: seek to a random present key and read 10 more.
    #[value(skip)]
    LtmSeek10,
    /// Larger than memory: full ordered scan, per entry.
    #[value(skip)]
    LtmScan,
    /// Larger than memory: peak resident memory of the reading process.
    #[value(skip)]
    LtmPeakRss,
    /// Larger than memory: bytes the disk delivered per cold get.
    #[value(skip)]
    LtmReadBytes,
    /// Larger than memory: anonymous memory the open added, per key.
    #[value(skip)]
    LtmOpenAnon,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 45] = [
        Workload::Load,
        Workload::Get,
        Workload::GetPinned,
        Workload::GetAbsent,
        Workload::GetZipf,
        Workload::MultiGet,
        Workload::Get2r,
        Workload::GetW,
        Workload::Mixed,
        Workload::OptimisticTxn,
        Workload::Seek10,
        Workload::CmpSeek10,
        Workload::CompactPlain,
        Workload::FilterCompact,
        Workload::MergeAppend,
        Workload::MergeAppendDisk,
        Workload::MergeCounter,
        Workload::Scan,
        Workload::ScanCompacted,
        Workload::Flood,
        Workload::FloodDisk,
        Workload::Writers1,
        Workload::Writers4,
        Workload::HotRange,
        Workload::DeleteRange,
        Workload::DeleteRange10,
        Workload::DeleteHeavy,
        Workload::DeleteHeavyDisk,
        Workload::DeleteHeavyIndex,
        Workload::DeleteHeavyReopen,
        Workload::Reopen,
        Workload::Settle,
        Workload::DiskBytes,
        Workload::DiskSettled,
        Workload::PeakRss,
        Workload::IndexBytes,
        Workload::LoadAnon,
        Workload::OverwriteAnon,
        Workload::LtmGetCold,
        Workload::LtmGet,
        Workload::LtmSeek10,
        Workload::LtmScan,
        Workload::LtmReadBytes,
        Workload::LtmOpenAnon,
        Workload::LtmPeakRss,
    ];

    /// The figures of the larger-than-memory mode (`--larger-than-memory`).
    pub const LARGER_THAN_MEMORY: [Workload; 7] = [
        Workload::LtmGetCold,
        Workload::LtmGet,
        Workload::LtmSeek10,
        Workload::LtmScan,
        Workload::LtmReadBytes,
        Workload::LtmOpenAnon,
        Workload::LtmPeakRss,
    ];

    /// Whether the figure belongs to the larger-than-memory mode.
    pub fn is_larger_than_memory(self) -> bool {
        Workload::LARGER_THAN_MEMORY.contains(&self)
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Load => "load",
            Workload::Reopen => "reopen",
            Workload::Settle => "settle",
            Workload::Get => "get",
            Workload::GetPinned => "get-pinned",
            Workload::GetAbsent => "get-absent",
            Workload::GetZipf => "get-zipf",
            Workload::MultiGet => "multi-get",
            Workload::Mixed => "mixed",
            Workload::Seek10 => "seek10",
            Workload::CmpSeek10 => "cmp-seek10",
            Workload::CompactPlain => "compact-plain",
            Workload::FilterCompact => "filter-compact",
            Workload::MergeAppend => "merge-append",
            Workload::MergeAppendDisk => "merge-append-disk",
            Workload::MergeCounter => "merge-counter",
            Workload::Scan => "scan",
            Workload::Get2r => "get-2r",
            Workload::GetW => "get-w",
            Workload::OptimisticTxn => "optimistic-txn",
            Workload::Writers1 => "writers-1",
            Workload::Writers4 => "writers-4",
            Workload::ScanCompacted => "scan-compacted",
            Workload::Flood => "flood",
            Workload::FloodDisk => "flood-disk",
            Workload::HotRange => "hot-range",
            Workload::DeleteRange => "delete-range",
            Workload::DeleteRange10 => "delete-range-10",
            Workload::DeleteHeavy => "delete-heavy",
            Workload::DeleteHeavyDisk => "delete-heavy-disk",
            Workload::DeleteHeavyIndex => "delete-heavy-index",
            Workload::DeleteHeavyReopen => "delete-heavy-reopen",
            Workload::DiskBytes => "disk-bytes",
            Workload::DiskSettled => "disk-settled",
            Workload::PeakRss => "peak-rss",
            Workload::IndexBytes => "index-bytes",
            Workload::LoadAnon => "load-anon",
            Workload::OverwriteAnon => "overwrite-anon",
            Workload::LtmGetCold => "ltm-get-cold",
            Workload::LtmGet => "ltm-get",
            Workload::LtmSeek10 => "ltm-seek10",
            Workload::LtmScan => "ltm-scan",
            Workload::LtmPeakRss => "ltm-peak-rss",
            Workload::LtmReadBytes => "ltm-read-bytes",
            Workload::LtmOpenAnon => "ltm-open-anon",
        }
    }

    /// The unit of the figure.
    pub fn unit(self) -> Unit {
        match self {
            Workload::Load
            | Workload::MultiGet
            | Workload::Flood
            | Workload::CompactPlain
            | Workload::FilterCompact => Unit::NanosPerKey,
            Workload::Reopen | Workload::Settle | Workload::DeleteHeavyReopen => Unit::Millis,
            Workload::Scan | Workload::ScanCompacted | Workload::LtmScan => Unit::NanosPerEntry,
            Workload::DiskBytes
            | Workload::DiskSettled
            | Workload::PeakRss
            | Workload::MergeAppendDisk
            | Workload::LtmPeakRss => Unit::MiB,
            Workload::LtmReadBytes => Unit::BytesPerGet,
            Workload::IndexBytes
            | Workload::DeleteHeavyIndex
            | Workload::LoadAnon
            | Workload::OverwriteAnon
            | Workload::LtmOpenAnon => Unit::BytesPerKey,
            Workload::DeleteHeavyDisk | Workload::FloodDisk => Unit::TimesLive,
            _ => Unit::NanosPerOp,
        }
    }

    /// What the workload does, for the report.
    pub fn description(self) -> &'static str {
        match self {
            Workload::Load => "bulk load in batches of 1,000 (no sync), per key",
            Workload::Reopen => "close, then open again after the load (recovery included)",
            Workload::Settle => {
                "after the reopen, wait until the engine's background compactions are done \
                 (`wait_for_compact` through the RocksDB API, `wait_for_compaction` on the \
                 engine; nothing to wait for in LMDB and SQLite), before the warm-up and \
                 every timed read"
            }
            Workload::Get => "random get of present keys, value copied into an owned buffer",
            Workload::GetPinned => "random get of present keys, value read in place (zero-copy)",
            Workload::GetAbsent => "get of keys never written (same distribution)",
            Workload::GetZipf => "copying get of present keys, Zipfian access (theta 0.99)",
            Workload::MultiGet => {
                "uniform present keys read 32 at a time with the engine's multi-get, values \
                 copied (`multi_get` through the RocksDB API, `get_many_with` on the engine, \
                 one read transaction per batch in LMDB, a loop of gets elsewhere), per key"
            }
            Workload::Mixed => "80% copying get / 20% overwrite (single put, no sync), uniform",
            Workload::Seek10 => "seek to a random present key, read it and the next 10 entries",
            Workload::CmpSeek10 => {
                "as `seek10`, in a second database of the same keys whose comparator \
                 (`Options::set_comparator`) is reverse bytewise (RocksDB API engines only)"
            }
            Workload::CompactPlain => {
                "`compact_range` over the whole key range of a fresh database holding the \
                 keys (automatic compactions off), per key (engines with compaction \
                 filters: the RocksDB API engines and `alexdb-engine`)"
            }
            Workload::FilterCompact => {
                "as `compact-plain`, with a compaction filter (`Options::set_compaction_filter`) \
                 (`Db::set_compaction_filter` on the engine) that removes about half the \
                 keys"
            }
            Workload::MergeAppend => {
                "single merges through an appending merge operator, 2,000 operands of 64 bytes \
                 into each of 200 keys (at 1M keys; in proportion below, at least 2), one \
                 round over the keys at a time, in a store of their own (RocksDB API engines \
                 only), per merge"
            }
            Workload::MergeAppendDisk => {
                "disk of the `merge-append` store after a full compaction (values of 128 KB)"
            }
            Workload::MergeCounter => {
                "single merges adding 1 to an 8-byte counter (one counter per 100 keys, up to \
                 10,000), uniform, in a store of their own (RocksDB API engines only), per \
                 merge"
            }
            Workload::Scan => "full ordered scan of every entry, per entry",
            Workload::Get2r => {
                "copying get of present keys from 2 reader threads at once (uniform, a \
                 different order each): wall time ÷ gets of both threads"
            }
            Workload::GetW => {
                "copying get of present keys (uniform) while 1 writer thread keeps \
                 overwriting random present keys with single puts, per get"
            }
            Workload::OptimisticTxn => {
                "read-modify-write of one uniform present key per transaction: \
                 `get_for_update` + `put` + `commit` on an `OptimisticTransactionDB` \
                 (RocksDB API engines), a watched write on the engine, a write transaction \
                 (LMDB, SQLite), per transaction"
            }
            Workload::Writers1 => {
                "single puts overwriting uniform present keys from 1 writer thread, per put \
                 (the baseline of `writers-4`)"
            }
            Workload::Writers4 => {
                "single puts overwriting uniform present keys from 4 writer threads at once: \
                 wall time ÷ puts of all threads"
            }
            Workload::ScanCompacted => {
                "full ordered scan, per entry, right after a full compaction (which follows \
                 the overwrites of `mixed` and `writers-*`)"
            }
            Workload::Flood => {
                "after `scan-compacted`: 3 × the key count of overwrites of uniform random \
                 loaded keys, in batches of 1,000 (no sync), from one writer as fast as it \
                 goes (the engine's own compaction runs meanwhile; RocksDB may stall or slow \
                 it, AlexDB slows it while compaction is behind), per key"
            }
            Workload::FloodDisk => {
                "allocated disk right after `flood` (no compaction asked for) ÷ the live \
                 data (keys × (key + value bytes))"
            }
            Workload::HotRange => {
                "new keys (a quarter of the key count, at most the operation count) put one \
                 by one into one narrow key range (every new key sits between two adjacent \
                 loaded keys), per put; its `max` latency is the longest put"
            }
            Workload::DeleteRange => {
                "range delete of 10,000 consecutive loaded keys (fewer at small scales: a \
                 40th of the keys), 10 to 100 disjoint ranges (as many as fit twice over in \
                 the first half of the keys: 25 at 1M keys, 100 at 10M), per range"
            }
            Workload::DeleteRange10 => "as `delete-range` over 10 consecutive keys, per range",
            Workload::DeleteHeavy => {
                "delete every other loaded key (batches of 1,000 deletes), per key; then a \
                 full compaction, close and reopen (the next three rows)"
            }
            Workload::DeleteHeavyDisk => {
                "allocated disk after `delete-heavy` and a full compaction ÷ the live data \
                 (live keys × (key + value bytes))"
            }
            Workload::DeleteHeavyIndex => {
                "in-memory index bytes per live key after `delete-heavy`, compaction and reopen"
            }
            Workload::DeleteHeavyReopen => {
                "close and open again after `delete-heavy` and compaction"
            }
            Workload::DiskBytes => "allocated disk blocks of the store after the reopen",
            Workload::DiskSettled => {
                "allocated disk blocks once the compactions the load left behind have run \
                 (after `settle`: RocksDB's flushes and compactions, AlexDB's key ordering, \
                 which is when it compresses)"
            }
            Workload::PeakRss => "peak resident set (VmHWM) of the engine's process",
            Workload::IndexBytes => {
                "bytes of the in-memory index per key, after the reopen (see below)"
            }
            Workload::LoadAnon => {
                "anonymous memory (`RssAnon`) the open and the load added, per key, 5 s \
                 after the last write: what a process that filled the store by writes \
                 holds of its own (AlexDB packs the index and gives free index memory \
                 back once a keyspace is quiet; RocksDB holds its memtables)"
            }
            Workload::OverwriteAnon => {
                "anonymous memory (`RssAnon`) the process holds beyond what it held before \
                 its first open, per key, after the load, the reopen and three rounds of \
                 \"overwrite a random third of the keys in batches of 1,000, compact \
                 everything\", 5 s after the last round: what a process that keeps writing holds \
                 once it is quiet, not only right after an open"
            }
            Workload::LtmGetCold => {
                "larger than memory (a fresh process in a memory cgroup limited to a quarter \
                 of the settled store's disk, page cache dropped before): first pass of \
                 random copying gets of present keys, right after the open"
            }
            Workload::LtmGet => "larger than memory: second pass of gets over the same keys",
            Workload::LtmSeek10 => {
                "larger than memory: seek to a random present key, read it and the next 10"
            }
            Workload::LtmScan => "larger than memory: full ordered scan, per entry",
            Workload::LtmReadBytes => {
                "larger than memory: bytes read from the disk (`read_bytes` of \
                 `/proc/self/io`) during `ltm-get-cold` ÷ its gets"
            }
            Workload::LtmPeakRss => {
                "larger than memory: peak resident set (VmHWM, reset when the reading \
                 process joins the group) of the reading process, key set included"
            }
            Workload::LtmOpenAnon => {
                "larger than memory: anonymous memory (`RssAnon`) the open of the store \
                 added, per key: what the engine holds in memory of its own (index, \
                 filters, caches), not the mapped or cached file pages"
            }
        }
    }

    /// The workload whose run produces this figure, for figures that are
    /// not asked for on their own.
    pub fn produced_by(self) -> Workload {
        match self {
            Workload::Writers1 => Workload::Writers4,
            Workload::DeleteRange10 => Workload::DeleteRange,
            Workload::FloodDisk => Workload::Flood,
            Workload::MergeAppendDisk => Workload::MergeAppend,
            Workload::DiskSettled => Workload::DiskBytes,
            Workload::DeleteHeavyDisk
            | Workload::DeleteHeavyIndex
            | Workload::DeleteHeavyReopen => Workload::DeleteHeavy,
            w => w,
        }
    }

    /// Whether the figure is a time per operation (charted as latency).
    pub fn is_latency(self) -> bool {
        matches!(
            self.unit(),
            Unit::NanosPerKey | Unit::NanosPerOp | Unit::NanosPerEntry
        )
    }
}

/// Units of the figures; smaller is better for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds per key loaded.
    NanosPerKey,
    /// Nanoseconds per operation.
    NanosPerOp,
    /// Nanoseconds per entry visited.
    NanosPerEntry,
    /// Milliseconds.
    Millis,
    /// Mebibytes.
    MiB,
    /// Bytes per key.
    BytesPerKey,
    /// A multiple of the live data.
    TimesLive,
    /// Bytes per get.
    BytesPerGet,
}
