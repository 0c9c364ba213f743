//! The plain enums named by option setters. Discriminants are RocksDB's, so
//! `as i32` casts in user code give the same numbers as with rocksdb.

/// A block compression algorithm.
///
/// AlexDB does not compress its segments; the choice is recorded and has no
/// effect on the data written.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
pub enum DBCompressionType {
    /// No compression.
    None = 0,
    /// Snappy.
    Snappy = 1,
    /// Zlib.
    Zlib = 2,
    /// Bzip2.
    Bz2 = 3,
    /// LZ4.
    Lz4 = 4,
    /// LZ4 high compression.
    Lz4hc = 5,
    /// Zstandard.
    Zstd = 7,
}

/// A compaction strategy.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
pub enum DBCompactionStyle {
    /// Leveled compaction (RocksDB's default).
    Level = 0,
    /// Universal (tiered) compaction.
    Universal = 1,
    /// FIFO: drop the oldest files past a size limit.
    Fifo = 2,
}

/// How much write-ahead-log damage recovery tolerates on open.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
pub enum DBRecoveryMode {
    /// Ignore a torn record at the very end of the log.
    TolerateCorruptedTailRecords = 0,
    /// Fail on any damage.
    AbsoluteConsistency = 1,
    /// Recover up to the first damaged record and stop there (the default).
    PointInTime = 2,
    /// Skip every damaged record.
    SkipAnyCorruptedRecord = 3,
}

/// Verbosity of the info log.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(i32)]
pub enum LogLevel {
    /// Debugging detail.
    Debug = 0,
    /// Informational messages (the default).
    Info,
    /// Warnings.
    Warn,
    /// Errors.
    Error,
    /// Fatal errors.
    Fatal,
    /// Header lines only.
    Header,
}

/// The in-memory write buffer implementation.
///
/// AlexDB has its own write buffer; the choice is accepted and has no effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemtableFactory {
    /// A vector, sorted on flush.
    Vector,
    /// A hash of skip lists.
    HashSkipList {
        /// Number of hash buckets.
        bucket_count: usize,
        /// Maximum skip list height.
        height: i32,
        /// Skip list branching factor.
        branching_factor: i32,
    },
    /// A hash of linked lists.
    HashLinkList {
        /// Number of hash buckets.
        bucket_count: usize,
    },
}

/// Which files a leveled compaction picks first.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(i32)]
pub enum CompactionPri {
    /// Larger files first, compensated by deletions (the default).
    ByCompensatedSize = 0,
    /// Files whose newest data is oldest first.
    OldestLargestSeqFirst = 1,
    /// Files whose range was compacted least recently first.
    OldestSmallestSeqFirst = 2,
    /// Files with the smallest overlap ratio with the next level first.
    MinOverlappingRatio = 3,
    /// Round-robin through the key space.
    RoundRobin = 4,
}

/// When universal compaction stops adding files to a run.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
pub enum UniversalCompactionStopStyle {
    /// Stop at a file of dissimilar size.
    Similar = 0,
    /// Stop when the total size is reached (the default).
    Total = 1,
}

/// Whether a manual compaction rewrites the bottommost level.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum BottommostLevelCompaction {
    /// Never.
    Skip = 0,
    /// Only when a compaction filter is set (the default).
    IfHaveCompactionFilter,
    /// Always.
    Force,
    /// Always, but not files produced by the same compaction.
    ForceOptimized,
}

/// Which storage tiers a read may use.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde1", derive(serde::Serialize, serde::Deserialize))]
#[repr(i32)]
pub enum ReadTier {
    /// Memory and storage (the default).
    All = 0,
    /// Memtables and block cache only.
    BlockCache,
    /// Persisted data only.
    Persisted,
    /// Memtables only.
    Memtable,
}

/// The checksum algorithm of table blocks.
///
/// AlexDB checksums its records with CRC32C whatever is chosen.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum ChecksumType {
    /// No checksum.
    NoChecksum = 0,
    /// CRC32C.
    CRC32c = 1,
    /// xxHash.
    XXHash = 2,
    /// xxHash64.
    XXHash64 = 3,
    /// XXH3.
    XXH3 = 4,
}

/// Key encoding of plain tables.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Default)]
pub enum KeyEncodingType {
    /// Full keys.
    #[default]
    Plain = 0,
    /// Shared prefixes.
    Prefix = 1,
}

/// The index of block-based tables.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum BlockBasedIndexType {
    /// Binary search over block boundaries.
    BinarySearch,
    /// A hash over key prefixes.
    HashSearch,
    /// A two-level binary search.
    TwoLevelIndexSearch,
}

/// The index inside each data block.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(C)]
pub enum DataBlockIndexType {
    /// Binary search (the default).
    BinarySearch = 0,
    /// Binary search plus a hash index.
    BinaryAndHash = 1,
}

/// When table metadata blocks are pinned in the block cache.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(C)]
pub enum BlockBasedTablePinningTier {
    /// Decided by other options.
    Fallback = 0,
    /// Never pinned.
    None = 1,
    /// Pinned for freshly flushed and similar small files.
    FlushAndSimilar = 2,
    /// Always pinned.
    All = 3,
}
