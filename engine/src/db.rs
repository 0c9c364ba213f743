//! The database handle: open, write, read, snapshot, iterate, compact.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use arc_swap::ArcSwap;

use crate::batch::{WriteBatch, check_key};
use crate::checkpoint::{self, CheckpointFile};
use crate::compaction::{self, Compactor};
use crate::durable;
use crate::error::{Error, Result};
use crate::file_hold::FileHold;
use crate::format::manifest::Manifest;
use crate::format::segment_header::{SEGMENT_VERSION, SegmentHeader, SegmentKind, version_of};
use crate::index::AlexIndex;
use crate::iter::{Cursor, KeyRange};
use crate::keyspace::{
    self, DEFAULT_KEYSPACE, Keyspace, KeyspaceId, KeyspaceTable, MANIFEST_FILE, validate_name,
};
use crate::location::Location;
use crate::log_reader::{self, BatchLog};
use crate::log_writer::{self, Writer};
use crate::merge::{MergeFunction, SharedMergeFunction};
use crate::mvcc::{Relocations, SnapshotRegistry};
use crate::options::{Options, WriteOptions};
use crate::prepared;
use crate::read::{self, PinnedValue, ValueRef};
use crate::recovery::{self, Recovered};
use crate::segment::scan::scan_frames;
use crate::segment::{Segment, SegmentTable};
use crate::shared::{Counters, Shared};
use crate::snapshot::{Snapshot, SnapshotGuard, keyspace_of, missing};
use crate::stats::Stats;
use crate::write_conflicts::{self, WatchedKey};
use crate::write_queue;

/// Name of the lock file inside the database directory.
pub const LOCK_FILE: &str = "LOCK";

/// An open database. `Send + Sync`: share it between threads with `Arc`.
///
/// Reads never take a lock or wait for a writer; writes are serialized,
/// and writes from many threads at once are written as groups.
#[derive(Debug)]
pub struct Db {
    shared: Arc<Shared>,
    compactor: Option<Compactor>,
}

impl Db {
    /// The shared state, for unit tests that drive internals step by step.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Opens (or, with `create_if_missing`, creates) the database at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let dir = path.as_ref().to_path_buf();
        let exists = prepare_dir(&dir, &options)?;
        let lock = lock_dir(&dir)?;
        if !exists {
            let manifest = Manifest {
                next_keyspace_id: 1,
                keyspaces: vec![(0, DEFAULT_KEYSPACE.to_string())],
                live: None,
            };
            keyspace::write_manifest(&options.file_system, &dir, &manifest)?;
        }
        let manifest = keyspace::read_manifest(&options.file_system, &dir)?;
        let recovered =
            recovery::recover(&options.file_system, &dir, &manifest, options.segment_bytes)?;
        let shared = Arc::new(build_shared(dir, options, lock, manifest, recovered)?);
        retire_older_format_segment(&shared)?;
        let compactor = shared
            .options
            .background_compaction
            .then(|| Compactor::start(&shared));
        Ok(Db { shared, compactor })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// Writes an openable, consistent copy of the database into `dir`,
    /// which must not exist yet: sealed segments are hard-linked, the active
    /// segment's written prefix is copied (see `checkpoint.rs`). Returns the
    /// files of the copy.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<Vec<CheckpointFile>> {
        checkpoint::create(&self.shared, dir.as_ref())
    }

    /// The batches written after sequence number `after`, oldest first, as
    /// the log holds them (see `log_reader.rs`); fails with
    /// [`Error::HistoryGone`] if compaction removed some of them.
    pub fn batches_since(&self, after: u64) -> Result<BatchLog> {
        log_reader::batches_since(&self.shared, after)
    }

    /// Keeps every segment file that exists now from being removed until
    /// the returned hold is dropped (see `file_hold.rs`).
    pub fn hold_files(&self) -> FileHold {
        FileHold::new(self.shared.segments.load_full())
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.shared.options
    }

    /// The id of the keyspace named `name`.
    pub fn keyspace(&self, name: &str) -> Option<KeyspaceId> {
        self.shared.keyspaces.load().by_name(name).map(|k| k.id())
    }

    /// The names of all keyspaces, `"default"` first.
    pub fn keyspace_names(&self) -> Vec<String> {
        self.shared
            .keyspaces
            .load()
            .iter()
            .map(|k| k.name().to_string())
            .collect()
    }

    /// Creates a keyspace (or returns the existing one of that name).
    pub fn create_keyspace(&self, name: &str) -> Result<KeyspaceId> {
        validate_name(name)?;
        let mut w = self.shared.lock_writer();
        self.shared.check_poison()?;
        if let Some(ks) = self.shared.keyspaces.load().by_name(name) {
            return Ok(ks.id());
        }
        let mut manifest = w.manifest.clone();
        let id = manifest.next_keyspace_id;
        manifest.next_keyspace_id += 1;
        manifest.keyspaces.push((id, name.to_string()));
        durable::write_manifest_after_log(&self.shared, &w, &manifest)?;
        w.manifest = manifest;
        let ks = Arc::new(Keyspace::new(
            KeyspaceId(id),
            name.to_string(),
            AlexIndex::new(),
            0,
        ));
        let table = self.shared.keyspaces.load().with(ks);
        self.shared.keyspaces.store(Arc::new(table));
        Ok(KeyspaceId(id))
    }

    /// Drops a keyspace and all its keys; compaction frees their space.
    /// The default keyspace cannot be dropped.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        if name == DEFAULT_KEYSPACE {
            return Err(Error::InvalidArgument(
                "the default keyspace cannot be dropped".into(),
            ));
        }
        let mut w = self.shared.lock_writer();
        self.shared.check_poison()?;
        let keyspaces = self.shared.keyspaces.load_full();
        let ks = keyspaces
            .by_name(name)
            .cloned()
            .ok_or_else(|| Error::InvalidArgument(format!("keyspace {name:?} does not exist")))?;
        let mut manifest = w.manifest.clone();
        manifest.keyspaces.retain(|(id, _)| *id != ks.id().0);
        durable::write_manifest_after_log(&self.shared, &w, &manifest)?;
        w.manifest = manifest;
        self.shared
            .keyspaces
            .store(Arc::new(keyspaces.without(ks.id())));
        drop(w);
        account_dropped(&self.shared, &ks);
        self.shared.request_compaction();
        Ok(())
    }

    /// Sets `key` to `value` in `keyspace`.
    pub fn put(
        &self,
        keyspace: KeyspaceId,
        key: &[u8],
        value: &[u8],
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put(keyspace, key, value);
        self.write(&batch, opts)
    }

    /// Deletes `key` from `keyspace` (not an error if absent).
    pub fn delete(&self, keyspace: KeyspaceId, key: &[u8], opts: &WriteOptions) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete(keyspace, key);
        self.write(&batch, opts)
    }

    /// Merges `operand` into `key` with the keyspace's merge function (see
    /// [`Db::set_merge_function`] and [`crate::merge`]).
    pub fn merge(
        &self,
        keyspace: KeyspaceId,
        key: &[u8],
        operand: &[u8],
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.merge(keyspace, key, operand);
        self.write(&batch, opts)
    }

    /// Sets (or, with `None`, removes) the function merges into `keyspace`
    /// are resolved with. It applies to merges written from now on; it is
    /// not stored in the database, so set it again after every open.
    pub fn set_merge_function(
        &self,
        keyspace: KeyspaceId,
        function: Option<Arc<dyn MergeFunction>>,
    ) -> Result<()> {
        let ks = keyspace_of(&self.shared, keyspace)?;
        // Under the writer lock, so no batch resolves half with the old one.
        let _w = self.shared.lock_writer();
        ks.set_merge_function(function.map(SharedMergeFunction));
        Ok(())
    }

    /// Applies `batch` atomically: readers see all of it or none of it, and
    /// after any crash it is entirely present or entirely absent.
    pub fn write(&self, batch: &WriteBatch, opts: &WriteOptions) -> Result<()> {
        write_queue::submit(&self.shared, batch, &[], opts.sync)
    }

    /// Applies `batch` atomically, as [`Self::write`] does, unless one of
    /// the `watched` keys has a version newer than its `since_seq`: then it
    /// writes nothing and fails with [`Error::Conflict`]. The check and the
    /// write happen under the writer lock, so no other write can come
    /// between them (optimistic transactions commit through this).
    ///
    /// Keep a snapshot at or below every `since_seq` registered while you
    /// rely on this, so that compaction cannot forget a newer delete.
    pub fn write_unless_changed(
        &self,
        batch: &WriteBatch,
        opts: &WriteOptions,
        watched: &[WatchedKey<'_>],
    ) -> Result<()> {
        write_queue::submit(&self.shared, batch, watched, opts.sync)
    }

    /// Fails with [`Error::Conflict`] if one of the `watched` keys has a
    /// version newer than its `since_seq`. Unlike
    /// [`Self::write_unless_changed`] this takes no lock: a write may land
    /// right after the check unless the caller excludes writers of these
    /// keys (as a key lock does).
    pub fn check_unchanged(&self, watched: &[WatchedKey<'_>]) -> Result<()> {
        write_conflicts::check(&self.shared, watched)
    }

    /// Saves `payload` as the prepared record `name` (replacing one of that
    /// name), durably, beside the log. Records survive close and crash
    /// until [`Self::remove_prepared`]; [`Self::prepared`] lists them.
    pub fn save_prepared(&self, name: &[u8], payload: &[u8]) -> Result<()> {
        prepared::save(&self.shared.fs, &self.shared.dir, name, payload)
    }

    /// Removes the prepared record `name` (not an error if there is none).
    pub fn remove_prepared(&self, name: &[u8]) -> Result<()> {
        prepared::remove(&self.shared.fs, &self.shared.dir, name)
    }

    /// Every prepared record still saved, as `(name, payload)`, by name.
    pub fn prepared(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        prepared::load_all(&self.shared.fs, &self.shared.dir)
    }

    /// Flushes every acknowledged write to stable storage.
    pub fn sync(&self) -> Result<()> {
        let ticket = self.shared.lock_writer().ticket;
        log_writer::sync_up_to(&self.shared, ticket)
    }

    /// Reads `key` without copying: the value stays in the map, and the
    /// returned handle (`Send`, reference-counted) keeps it there.
    pub fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<ValueRef>> {
        Ok(self.get_pinned(keyspace, key)?.map(|v| v.to_value_ref()))
    }

    /// Reads `key` without copying and without touching any shared
    /// reference count: the fastest read, for values used and dropped on
    /// the reading thread (see [`PinnedValue`]).
    pub fn get_pinned(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<PinnedValue>> {
        check_key(key)?;
        let keyspaces = self.shared.keyspaces.load();
        let ks = keyspaces.get(keyspace).ok_or_else(|| missing(keyspace))?;
        read::get_pinned(&self.shared, ks, key, None)
    }

    /// Reads `key` into a new vector.
    pub fn get_copied(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_pinned(keyspace, key)?.map(|v| v.to_vec()))
    }

    /// Takes a snapshot of every keyspace.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(&self.shared)
    }

    /// A cursor over `keyspace` within `range`, reading at this moment (an
    /// implicit snapshot). Position it with `seek_to_first` and friends.
    pub fn cursor(&self, keyspace: KeyspaceId, range: KeyRange) -> Result<Cursor> {
        let ks = keyspace_of(&self.shared, keyspace)?;
        Ok(Cursor::new(
            SnapshotGuard::register(&self.shared),
            ks,
            range,
        ))
    }

    /// The last sequence number made visible (0 for a new database).
    pub fn latest_sequence_number(&self) -> u64 {
        self.shared.visible()
    }

    /// Seals the active segment and compacts every sealed segment now.
    /// Returns how many compactions ran.
    pub fn compact(&self) -> Result<u64> {
        {
            let mut w = self.shared.lock_writer();
            self.shared.check_poison()?;
            if w.active.data_bytes() > 0 {
                let capacity = self.shared.options.segment_bytes;
                log_writer::rotate(&self.shared, &mut w, capacity)?;
            }
        }
        compaction::compact_while_needed(&self.shared, -1.0)
    }

    /// Number of keys with a value in `keyspace`.
    pub fn live_keys(&self, keyspace: KeyspaceId) -> Result<u64> {
        Ok(keyspace_of(&self.shared, keyspace)?.live_keys())
    }

    /// Reads every record of every segment and checks its checksum.
    pub fn verify(&self) -> Result<()> {
        for segment in self.shared.segments.load().iter() {
            let scan = scan_frames(segment.written_bytes(), |_, _| {});
            if let Some(d) = scan.damage {
                return Err(Error::corruption(segment.path(), d.offset, d.reason));
            }
        }
        Ok(())
    }

    /// The database's counters.
    pub fn stats(&self) -> Stats {
        let s = &self.shared;
        let table = s.segments.load();
        let keyspaces = s.keyspaces.load();
        Stats {
            live_keys: keyspaces.iter().map(|k| k.live_keys()).sum(),
            index_entries: keyspaces.iter().map(|k| k.index.len() as u64).sum(),
            index_bytes: keyspaces
                .iter()
                .map(|k| k.index.memory_bytes() as u64)
                .sum(),
            mapped_bytes: table.iter().map(|x| x.bytes().len() as u64).sum(),
            data_bytes: table.iter().map(|x| x.data_bytes()).sum(),
            dead_bytes: table.iter().map(|x| x.dead_bytes()).sum(),
            segments: table.len() as u64,
            writes: s.counters.writes.load(Ordering::Relaxed),
            keys_written: s.counters.keys_written.load(Ordering::Relaxed),
            compactions: s.counters.compactions.load(Ordering::Relaxed),
            bytes_reclaimed: s.counters.bytes_reclaimed.load(Ordering::Relaxed),
            compaction_errors: s.counters.compaction_errors.load(Ordering::Relaxed),
            snapshots_open: s.snapshots.open_count() as u64,
            oldest_snapshot_age: s.snapshots.oldest_age(),
            relocated_versions: s.relocations.load().len() as u64,
            latest_sequence: s.visible(),
            range_tombstones: keyspaces
                .iter()
                .map(|k| k.range_tombstones().len() as u64)
                .sum(),
        }
    }
}

impl Drop for Db {
    /// Closes cleanly: stops compaction, syncs the active segment and records
    /// its end in the MANIFEST, so that later damage to what was written is
    /// reported rather than taken for a torn tail. A failure here only
    /// leaves the database as a crash would.
    fn drop(&mut self) {
        drop(self.compactor.take());
        let _ = durable::close_cleanly(&self.shared);
    }
}

/// Checks what is at `dir`: returns whether a database exists there.
/// Changes nothing on disk unless a new database is to be created.
fn prepare_dir(dir: &Path, options: &Options) -> Result<bool> {
    let fs = &options.file_system;
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(Error::NotADatabase {
                path: dir.to_path_buf(),
                reason: "it is a file, not a directory".into(),
            });
        }
        Ok(_) => {
            let names = fs.list_dir(dir).map_err(|e| Error::io(dir, e))?;
            if names.iter().any(|n| n == MANIFEST_FILE) {
                if options.error_if_exists {
                    return Err(Error::AlreadyExists(dir.to_path_buf()));
                }
                return Ok(true);
            }
            let foreign = names
                .iter()
                .find(|n| *n != LOCK_FILE && *n != "MANIFEST.tmp");
            if let Some(name) = foreign {
                return Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: format!("the directory holds {name:?} but no {MANIFEST_FILE}"),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dir, e)),
    }
    if !options.create_if_missing {
        return Err(Error::NotFound(dir.to_path_buf()));
    }
    fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    Ok(false)
}

/// Takes the exclusive lock on the directory.
fn lock_dir(dir: &Path) -> Result<File> {
    let path: PathBuf = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked(path)),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

fn build_shared(
    dir: PathBuf,
    options: Options,
    lock: File,
    mut manifest: Manifest,
    r: Recovered,
) -> Result<Shared> {
    let fs = options.file_system.clone();
    let next_seq = r.last_seq + 1;
    let mut segments = r.segments;
    let next_id = AtomicU32::new(r.next_segment_id);
    let active = match r.active {
        Some(a) => a,
        None => {
            let header = SegmentHeader {
                kind: SegmentKind::Log,
                id: next_id.fetch_add(1, Ordering::SeqCst),
                seq_floor: next_seq,
            };
            let s = Arc::new(Segment::create(
                &fs,
                &dir,
                header,
                options.segment_bytes,
                crate::segment::GROW_CHUNK,
            )?);
            fs.sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
            segments.push(s.clone());
            s
        }
    };
    durable::record_open(&fs, &dir, &mut manifest, &segments, &active)?;
    Ok(Shared {
        fs,
        segments: ArcSwap::from_pointee(SegmentTable::new(segments)),
        keyspaces: ArcSwap::from_pointee(KeyspaceTable::new(r.keyspaces)),
        relocations: ArcSwap::from_pointee(Relocations::default()),
        visible_seq: AtomicU64::new(r.last_seq),
        next_segment_id: next_id,
        writer: Mutex::new(Writer::new(active, next_seq, manifest)),
        write_queue: Default::default(),
        sync: Mutex::default(),
        poison: OnceLock::new(),
        snapshots: SnapshotRegistry::default(),
        compaction_lock: Mutex::new(()),
        compaction_signal: (Mutex::default(), Condvar::new()),
        counters: Counters::default(),
        _lock_file: lock,
        dir,
        options,
    })
}

/// Seals an active segment written by an older format version, so that new
/// records (which may use kinds that version lacks) go to a segment whose
/// header names the format they need.
fn retire_older_format_segment(shared: &Shared) -> Result<()> {
    let mut w = shared.lock_writer();
    let active = &w.active;
    if version_of(active.bytes()) < SEGMENT_VERSION {
        log_writer::rotate(shared, &mut w, shared.options.segment_bytes)?;
    }
    Ok(())
}

/// Counts every record of a dropped keyspace's index as dead.
fn account_dropped(shared: &Shared, ks: &Keyspace) {
    let table = shared.segments.load();
    let resolver = read::TableResolver::new(&table);
    let mut from: Option<Vec<u8>> = None;
    loop {
        let guard = crossbeam_epoch::pin();
        let mut payloads = Vec::new();
        let bound = from
            .as_deref()
            .map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        ks.index.collect(
            bound,
            crate::index::ScanDirection::Forward,
            1024,
            &resolver,
            &guard,
            &mut payloads,
        );
        // Deletes were counted dead when they were written.
        for &p in payloads.iter().filter(|&&p| !Location(p).is_tombstone()) {
            log_writer::account_dead(&table, Location(p));
        }
        if payloads.len() < 1024 {
            return;
        }
        let last = payloads[payloads.len() - 1];
        from = Some(crate::index::KeyResolver::key(&resolver, last).to_vec());
    }
}
