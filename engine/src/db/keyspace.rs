//! Keyspaces: independent ordered key spaces (the compat layer's column
//! families) that share one log, so a batch across keyspaces is atomic.
//! Each has its own ALEX index. The list lives in the `MANIFEST` file.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use arc_swap::ArcSwap;

use crate::compaction::filter::{CompactionFilter, FilterSlot};
use crate::error::{Error, Result};
use crate::format::manifest::Manifest;
use crate::index::AlexIndex;
use crate::io::FileSystem;
use crate::mvcc::key_order::RangeOrder;
use crate::mvcc::range_tombstones::{RangeTombstone, RangeTombstones};
use crate::options::Compression;
use crate::write::merge::SharedMergeFunction;

/// Name of the keyspace every database has, with id 0.
pub const DEFAULT_KEYSPACE: &str = "default";
/// File name of the manifest.
pub const MANIFEST_FILE: &str = "MANIFEST";
const MANIFEST_TMP: &str = "MANIFEST.tmp";

/// Identifies a keyspace within a database. Ids are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyspaceId(pub u32);

/// One keyspace: its name and its index.
#[derive(Debug)]
pub struct Keyspace {
    id: KeyspaceId,
    name: String,
    pub(crate) index: AlexIndex,
    live_keys: AtomicU64,
    /// Resolves merges written to this keyspace; read by the writer only.
    merge_function: RwLock<Option<SharedMergeFunction>>,
    /// The filter compaction asks about this keyspace's keys, if any.
    compaction_filter: RwLock<FilterSlot>,
    /// The most operand records a stack of this keyspace holds (see
    /// [`crate::merge::DEFAULT_MERGE_STACK_LIMIT`]).
    merge_stack_limit: AtomicU16,
    /// How compaction stores this keyspace's values ([`Compression`]'s code).
    compression: AtomicU8,
    /// The order its range deletes follow (fixed at open or creation).
    range_order: RangeOrder,
    /// Live range deletes; readers load, writers and compaction publish.
    range_tombstones: ArcSwap<RangeTombstones>,
    /// Whether `range_tombstones` holds any, so that a point read of a
    /// keyspace without range deletes skips loading the list.
    any_range_tombstones: AtomicBool,
    /// Whether it was dropped but is held readable (see
    /// [`crate::Db::drop_keyspace_held`]): gone from the `MANIFEST` and
    /// from lookups by name, refused to writers.
    dropped: AtomicBool,
}

impl Keyspace {
    pub(crate) fn new(
        id: KeyspaceId,
        name: String,
        index: AlexIndex,
        live_keys: u64,
        range_order: RangeOrder,
    ) -> Self {
        let range_tombstones = ArcSwap::from_pointee(RangeTombstones::empty(range_order.clone()));
        Keyspace {
            id,
            name,
            index,
            live_keys: AtomicU64::new(live_keys),
            merge_function: RwLock::new(None),
            compaction_filter: RwLock::new(FilterSlot::default()),
            merge_stack_limit: AtomicU16::new(crate::merge::DEFAULT_MERGE_STACK_LIMIT),
            compression: AtomicU8::new(Compression::None.code()),
            range_order,
            range_tombstones,
            any_range_tombstones: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
        }
    }

    /// Hands every index payload to `visit` in key order, `chunk` at a
    /// time (each chunk walked under its own short epoch guard), so that
    /// no walk holds the whole index. Stops at `visit`'s first error; an
    /// entry that no segment of `table` resolves (the walk cannot go on
    /// past it) ends it with `missed(its location)`.
    pub(crate) fn visit_payloads_in_order<E>(
        &self,
        table: &crate::segment::SegmentTable,
        chunk: usize,
        mut visit: impl FnMut(&[u64]) -> std::result::Result<(), E>,
        missed: impl FnOnce(crate::format::location::Location) -> E,
    ) -> std::result::Result<(), E> {
        use crate::index::{KeyResolver, ScanDirection};
        let chunk = chunk.max(1);
        let resolver = crate::segment::resolver::TableResolver::new(table);
        let mut payloads = Vec::with_capacity(chunk.min(self.index.len()));
        let mut last = None;
        loop {
            payloads.clear();
            let from = match last {
                Some(last) => std::ops::Bound::Excluded(resolver.key(last)),
                None => std::ops::Bound::Unbounded,
            };
            let guard = crossbeam_epoch::pin();
            let scan = ScanDirection::Forward;
            self.index
                .collect(from, scan, chunk, &resolver, &guard, &mut payloads);
            drop(guard);
            if resolver.missed() {
                let at = payloads.last().copied().unwrap_or(0);
                return Err(missed(crate::format::location::Location(at)));
            }
            visit(&payloads)?;
            if payloads.len() < chunk {
                return Ok(());
            }
            last = payloads.last().copied();
        }
    }

    /// Whether it was dropped (and is only held readable).
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// Marks it dropped; called under the writer lock.
    pub(crate) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }

    /// The order its range deletes follow.
    pub fn range_order(&self) -> &RangeOrder {
        &self.range_order
    }

    /// The live range tombstones.
    pub fn range_tombstones(&self) -> arc_swap::Guard<Arc<RangeTombstones>> {
        self.range_tombstones.load()
    }

    /// Publishes a list of range tombstones (recovery, and writers and
    /// compaction under the writer lock).
    pub(crate) fn set_range_tombstones(&self, list: RangeTombstones) {
        let any = !list.is_empty();
        self.range_tombstones.store(Arc::new(list));
        // After the list: a writer publishes a range delete's sequence
        // number after this store, so a reader at that number sees `true`.
        self.any_range_tombstones.store(any, Ordering::Release);
    }

    /// The range tombstones, if there are any: a reader at a sequence
    /// number that saw no flag set has none to apply (see
    /// [`Self::set_range_tombstones`]), and skips loading the list.
    pub(crate) fn range_tombstones_if_any(&self) -> Option<arc_swap::Guard<Arc<RangeTombstones>>> {
        self.any_range_tombstones
            .load(Ordering::Acquire)
            .then(|| self.range_tombstones())
    }

    /// Adds a range tombstone. Called under the writer lock.
    pub(crate) fn add_range_tombstone(&self, tombstone: RangeTombstone) {
        let list = self.range_tombstones.load().with(Arc::new(tombstone));
        self.set_range_tombstones(list);
    }

    /// The merge function merges into this keyspace are resolved with.
    pub fn merge_function(&self) -> Option<SharedMergeFunction> {
        self.merge_function
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets (or, with `None`, removes) the keyspace's merge function. It
    /// applies to merges written from now on.
    pub fn set_merge_function(&self, function: Option<SharedMergeFunction>) {
        *self
            .merge_function
            .write()
            .unwrap_or_else(PoisonError::into_inner) = function;
    }

    /// The filter compaction asks about this keyspace's keys, if any.
    pub fn compaction_filter(&self) -> Option<Arc<dyn CompactionFilter>> {
        self.compaction_filter
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// Sets (or, with `None`, removes) the keyspace's compaction filter;
    /// compactions that start from now on run it.
    pub fn set_compaction_filter(&self, filter: Option<Arc<dyn CompactionFilter>>) {
        *self
            .compaction_filter
            .write()
            .unwrap_or_else(PoisonError::into_inner) = FilterSlot(filter);
    }

    /// The most operand records a key's merge stack holds before a merge
    /// resolves it (0: every merge is resolved when written).
    pub fn merge_stack_limit(&self) -> u16 {
        self.merge_stack_limit.load(Ordering::Relaxed)
    }

    /// Sets [`Self::merge_stack_limit`], for merges written from now on.
    pub fn set_merge_stack_limit(&self, limit: u16) {
        self.merge_stack_limit.store(limit, Ordering::Relaxed);
    }

    /// How compaction stores this keyspace's values.
    pub fn compression(&self) -> Compression {
        Compression::from_code(self.compression.load(Ordering::Relaxed))
    }

    /// Sets how compaction stores this keyspace's values from its next
    /// output on (what is written stays as it is until rewritten).
    pub fn set_compression(&self, compression: Compression) {
        self.compression
            .store(compression.code(), Ordering::Relaxed);
    }

    /// The keyspace's id.
    pub fn id(&self) -> KeyspaceId {
        self.id
    }

    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of keys whose newest version in the index is a value. A key
    /// a range delete covers counts until compaction applies the range
    /// delete (as RocksDB's key estimate does).
    pub fn live_keys(&self) -> u64 {
        self.live_keys.load(Ordering::Relaxed)
    }

    pub(crate) fn adjust_live_keys(&self, was_live: bool, is_live: bool) {
        match (was_live, is_live) {
            (false, true) => self.live_keys.fetch_add(1, Ordering::Relaxed),
            (true, false) => self.live_keys.fetch_sub(1, Ordering::Relaxed),
            _ => 0,
        };
    }
}

/// The immutable list of live keyspaces, published through `arc-swap`.
#[derive(Debug, Default, Clone)]
pub struct KeyspaceTable {
    keyspaces: Vec<Arc<Keyspace>>,
}

impl KeyspaceTable {
    /// A table of these keyspaces.
    pub fn new(mut keyspaces: Vec<Arc<Keyspace>>) -> Self {
        keyspaces.sort_by_key(|k| k.id());
        KeyspaceTable { keyspaces }
    }

    /// The keyspace with this id.
    pub fn get(&self, id: KeyspaceId) -> Option<&Arc<Keyspace>> {
        self.keyspaces
            .binary_search_by_key(&id, |k| k.id())
            .ok()
            .map(|i| &self.keyspaces[i])
    }

    /// The live keyspace with this name (not a dropped one held readable).
    pub fn by_name(&self, name: &str) -> Option<&Arc<Keyspace>> {
        self.keyspaces
            .iter()
            .find(|k| k.name() == name && !k.is_dropped())
    }

    /// Every keyspace, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Keyspace>> {
        self.keyspaces.iter()
    }

    /// A copy with `ks` added.
    pub fn with(&self, ks: Arc<Keyspace>) -> Self {
        let mut all = self.keyspaces.clone();
        all.push(ks);
        Self::new(all)
    }

    /// A copy without keyspace `id`.
    pub fn without(&self, id: KeyspaceId) -> Self {
        let all = self
            .keyspaces
            .iter()
            .filter(|k| k.id() != id)
            .cloned()
            .collect();
        Self::new(all)
    }
}

/// Checks a keyspace name.
pub fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 1024 {
        return Err(Error::InvalidArgument(format!(
            "keyspace name must be 1 to 1024 bytes, got {} bytes",
            name.len()
        )));
    }
    Ok(())
}

/// Writes the manifest atomically: temporary file, fsync, rename, fsync dir.
pub fn write_manifest(fs: &Arc<dyn FileSystem>, dir: &Path, manifest: &Manifest) -> Result<()> {
    let tmp = dir.join(MANIFEST_TMP);
    let dst = dir.join(MANIFEST_FILE);
    let _ = fs.remove_file(&tmp);
    let file = fs
        .open(&tmp, crate::io::OpenMode::CreateNew)
        .map_err(|e| Error::io(&tmp, e))?;
    let bytes = manifest.encode();
    file.write_all_at(&bytes, 0)
        .and_then(|_| file.sync_data())
        .map_err(|e| Error::io(&tmp, e))?;
    drop(file);
    fs.rename(&tmp, &dst).map_err(|e| Error::io(&dst, e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Reads and decodes the manifest.
pub fn read_manifest(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST_FILE);
    let bytes = fs.read_file(&path).map_err(|e| Error::io(&path, e))?;
    Manifest::decode(&bytes).map_err(|reason| Error::corruption(&path, 0, reason))
}
