//! Per-call options of writes, flushes and file ingestion: [`WriteOptions`],
//! [`FlushOptions`] and [`IngestExternalFileOptions`].

/// Settings of one write.
///
/// AlexDB honours `sync` (the write is on stable storage when the call
/// returns) and `disable_wal` (the write skips the log and survives a crash
/// only after the next flush). `ignore_missing_column_families` is read by
/// the database layer. The other settings concern RocksDB's write throttling
/// and are accepted with no effect.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    sync: bool,
    disable_wal: bool,
    ignore_missing_column_families: bool,
    no_slowdown: bool,
}

impl WriteOptions {
    /// The default settings: no sync, WAL enabled.
    pub fn new() -> WriteOptions {
        WriteOptions::default()
    }

    /// If true, the write is synced to stable storage before the call returns.
    ///
    /// Default: false.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// If true, the write skips the write-ahead log and may be lost in a crash.
    ///
    /// Default: false.
    pub fn disable_wal(&mut self, disable: bool) {
        self.disable_wal = disable;
    }

    /// If true, writes to column families that no longer exist are skipped
    /// instead of failing the batch.
    ///
    /// Default: false.
    pub fn set_ignore_missing_column_families(&mut self, ignore: bool) {
        self.ignore_missing_column_families = ignore;
    }

    /// If true, a write that would be slowed down because compaction is
    /// behind fails at once with `Incomplete` ("Write stall"), writing
    /// nothing, instead of waiting.
    ///
    /// Default: false.
    pub fn set_no_slowdown(&mut self, no_slowdown: bool) {
        self.no_slowdown = no_slowdown;
    }

    /// Accepted for compatibility; AlexDB does not prioritise writes, so
    /// this has no effect.
    pub fn set_low_pri(&mut self, _v: bool) {}

    /// Accepted for compatibility; AlexDB has no memtable insert hints, so
    /// this has no effect.
    pub fn set_memtable_insert_hint_per_batch(&mut self, _v: bool) {}

    /// Whether the write must be synced before returning.
    pub(crate) fn sync(&self) -> bool {
        self.sync
    }

    /// Whether a slowed write fails instead of waiting.
    pub(crate) fn no_slowdown(&self) -> bool {
        self.no_slowdown
    }

    /// Whether the write skips the write-ahead log.
    #[allow(
        dead_code,
        reason = "AlexDB always logs; kept for when disable_wal is honoured"
    )]
    pub(crate) fn wal_disabled(&self) -> bool {
        self.disable_wal
    }

    /// Whether writes to missing column families are skipped.
    pub(crate) fn ignore_missing_column_families(&self) -> bool {
        self.ignore_missing_column_families
    }
}

/// Settings of a manual flush.
#[derive(Clone, Debug)]
pub struct FlushOptions {
    wait: bool,
}

impl Default for FlushOptions {
    fn default() -> Self {
        Self { wait: true }
    }
}

impl FlushOptions {
    /// The default settings: wait for the flush.
    pub fn new() -> FlushOptions {
        FlushOptions::default()
    }

    /// Whether the call waits until the flush is done.
    ///
    /// Default: true.
    pub fn set_wait(&mut self, wait: bool) {
        self.wait = wait;
    }

    /// Whether the caller waits for the flush.
    #[allow(
        dead_code,
        reason = "flushes are synchronous in AlexDB; kept for when they are not"
    )]
    pub(crate) fn wait(&self) -> bool {
        self.wait
    }
}

/// Settings of `DB::ingest_external_file_opts`.
#[derive(Clone, Debug)]
pub struct IngestExternalFileOptions {
    pub(crate) move_files: bool,
    pub(crate) snapshot_consistency: bool,
    pub(crate) allow_global_seqno: bool,
    pub(crate) allow_blocking_flush: bool,
    pub(crate) ingest_behind: bool,
}

impl Default for IngestExternalFileOptions {
    fn default() -> Self {
        Self {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            ingest_behind: false,
        }
    }
}

impl IngestExternalFileOptions {
    /// Move the files into the database instead of copying them.
    pub fn set_move_files(&mut self, v: bool) {
        self.move_files = v;
    }

    /// If false, snapshots taken before the ingestion may see its keys.
    pub fn set_snapshot_consistency(&mut self, v: bool) {
        self.snapshot_consistency = v;
    }

    /// If false, ingestion fails when the files overlap existing keys.
    pub fn set_allow_global_seqno(&mut self, v: bool) {
        self.allow_global_seqno = v;
    }

    /// If false, ingestion fails when it would need a flush first.
    pub fn set_allow_blocking_flush(&mut self, v: bool) {
        self.allow_blocking_flush = v;
    }

    /// Ingest below existing data: keys already present are kept.
    pub fn set_ingest_behind(&mut self, v: bool) {
        self.ingest_behind = v;
    }
}
