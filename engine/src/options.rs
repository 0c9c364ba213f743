//! Options for opening a database and for writes, with their defaults.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::io::{FileSystem, StdFileSystem};
use crate::mvcc::key_order::KeyOrder;

/// Largest key accepted, in bytes (1 MiB).
pub const MAX_KEY_BYTES: usize = 1 << 20;
/// Largest value accepted, in bytes (1 GiB).
pub const MAX_VALUE_BYTES: usize = 1 << 30;
/// Largest encoded write batch accepted, in bytes (2 GiB).
pub const MAX_BATCH_BYTES: usize = 1 << 31;

/// Smallest segment size used, in bytes (4 KiB): a smaller
/// [`Options::segment_bytes`] is raised to it (a segment must hold its
/// header and its seal).
pub const MIN_SEGMENT_BYTES: u64 = 4 << 10;

/// How compaction stores the values of a keyspace's key-ordered data (see
/// FORMAT.md, "Compressed values"). Log segments always hold values as
/// written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Values as written.
    #[default]
    None,
    /// Each value compressed on its own (LZ4) with a dictionary its
    /// segment holds once, where that saves at least an eighth of it.
    Lz4,
}

impl Compression {
    pub(crate) fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
        }
    }

    pub(crate) fn from_code(code: u8) -> Self {
        match code {
            1 => Compression::Lz4,
            _ => Compression::None,
        }
    }
}

/// How to open a database.
#[derive(Clone)]
pub struct Options {
    /// Create the directory and an empty database if none exists. Default: `true`.
    pub create_if_missing: bool,
    /// Fail if a database already exists. Default: `false`.
    pub error_if_exists: bool,
    /// Size at which the active segment is sealed and a new one started.
    /// Default: 32 MiB. A single batch larger than this gets a segment of
    /// its own, sized to fit. Taken within [`MIN_SEGMENT_BYTES`] and
    /// [`crate::format::location::MAX_SEGMENT_BYTES`].
    pub segment_bytes: u64,
    /// A sealed segment whose dead bytes exceed this fraction of its size is
    /// rewritten by compaction. Default: `0.5`.
    pub compaction_dead_ratio: f64,
    /// Compaction also puts sealed log segments in key order, merged with
    /// key-ordered runs no larger than what is merged so far, into runs of
    /// at most this many live bytes, so that scans and seeks over data that
    /// was written once read neighbouring records together. Each record is
    /// rewritten about log2(this / `segment_bytes`) times at most. A
    /// database of more than 32 times this many live bytes merges its runs
    /// further, up to a 32nd of its live bytes a run (at most 512 MiB), so
    /// that it keeps some 32 to 64 runs, not one per this many bytes. 0
    /// leaves log segments in log order until their dead bytes call for
    /// compaction. Default: 128 MiB. Taken as at most
    /// [`crate::format::location::MAX_SEGMENT_BYTES`] (a run is one
    /// segment, and no segment can be larger).
    pub key_order_run_bytes: u64,
    /// Writes are slowed down (held to 16 MiB/s, RocksDB's delayed write
    /// rate) while the dead bytes due for reclaiming exceed the larger of
    /// this and half the live bytes, so that a writer that overwrites or
    /// deletes faster than compaction reclaims cannot fill the disk with
    /// dead data. Only while the background compaction thread is working
    /// off that debt; never stopped. 0 never slows writes. Default: 64 MiB.
    pub write_slowdown_debt_bytes: u64,
    /// Run compaction on a background thread whenever a segment is sealed.
    /// Default: `true`. With `false`, only [`crate::Db::compact`] compacts.
    pub background_compaction: bool,
    /// Verify each record's checksum when it is read. Default: `true`.
    pub verify_checksums: bool,
    /// Build the index of an open database with packed leaves: about 6
    /// bytes of memory a key instead of about 20 (see `engine/FORMAT.md`,
    /// "The index in memory"). Lookups, scans, overwrites, deletes and new
    /// keys all work on packed leaves; a lookup costs within about 10% of a
    /// full leaf's, a new key's insert in the index about 3 µs against
    /// about 1.3 (it copies the leaf); a packed leaf grown past
    /// 2,048 keys turns back into full leaves (reading its keys from their
    /// records). Default: `true`.
    pub pack_index_at_open: bool,
    /// Pack the index's leaves that writes made after the open (full
    /// leaves, about 20 bytes a key) once a keyspace has taken no new key
    /// and deleted none for two seconds, on the compaction thread (so only
    /// with [`Self::background_compaction`]): a database filled by writes
    /// then takes the memory of one opened from disk. Packing holds the
    /// index's writers for about as long as copying those leaves takes
    /// (milliseconds a million keys). Default: `true`.
    pub pack_index_when_quiet: bool,
    /// A bound on the memory the engine holds of its own (the index, the
    /// index heap's free memory, segments' key filters and directories;
    /// not the mapped files), kept by the compaction thread (so only with
    /// [`Self::background_compaction`]) by dropping what can be rebuilt,
    /// packing the index and giving free memory back; see
    /// [`crate::memory_budget`] for what counts and what over-budget does.
    /// Default: none.
    pub memory_budget: Option<crate::MemoryBudget>,
    /// The file system seam all file I/O goes through. Default: the real one.
    pub file_system: Arc<dyn FileSystem>,
    /// The keyspaces (by name) whose range deletes follow an order of
    /// their own rather than the keys' bytes (see
    /// [`crate::mvcc::key_order`]). A keyspace's order is kept in the
    /// `MANIFEST` from its first open with one (or its creation); an open
    /// that names another order for such a keyspace is refused, and so is
    /// one that names none, except a read-only open, which leaves the
    /// keyspace out (as if it did not exist). Default: none.
    pub key_orders: HashMap<String, Arc<dyn KeyOrder>>,
    /// Called on the compaction thread with the error's text each time a
    /// background compaction pass fails (the last one is also kept for
    /// [`crate::Db::background_error`]). Default: none.
    pub on_background_error: Option<BackgroundErrorListener>,
}

/// A callback told of each failed background pass (see
/// [`Options::on_background_error`]).
pub type BackgroundErrorListener = Arc<dyn Fn(&str) + Send + Sync>;

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            segment_bytes: 32 << 20,
            compaction_dead_ratio: 0.5,
            key_order_run_bytes: 128 << 20,
            write_slowdown_debt_bytes: 64 << 20,
            background_compaction: true,
            verify_checksums: true,
            pack_index_at_open: true,
            pack_index_when_quiet: true,
            memory_budget: None,
            file_system: Arc::new(StdFileSystem),
            key_orders: HashMap::new(),
            on_background_error: None,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("segment_bytes", &self.segment_bytes)
            .field("compaction_dead_ratio", &self.compaction_dead_ratio)
            .field("key_order_run_bytes", &self.key_order_run_bytes)
            .field("write_slowdown_debt_bytes", &self.write_slowdown_debt_bytes)
            .field("background_compaction", &self.background_compaction)
            .field("verify_checksums", &self.verify_checksums)
            .field("pack_index_at_open", &self.pack_index_at_open)
            .field("pack_index_when_quiet", &self.pack_index_when_quiet)
            .field("memory_budget", &self.memory_budget)
            .field("key_orders", &self.key_orders.keys().collect::<Vec<_>>())
            .field("on_background_error", &self.on_background_error.is_some())
            .finish_non_exhaustive()
    }
}

impl Options {
    /// These options with `segment_bytes` and `key_order_run_bytes` within
    /// what a segment can be (0 still turns key order off).
    pub(crate) fn normalized(mut self) -> Self {
        let max = crate::format::location::MAX_SEGMENT_BYTES;
        self.segment_bytes = self.segment_bytes.clamp(MIN_SEGMENT_BYTES, max);
        self.key_order_run_bytes = self.key_order_run_bytes.min(max);
        self
    }
}

/// How to perform one write.
///
/// Durability: every acknowledged write survives a process crash (it is in
/// the operating system's page cache before the call returns). With
/// `sync = true` the write is also flushed to stable storage (`fdatasync`)
/// before returning, so it survives a power loss or OS crash; writers that
/// sync at the same time share one flush (group commit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Flush to stable storage before acknowledging. Default: `false`.
    pub sync: bool,
    /// Fail with [`crate::Error::WriteStall`], writing nothing, instead of
    /// sleeping while writes are slowed (see
    /// [`Options::write_slowdown_debt_bytes`]), as RocksDB's `no_slowdown`
    /// does. Default: `false`.
    pub no_slowdown: bool,
}

impl WriteOptions {
    /// Options for a write that is flushed to stable storage before returning.
    pub fn synced() -> Self {
        WriteOptions {
            sync: true,
            ..WriteOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::location::MAX_SEGMENT_BYTES;

    /// A key-ordered run is written as one segment: a run size past what a
    /// location can address would give outputs whose records have none.
    #[test]
    fn sizes_past_what_a_segment_can_be_are_clamped() {
        let o = Options {
            segment_bytes: u64::MAX,
            key_order_run_bytes: u64::MAX,
            ..Options::default()
        }
        .normalized();
        assert_eq!(o.segment_bytes, MAX_SEGMENT_BYTES);
        assert_eq!(o.key_order_run_bytes, MAX_SEGMENT_BYTES);
        let o = Options {
            segment_bytes: MAX_SEGMENT_BYTES + 1,
            key_order_run_bytes: MAX_SEGMENT_BYTES + 1,
            ..Options::default()
        }
        .normalized();
        assert_eq!(o.key_order_run_bytes, MAX_SEGMENT_BYTES);
        assert_eq!(o.segment_bytes, MAX_SEGMENT_BYTES);
    }

    #[test]
    fn sizes_within_the_limits_are_kept() {
        let o = Options {
            segment_bytes: 1,
            key_order_run_bytes: 0,
            ..Options::default()
        }
        .normalized();
        assert_eq!(o.segment_bytes, MIN_SEGMENT_BYTES);
        assert_eq!(o.key_order_run_bytes, 0, "0 still turns key order off");
        let o = Options {
            key_order_run_bytes: MAX_SEGMENT_BYTES,
            ..Options::default()
        }
        .normalized();
        assert_eq!(o.key_order_run_bytes, MAX_SEGMENT_BYTES);
        let d = Options::default();
        let n = d.clone().normalized();
        assert_eq!(
            (n.segment_bytes, n.key_order_run_bytes),
            (d.segment_bytes, d.key_order_run_bytes)
        );
    }
}
