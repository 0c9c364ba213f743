//! The database handle: open, write, read, snapshot, iterate, compact.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use arc_swap::ArcSwap;

use crate::compaction::filter::CompactionFilter;
use crate::compaction::{self, Compactor};
use crate::db::checkpoint::{self, CheckpointFile};
use crate::db::dir_lock::{self, DirLock, LOCK_FILE, LockError};
use crate::db::file_hold::FileHold;
use crate::db::follower::{self, Followed};
use crate::db::keyspace::{
    self, DEFAULT_KEYSPACE, Keyspace, KeyspaceId, KeyspaceTable, MANIFEST_FILE, validate_name,
};
use crate::db::shared::{Counters, Shared};
use crate::db::stats::Stats;
use crate::error::{Error, Result};
use crate::format::index_checkpoint::{INDEX_FILE, INDEX_TMP_FILE};
use crate::format::location::Location;
use crate::format::manifest::Manifest;
use crate::format::segment_header::{SEGMENT_VERSION, SegmentHeader, SegmentKind, version_of};
use crate::index::{AlexIndex, LeafForm};
use crate::mvcc::key_order::{KeyspaceOrders, RangeOrder};
use crate::mvcc::merge_stack;
use crate::mvcc::snapshot_guard::SnapshotGuard;
use crate::mvcc::{Holder, Relocations, SnapshotRegistry};
use crate::options::{Compression, Options, WriteOptions};
use crate::read::iter::{Cursor, KeyRange};
use crate::read::log_reader::{self, BatchLog};
use crate::read::snapshot::{Snapshot, keyspace_of, missing};
use crate::read::{self, PinnedValue, ValueRef};
use crate::recovery::index_save;
use crate::recovery::{self, Recovered};
use crate::segment::scan::scan_frames;
use crate::segment::{Segment, SegmentTable};
use crate::write::batch::{WriteBatch, check_key};
use crate::write::conflicts::{self, WatchedKey};
use crate::write::durable;
use crate::write::leader;
use crate::write::log_writer;
use crate::write::merge::{MergeFunction, SharedMergeFunction};
use crate::write::prepared;
use crate::write::writer::Writer;

/// An open database. `Send + Sync`: share it between threads with `Arc`.
///
/// Reads never take a lock or wait for a writer; writes are serialized,
/// and writes from many threads at once are written as groups.
///
/// A handle opened with [`Db::open_read_only`] takes no lock, changes
/// nothing in the directory and refuses every write with
/// [`Error::ReadOnly`]; [`Db::catch_up`] moves it to what the primary has
/// written since (see `FORMAT.md`, "Readers without the lock").
#[derive(Debug)]
pub struct Db {
    /// The open state. A primary never replaces it; a read-only handle's
    /// [`Db::catch_up`] swaps in a newer one, while snapshots and cursors
    /// keep the one they were created on (and its mapped segments).
    shared: ArcSwap<Shared>,
    /// The directory and options (the same in every state).
    dir: PathBuf,
    options: Options,
    compactor: Option<Compactor>,
    /// Serializes [`Db::catch_up`] calls.
    catch_up: Mutex<()>,
}

impl Db {
    /// The current shared state.
    pub(crate) fn shared(&self) -> arc_swap::Guard<Arc<Shared>> {
        self.shared.load()
    }

    /// Opens (or, with `create_if_missing`, creates) the database at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let options = options.normalized();
        let dir = path.as_ref().to_path_buf();
        let exists = prepare_dir(&dir, &options)?;
        let lock = lock_dir(&dir, &options)?;
        if !exists {
            let manifest = Manifest {
                next_keyspace_id: 1,
                keyspaces: vec![(0, DEFAULT_KEYSPACE.to_string())],
                key_orders: Vec::new(),
                live: None,
            };
            keyspace::write_manifest(&options.file_system, &dir, &manifest)?;
        }
        let mut manifest = keyspace::read_manifest(&options.file_system, &dir)?;
        let orders = KeyspaceOrders::resolve(&manifest, &options.key_orders)?;
        let recovered = recovery::recover(
            &options.file_system,
            &dir,
            &manifest,
            options.segment_bytes,
            recovery::Mode::Primary,
            (leaf_form(&options), &orders),
        )?;
        if !orders.adopted.is_empty() {
            adopt_key_orders(&recovered, &orders.adopted, &mut manifest)?;
            keyspace::write_manifest(&options.file_system, &dir, &manifest)?;
        }
        let shared = Arc::new(build_shared(dir, options, Some(lock), manifest, recovered)?);
        retire_older_format_segment(&shared)?;
        // An open from the index checkpoint loads range deletes unapplied
        // (those written after its cut, and any it held so): apply them now,
        // before any snapshot exists, so the index holds what a full scan
        // would have built.
        compaction::apply_range_tombstones(&shared);
        index_save::save_after_open(&shared);
        settle_memory_after_open();
        let compactor = match shared.options.background_compaction {
            true => Some(Compactor::start(&shared)?),
            false => None,
        };
        Ok(Db {
            dir: shared.dir.clone(),
            options: shared.options.clone(),
            shared: ArcSwap::new(shared),
            compactor,
            catch_up: Mutex::new(()),
        })
    }

    /// Opens the existing database at `path` for reading only, beside a
    /// primary that may have it open (in this or another process).
    ///
    /// It takes no lock and changes nothing in the directory: no leftover
    /// is removed, no torn tail zeroed, nothing compacted, no MANIFEST or
    /// segment written. It sees what the primary had written when it
    /// opened: every batch in a complete frame, up to the last complete
    /// valid frame of the newest log segment (a batch is all or nothing).
    /// Every write fails with [`Error::ReadOnly`]. `create_if_missing`,
    /// `error_if_exists` and `background_compaction` are ignored; a missing
    /// database is [`Error::NotFound`].
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let shared = open_read_only_state(path.as_ref(), options)?;
        Ok(Db {
            dir: shared.dir.clone(),
            options: shared.options.clone(),
            shared: ArcSwap::from_pointee(shared),
            compactor: None,
            catch_up: Mutex::new(()),
        })
    }

    /// Whether the handle was opened with [`Db::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.shared().read_only
    }

    /// Whether the newest log segment holds writes made after the end that
    /// the last open or clean close recorded in the MANIFEST: true while a
    /// primary has the database open and has written, or after its process
    /// crashed, until a primary opens it again. (A version-1 database
    /// records no end: then any data in its newest log segment counts.)
    pub fn has_unsettled_log(&self) -> bool {
        let shared = self.shared();
        let w = shared.lock_writer();
        let active = &w.active;
        if active.kind() != SegmentKind::Log {
            return false;
        }
        let mark = w.manifest.live.as_ref().and_then(|l| l.watermark);
        match mark {
            Some(m) if m.segment == active.id() => active.written() > m.offset,
            _ => active.data_bytes() > 0,
        }
    }

    /// Brings a read-only handle to what the primary has written since it
    /// opened or last caught up. If the primary has only appended, the new
    /// frames are applied in place, batch by batch, as the writer did
    /// (`db/follower.rs`); otherwise (a compaction, a keyspace change) the
    /// directory is recovered afresh (read-only) and the new state swapped
    /// in at once. Either way a reader sees a prefix of whole batches, and
    /// snapshots and cursors taken before keep the view they were taken
    /// with. The sequence number never goes back while the primary only
    /// appends. A catch-up that fails (damage, a segment that keeps
    /// vanishing) leaves the handle usable on a prefix: the whole batches
    /// before the failure may have been applied. Fails with
    /// [`Error::InvalidArgument`] on a handle that is not read-only.
    pub fn catch_up(&self) -> Result<()> {
        let _one = self.catch_up.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.shared.load_full();
        if !current.read_only {
            return Err(Error::InvalidArgument(
                "only a read-only handle catches up with the primary".into(),
            ));
        }
        if follower::catch_up_in_place(&current)? == Followed::InPlace {
            return Ok(());
        }
        let fresh = open_read_only_state(&self.dir, self.options.clone())?;
        self.shared.store(Arc::new(fresh));
        Ok(())
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes an openable, consistent copy of the database into `dir`,
    /// which must not exist yet: sealed segments are hard-linked, the active
    /// segment's written prefix is copied (see `checkpoint.rs`). Returns the
    /// files of the copy.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<Vec<CheckpointFile>> {
        checkpoint::create(&self.shared(), dir.as_ref())
    }

    /// The batches written after sequence number `after`, oldest first, as
    /// the log holds them (see `log_reader.rs`); fails with
    /// [`Error::HistoryGone`] if compaction removed some of them.
    pub fn batches_since(&self, after: u64) -> Result<BatchLog> {
        log_reader::batches_since(&self.shared(), after)
    }

    /// Keeps every segment file that exists now from being removed until
    /// the returned hold is dropped (see `db/file_hold.rs`).
    pub fn hold_files(&self) -> FileHold {
        FileHold::new(self.shared().segments.load_full())
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The id of the keyspace named `name`.
    pub fn keyspace(&self, name: &str) -> Option<KeyspaceId> {
        self.shared().keyspaces.load().by_name(name).map(|k| k.id())
    }

    /// The names of all keyspaces, `"default"` first.
    pub fn keyspace_names(&self) -> Vec<String> {
        self.shared()
            .keyspaces
            .load()
            .iter()
            .filter(|k| !k.is_dropped())
            .map(|k| k.name().to_string())
            .collect()
    }

    /// Creates a keyspace (or returns the existing one of that name). Its
    /// range deletes follow the order [`Options::key_orders`] names for it,
    /// if any, else the keys' bytes.
    pub fn create_keyspace(&self, name: &str) -> Result<KeyspaceId> {
        let order = match self.options.key_orders.get(name) {
            Some(order) => RangeOrder::Custom(order.clone()),
            None => RangeOrder::Bytewise,
        };
        self.create_keyspace_ordered(name, order)
    }

    /// Creates a keyspace whose range deletes follow `order` (or returns
    /// the existing one of that name, if its order has the same name).
    /// The order's name is kept in the `MANIFEST`: later opens must give
    /// an order of that name in [`Options::key_orders`].
    pub fn create_keyspace_ordered(&self, name: &str, order: RangeOrder) -> Result<KeyspaceId> {
        validate_name(name)?;
        let shared = self.shared();
        let mut w = shared.lock_writer();
        shared.check_poison()?;
        if let Some(ks) = shared.keyspaces.load().by_name(name) {
            if ks.range_order().name() != order.name() {
                return Err(Error::InvalidArgument(format!(
                    "keyspace {name:?} exists with the key order {:?}, not {:?}",
                    ks.range_order(),
                    order
                )));
            }
            return Ok(ks.id());
        }
        let mut manifest = w.manifest.clone();
        let id = manifest.next_keyspace_id;
        manifest.next_keyspace_id += 1;
        manifest.keyspaces.push((id, name.to_string()));
        if let Some(order_name) = order.name() {
            manifest.key_orders.push((id, order_name.to_string()));
        }
        durable::write_manifest_after_log(&shared, &w, &manifest)?;
        w.manifest = manifest;
        let ks = Arc::new(Keyspace::new(
            KeyspaceId(id),
            name.to_string(),
            AlexIndex::new(),
            0,
            order,
        ));
        if self.compactor.is_some() {
            crate::compaction::side_rebuilds::enable(&ks);
        }
        let table = shared.keyspaces.load().with(ks);
        shared.keyspaces.store(Arc::new(table));
        Ok(KeyspaceId(id))
    }

    /// Drops a keyspace and all its keys; compaction frees their space.
    /// The default keyspace cannot be dropped.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        self.drop_keyspace_held(name).map(drop)
    }

    /// Drops a keyspace as [`Self::drop_keyspace`] does, durably and at
    /// once (its name is free, a reopen does not see it, writes to it
    /// fail), but keeps its keys readable by its id until the returned
    /// hold is dropped; only then does compaction free their space. Like a
    /// snapshot, the hold keeps the open database's state (its maps and its
    /// lock) alive: drop it before opening the database again.
    pub fn drop_keyspace_held(&self, name: &str) -> Result<KeyspaceHold> {
        if name == DEFAULT_KEYSPACE {
            return Err(Error::InvalidArgument(
                "the default keyspace cannot be dropped".into(),
            ));
        }
        let shared = self.shared();
        let mut w = shared.lock_writer();
        shared.check_poison()?;
        let keyspaces = shared.keyspaces.load_full();
        let ks = keyspaces
            .by_name(name)
            .cloned()
            .ok_or_else(|| Error::InvalidArgument(format!("keyspace {name:?} does not exist")))?;
        let mut manifest = w.manifest.clone();
        manifest.keyspaces.retain(|(id, _)| *id != ks.id().0);
        manifest.key_orders.retain(|(id, _)| *id != ks.id().0);
        durable::write_manifest_after_log(&shared, &w, &manifest)?;
        w.manifest = manifest;
        ks.mark_dropped();
        Ok(KeyspaceHold {
            shared: Arc::clone(&shared),
            keyspace: ks,
        })
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
    /// [`Db::set_merge_function`] and [`crate::write::merge`]).
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
        let shared = self.shared();
        let ks = keyspace_of(&shared, keyspace)?;
        // Under the writer lock, so no batch resolves half with the old one.
        let _w = shared.lock_writer();
        ks.set_merge_function(function.map(SharedMergeFunction));
        Ok(())
    }

    /// Sets the most operand records a key's merge stack in `keyspace` may
    /// hold (RocksDB's `max_successive_merges`; default
    /// [`crate::merge::DEFAULT_MERGE_STACK_LIMIT`]): a merge that would
    /// pass it folds the stack and writes the value, so a read folds at
    /// most `limit` operands. 0 resolves every merge when it is written.
    /// Applies to merges written from now on; not stored in the database.
    pub fn set_merge_stack_limit(&self, keyspace: KeyspaceId, limit: u16) -> Result<()> {
        let shared = self.shared();
        keyspace_of(&shared, keyspace)?.set_merge_stack_limit(limit);
        Ok(())
    }

    /// Sets how compaction stores the values of `keyspace` (see
    /// [`Compression`] and FORMAT.md, "Compressed values"): from its next
    /// output on; data already written stays as it is until compaction
    /// rewrites it. Not stored in the database: set it again after every
    /// open (as with [`Db::set_merge_function`]); reads never need it.
    pub fn set_compression(&self, keyspace: KeyspaceId, compression: Compression) -> Result<()> {
        let shared = self.shared();
        keyspace_of(&shared, keyspace)?.set_compression(compression);
        Ok(())
    }

    /// Sets (or, with `None`, removes) the compaction filter of `keyspace`
    /// (see [`crate::compaction_filter`]): compactions that start from now
    /// on ask it about the keys they rewrite, [`Db::compact`]'s as manual
    /// ones, the background thread's as automatic ones. Not stored in the
    /// database: set it again after every open, before writing (a
    /// compaction the background thread starts at once does not run it).
    pub fn set_compaction_filter(
        &self,
        keyspace: KeyspaceId,
        filter: Option<Arc<dyn CompactionFilter>>,
    ) -> Result<()> {
        keyspace_of(&self.shared(), keyspace)?.set_compaction_filter(filter);
        Ok(())
    }

    /// How compaction stores the values of `keyspace` (see
    /// [`Db::set_compression`]).
    pub fn compression(&self, keyspace: KeyspaceId) -> Result<Compression> {
        Ok(keyspace_of(&self.shared(), keyspace)?.compression())
    }

    /// Applies `batch` atomically: readers see all of it or none of it, and
    /// after any crash it is entirely present or entirely absent.
    pub fn write(&self, batch: &WriteBatch, opts: &WriteOptions) -> Result<()> {
        leader::submit(&self.shared(), batch, &[], opts)
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
        leader::submit(&self.shared(), batch, watched, opts)
    }

    /// Fails with [`Error::Conflict`] if one of the `watched` keys has a
    /// version newer than its `since_seq`. Unlike
    /// [`Self::write_unless_changed`] this takes no lock: a write may land
    /// right after the check unless the caller excludes writers of these
    /// keys (as a key lock does).
    pub fn check_unchanged(&self, watched: &[WatchedKey<'_>]) -> Result<()> {
        conflicts::check(&self.shared(), watched)
    }

    /// Saves `payload` as the prepared record `name` (replacing one of that
    /// name), durably, beside the log. Records survive close and crash
    /// until [`Self::remove_prepared`]; [`Self::prepared`] lists them.
    pub fn save_prepared(&self, name: &[u8], payload: &[u8]) -> Result<()> {
        self.shared().check_poison()?;
        prepared::save(&self.shared().fs, &self.shared().dir, name, payload)
    }

    /// Removes the prepared record `name` (not an error if there is none).
    pub fn remove_prepared(&self, name: &[u8]) -> Result<()> {
        self.shared().check_poison()?;
        prepared::remove(&self.shared().fs, &self.shared().dir, name)
    }

    /// Every prepared record still saved, as `(name, payload)`, by name.
    pub fn prepared(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        prepared::load_all(&self.shared().fs, &self.shared().dir)
    }

    /// Flushes every acknowledged write to stable storage.
    pub fn sync(&self) -> Result<()> {
        let shared = self.shared();
        if shared.read_only {
            return Err(Error::ReadOnly(self.dir.clone()));
        }
        let ticket = shared.lock_writer().ticket;
        log_writer::sync_up_to(&shared, ticket)
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
        let shared = self.shared();
        let keyspaces = shared.keyspaces.load();
        let ks = keyspaces.get(keyspace).ok_or_else(|| missing(keyspace))?;
        read::get_pinned(&shared, ks, key, None)
    }

    /// Reads every key of `keys` from `keyspace` at one moment (all through
    /// one implicit snapshot): see [`Snapshot::get_many_with`].
    pub fn get_many_with<F>(&self, keyspace: KeyspaceId, keys: &[&[u8]], each: F) -> Result<()>
    where
        F: FnMut(usize, Result<Option<&[u8]>>),
    {
        self.snapshot().get_many_with(keyspace, keys, each)
    }

    /// Reads every key of `keys` from `keyspace` at one moment: see
    /// [`Snapshot::get_many`].
    pub fn get_many(
        &self,
        keyspace: KeyspaceId,
        keys: &[&[u8]],
    ) -> Result<Vec<Result<Option<ValueRef>>>> {
        self.snapshot().get_many(keyspace, keys)
    }

    /// Reads `key` into a new vector.
    pub fn get_copied(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_pinned(keyspace, key)?.map(|v| v.to_vec()))
    }

    /// Takes a snapshot of every keyspace.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(&self.shared())
    }

    /// A snapshot for one reader's own view (an iterator reading by point
    /// lookups): it keeps the versions it can see from compaction as
    /// [`Self::snapshot`]'s does, but like a cursor it is neither counted
    /// nor timed as an explicit snapshot in [`Self::stats`].
    pub fn reader_snapshot(&self) -> Snapshot {
        Snapshot::held_by(&self.shared(), Holder::Cursor)
    }

    /// The sequence number of the oldest live view (snapshots, cursors and
    /// reader snapshots alike), or `None` when there is none. A view taken
    /// later sees at least the sequence number visible then.
    pub fn oldest_view_seq(&self) -> Option<u64> {
        self.shared().snapshots.oldest_seq()
    }

    /// A cursor over `keyspace` within `range`, reading at this moment (an
    /// implicit snapshot). Position it with `seek_to_first` and friends.
    #[inline]
    pub fn cursor(&self, keyspace: KeyspaceId, range: KeyRange) -> Result<Cursor> {
        let ks = keyspace_of(&self.shared(), keyspace)?;
        Ok(Cursor::new(
            SnapshotGuard::register(&self.shared(), Holder::Cursor),
            ks,
            range,
        ))
    }

    /// The last sequence number made visible (0 for a new database).
    pub fn latest_sequence_number(&self) -> u64 {
        self.shared().visible()
    }

    /// Seals the active segment and compacts every sealed segment now,
    /// running the keyspaces' compaction filters over every key (told a
    /// manual compaction). Returns how many compactions ran.
    pub fn compact(&self) -> Result<u64> {
        compaction::compact_manually(&self.shared())
    }

    /// Pauses (`false`) or resumes (`true`) the background thread's
    /// compaction, as RocksDB's `disable_auto_compactions` does: while it is
    /// paused, dead bytes and sealed log segments stay until
    /// [`Db::compact`] or a resume, and the thread only keeps the index's
    /// rebuilds going. Resuming starts a pass at once. Nothing happens
    /// without a background thread (`Options::background_compaction`).
    pub fn set_auto_compaction(&self, enabled: bool) {
        let shared = self.shared();
        let (lock, cvar) = &shared.compaction_signal;
        let mut req = lock.lock().unwrap_or_else(|e| e.into_inner());
        req.paused = !enabled;
        req.pending |= enabled;
        if !enabled {
            shared.write_throttle.set(false);
        }
        cvar.notify_one();
    }

    /// Returns once no compaction is due: waits for a pass the background
    /// thread is running, then, unless automatic compaction is paused (or
    /// there is no background thread), runs on this thread what it would
    /// run next. Returns how many compactions this call ran.
    pub fn wait_for_compaction(&self) -> Result<u64> {
        let shared = self.shared();
        let runs_in_background = shared.options.background_compaction && self.auto_compaction();
        match runs_in_background && !self.is_read_only() {
            true => compaction::compact_while_needed(&shared, shared.options.compaction_dead_ratio),
            false => {
                drop(
                    shared
                        .compaction_lock
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                );
                Ok(0)
            }
        }
    }

    /// Whether a compaction pass (background, or one asked for with
    /// [`Self::compact`] or [`Self::wait_for_compaction`]) runs now.
    pub fn compaction_running(&self) -> bool {
        matches!(
            self.shared().compaction_lock.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        )
    }

    /// Whether compaction was asked for (a log segment sealed, a range
    /// deleted, a rebuild signalled) and the compaction thread has not
    /// taken the request up yet.
    pub fn compaction_requested(&self) -> bool {
        let (request, _) = &self.shared().compaction_signal;
        request.lock().unwrap_or_else(|e| e.into_inner()).pending
    }

    /// The error of the last failed background compaction pass, if one
    /// failed since open (their number is [`Stats::compaction_errors`]).
    /// A pass that found damaged data also made the handle refuse writes.
    pub fn background_error(&self) -> Option<String> {
        self.shared()
            .background_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The rate writes are held to now because compaction is behind, in
    /// bytes per second (see `Options::write_slowdown_debt_bytes`); 0 while
    /// they run freely.
    pub fn delayed_write_rate(&self) -> u64 {
        match self.shared().write_throttle.is_slowed() {
            true => crate::write::throttle::SLOWED_BYTES_PER_SEC,
            false => 0,
        }
    }

    /// Whether background compaction runs (not paused by
    /// [`Db::set_auto_compaction`]).
    pub fn auto_compaction(&self) -> bool {
        let shared = self.shared();
        let (lock, _) = &shared.compaction_signal;
        !lock.lock().unwrap_or_else(|e| e.into_inner()).paused
    }

    /// Batch operations applied since open (as [`Stats::keys_written`],
    /// without the walk of every index that [`Self::stats`] does).
    pub fn keys_written(&self) -> u64 {
        self.shared().counters.keys_written.load(Ordering::Relaxed)
    }

    /// Keys with a value over all keyspaces (as [`Stats::live_keys`],
    /// without walking the indexes).
    pub fn total_live_keys(&self) -> u64 {
        self.shared()
            .keyspaces
            .load()
            .iter()
            .map(|k| k.live_keys())
            .sum()
    }

    /// Number of keys with a value in `keyspace`.
    pub fn live_keys(&self, keyspace: KeyspaceId) -> Result<u64> {
        Ok(keyspace_of(&self.shared(), keyspace)?.live_keys())
    }

    /// The number of range deletes of `keyspace` still held (compaction
    /// drops one once nothing older than it remains under its range).
    pub fn live_range_deletes(&self, keyspace: KeyspaceId) -> Result<u64> {
        Ok(keyspace_of(&self.shared(), keyspace)?
            .range_tombstones()
            .len() as u64)
    }

    /// Reads every record of every segment and checks its checksum (and
    /// that a compressed value decodes, and that each merge stack steps
    /// down to its base within the segment), and that every segment but the
    /// active one ends with its seal.
    pub fn verify(&self) -> Result<()> {
        let shared = self.shared();
        let active = shared.lock_writer().active.id();
        for segment in shared.segments.load().iter() {
            let mut undecodable = None;
            let scan = scan_frames(segment.written_bytes(), |_, record| {
                if undecodable.is_none()
                    && let Err(e) = segment
                        .value_of(&record)
                        .and_then(|_| merge_stack::check_step(segment, &record))
                {
                    undecodable = Some(e);
                }
            });
            let path = segment.path();
            if let Some(d) = scan.damage {
                return Err(Error::corruption(path, d.offset, d.reason));
            }
            if let Some(e) = undecodable {
                return Err(e);
            }
            if scan.end != segment.written() {
                let why = format!(
                    "the frames end before {}, the written end",
                    segment.written()
                );
                return Err(Error::corruption(path, scan.end, why));
            }
            if segment.id() != active && scan.seal.is_none() {
                return Err(Error::corruption(
                    path,
                    scan.end,
                    "sealed segment has no seal frame",
                ));
            }
        }
        Ok(())
    }

    /// What every segment file holds of every keyspace (reads every
    /// record: O(data)). Damage is a `Corruption` naming the file.
    pub fn segment_summaries(&self) -> Result<Vec<crate::SegmentSummary>> {
        let shared = self.shared();
        let keyspaces = shared.keyspaces.load();
        let live = |id: KeyspaceId| keyspaces.get(id).is_some();
        let mut out = Vec::new();
        for segment in shared.segments.load().iter() {
            out.extend(crate::segment::summary::summarize(segment, live)?);
        }
        Ok(out)
    }

    /// The shape of `keyspace`'s index and the structure changes it has
    /// made since the database was opened (walks the index: O(nodes)).
    pub fn index_stats(&self, keyspace: KeyspaceId) -> Result<crate::index::IndexStats> {
        Ok(keyspace_of(&self.shared(), keyspace)?.index.stats())
    }

    /// The database's counters.
    pub fn stats(&self) -> Stats {
        let s = &self.shared();
        let table = s.segments.load();
        let keyspaces = s.keyspaces.load();
        let memory_use = s.memory_use();
        Stats {
            live_keys: keyspaces.iter().map(|k| k.live_keys()).sum(),
            index_entries: keyspaces.iter().map(|k| k.index.len() as u64).sum(),
            index_bytes: memory_use.index_bytes,
            index_heap: crate::index::node_heap_usage(),
            mapped_bytes: table.iter().map(|x| x.bytes().len() as u64).sum(),
            data_bytes: table.iter().map(|x| x.data_bytes()).sum(),
            dead_bytes: table.iter().map(|x| x.dead_bytes()).sum(),
            segments: table.len() as u64,
            writes: s.counters.writes.load(Ordering::Relaxed),
            keys_written: s.counters.keys_written.load(Ordering::Relaxed),
            compactions: s.counters.compactions.load(Ordering::Relaxed),
            key_order_passes: s.counters.key_order_passes.load(Ordering::Relaxed),
            log_segments: table
                .iter()
                .filter(|x| x.kind() == SegmentKind::Log)
                .count() as u64,
            oldest_log_segment: table
                .iter()
                .filter(|x| x.kind() == SegmentKind::Log)
                .map(|x| x.id())
                .min(),
            segment_table_changes: s.counters.segment_tables.load(Ordering::Relaxed),
            bytes_reclaimed: s.counters.bytes_reclaimed.load(Ordering::Relaxed),
            compaction_errors: s.counters.compaction_errors.load(Ordering::Relaxed),
            slowed_write_sleeps: s.write_throttle.sleeps(),
            snapshots_open: s.snapshots.snapshot_count() as u64,
            oldest_snapshot: s.snapshots.oldest_snapshot(),
            relocated_versions: s.relocations.load().len() as u64,
            latest_sequence: s.visible(),
            range_tombstones: keyspaces
                .iter()
                .map(|k| k.range_tombstones().len() as u64)
                .sum(),
            records_read_at_open: s.counters.records_read_at_open.load(Ordering::Relaxed),
            memory_use,
            memory_budget_actions: s.counters.budget_actions.load(Ordering::Relaxed),
            memory_over_budget: s.counters.over_budget.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Db {
    /// Closes cleanly: stops compaction, syncs the active segment and records
    /// its end in the MANIFEST, so that later damage to what was written is
    /// reported rather than taken for a torn tail, then writes the index
    /// checkpoint the next open starts from. A failure here only leaves the
    /// database as a crash would.
    ///
    /// Then it releases the directory lock, whatever still holds the shared
    /// state (a leaked snapshot or cursor can keep memory, never the
    /// directory): what outlives the handle refuses writes.
    fn drop(&mut self) {
        drop(self.compactor.take());
        let shared = self.shared();
        if !shared.read_only && durable::close_cleanly(&shared).is_ok() {
            let _ = index_save::save(&shared);
        }
        let _ = shared.poison.set("the database was closed".into());
        drop(
            shared
                .lock_file
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
    }
}

/// Whether `name` is a file only a database writes beside its MANIFEST:
/// a segment, the index checkpoint or a prepared transaction.
pub fn is_database_file(name: &str) -> bool {
    crate::segment::parse_file_name(name).is_some()
        || name == INDEX_FILE
        || name == INDEX_TMP_FILE
        || name.starts_with(crate::write::prepared::PREPARED_PREFIX)
}

/// Checks what is at `dir`: returns whether a database exists there.
/// Changes nothing on disk unless a new database is to be created (beside
/// whatever other files the directory holds); a directory it creates is
/// durable (its parent synced) before anything is written into it.
fn prepare_dir(dir: &Path, options: &Options) -> Result<bool> {
    let fs = &*options.file_system;
    match fs.metadata(dir) {
        Ok(m) if m.kind != crate::io::EntryKind::Dir => {
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
            // Other files may share the directory (a program's own, as
            // RocksDB allows); a database file without the MANIFEST is a
            // database that lost it, never a place to create a new one.
            if let Some(name) = names.iter().find(|n| is_database_file(n)) {
                return Err(Error::corruption(
                    dir.join(MANIFEST_FILE),
                    0,
                    format!("missing, but the directory holds the database file {name}"),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dir, e)),
    }
    if !options.create_if_missing {
        return Err(Error::NotFound(dir.to_path_buf()));
    }
    crate::io::create_dir_all_durably(fs, dir).map_err(|e| Error::io(dir, e))?;
    Ok(false)
}

/// Takes the exclusive lock on the directory (see `dir_lock`), through the
/// database's file system.
fn lock_dir(dir: &Path, options: &Options) -> Result<DirLock> {
    let path: PathBuf = dir.join(LOCK_FILE);
    dir_lock::acquire(&*options.file_system, dir).map_err(|e| match e {
        LockError::Io(e) => Error::io(&path, e),
        LockError::HeldElsewhere => Error::Locked(path),
        LockError::HeldHere {
            acquired_unix_secs,
            thread,
        } => Error::LockedHere {
            path,
            acquired_unix_secs,
            thread,
        },
    })
}

/// Records in `manifest` the key orders `adopted` for keyspaces the
/// `MANIFEST` gave none: refused for a keyspace that holds range deletes,
/// which were written in the keys' bytes' order.
fn adopt_key_orders(
    recovered: &recovery::Recovered,
    adopted: &[(u32, String)],
    manifest: &mut Manifest,
) -> Result<()> {
    for (id, order) in adopted {
        let ks = recovered.keyspaces.iter().find(|ks| ks.id().0 == *id);
        if let Some(ks) = ks.filter(|ks| !ks.range_tombstones().is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "keyspace {:?} holds range deletes in the keys' bytes' order: \
                 it cannot take the key order {order:?}",
                ks.name()
            )));
        }
        manifest.key_orders.push((*id, order.clone()));
    }
    Ok(())
}

/// Recovers the database at `dir` read-only (see [`Db::open_read_only`]).
fn open_read_only_state(dir: &Path, options: Options) -> Result<Shared> {
    let options = options.normalized();
    let (manifest, recovered) = recovery::read_only::recover_read_only(
        &options.file_system,
        dir,
        options.segment_bytes,
        (leaf_form(&options), &options.key_orders),
    )?;
    let shared = build_shared(dir.to_path_buf(), options, None, manifest, recovered)?;
    // In memory only, as at a primary's open (see `Db::open`).
    compaction::apply_range_tombstones(&shared);
    settle_memory_after_open();
    Ok(shared)
}

/// Gives back the free memory an open leaves: the index heap's (the tails
/// of the last page of each size class the bulk loads used and the pages
/// made ready ahead of writers, which a database at rest never fills) and
/// the process allocator's (the buffers of an open that read every record).
/// The huge pages it trims are one a size class; the writes that follow
/// fault in what they need.
fn settle_memory_after_open() {
    crate::index::trim_node_heap(usize::MAX);
    crate::io::transient::return_free_malloc_memory();
}

/// The form of the leaves an open builds its indexes with: packed unless
/// the options say not to (at open, the entries are those of a database at
/// rest; see `engine/FORMAT.md`, "The index in memory").
fn leaf_form(options: &Options) -> LeafForm {
    match options.pack_index_at_open {
        true => LeafForm::Packed,
        false => LeafForm::Dense,
    }
}

/// Builds the open state from what recovery rebuilt. With `lock` (a
/// primary) it starts a new active segment if needed and records the open
/// in the MANIFEST; without (a read-only handle) it writes nothing.
fn build_shared(
    dir: PathBuf,
    options: Options,
    lock: Option<DirLock>,
    mut manifest: Manifest,
    r: Recovered,
) -> Result<Shared> {
    let fs = options.file_system.clone();
    let next_seq = r.last_seq + 1;
    let mut segments = r.segments;
    for s in &segments {
        s.raise_seq_ceiling(r.last_seq);
    }
    let next_id = AtomicU32::new(r.next_segment_id);
    let read_only = lock.is_none();
    let active = match r.active {
        Some(a) => a,
        // Never appended to: every write is refused first.
        None if read_only => segments
            .last()
            .cloned()
            .ok_or_else(|| Error::NotADatabase {
                path: dir.clone(),
                reason: "it holds no segment yet (its primary is still creating it)".into(),
            })?,
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
    if !read_only {
        durable::record_open(&fs, &dir, &mut manifest, &segments, &active)?;
    }
    let table = SegmentTable::new(segments);
    crate::segment::map_advice::advise_if_fits(&table);
    Ok(Shared {
        fs,
        segments: ArcSwap::from_pointee(table),
        keyspaces: ArcSwap::from_pointee(KeyspaceTable::new(r.keyspaces)),
        relocations: ArcSwap::from_pointee(Relocations::default()),
        visible_seq: AtomicU64::new(r.last_seq),
        next_segment_id: next_id,
        writer: Mutex::new(Writer::new(active, next_seq, manifest)),
        writer_waiters: AtomicUsize::new(0),
        write_queue: Default::default(),
        sync: Mutex::default(),
        poison: OnceLock::new(),
        background_error: Mutex::new(None),
        snapshots: SnapshotRegistry::default(),
        compaction_lock: Mutex::new(crate::compaction::held::HeldDeletes::default()),
        compaction_signal: (Mutex::default(), Condvar::new()),
        counters: Counters {
            records_read_at_open: AtomicU64::new(r.records_read),
            ..Counters::default()
        },
        checkpoint_mark: Mutex::new(r.checkpoint),
        lock_file: Mutex::new(lock),
        write_throttle: Default::default(),
        read_only,
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

/// Counts every record of a dropped keyspace's index as dead (as far as
/// its entries resolve: the count only steers compaction).
/// A dropped keyspace kept readable (see [`Db::drop_keyspace_held`]);
/// dropping the hold lets compaction free its keys' space.
#[derive(Debug)]
pub struct KeyspaceHold {
    shared: Arc<Shared>,
    keyspace: Arc<Keyspace>,
}

impl KeyspaceHold {
    /// The dropped keyspace's id, by which its keys stay readable.
    pub fn id(&self) -> KeyspaceId {
        self.keyspace.id()
    }
}

impl Drop for KeyspaceHold {
    fn drop(&mut self) {
        let shared = &self.shared;
        let w = shared.lock_writer();
        let keyspaces = shared.keyspaces.load_full();
        shared
            .keyspaces
            .store(Arc::new(keyspaces.without(self.keyspace.id())));
        drop(w);
        account_dropped(shared, &self.keyspace);
        shared.request_compaction();
    }
}

fn account_dropped(shared: &Shared, ks: &Keyspace) {
    const CHUNK: usize = 64 << 10;
    let table = shared.segments.load();
    let account = |payloads: &[u64]| {
        // Deletes were counted dead when they were written.
        for &p in payloads.iter().filter(|&&p| !Location(p).is_tombstone()) {
            table.account_dead(Location(p));
        }
        Ok(())
    };
    let _ = ks.visit_payloads_in_order(&table, CHUNK, account, |_| ());
}
