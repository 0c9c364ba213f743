//! [`AlexIndex`]: the public face of the tree.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_epoch::{self as epoch, Guard};

use super::bulk_load::{build_subtree_as, build_subtree_by_position};
use super::data_node::DataNode;
use super::known_keys::Entries;
use super::leaf::Leaf;
use super::node::{Link, Node, NodeRef, free_tree};
use super::retired;
use super::side_rebuild::{self, CHUNK, LOCKED_REPLAY, SideRebuild, Write};
use super::smo::{Step, Writer, as_data, retire_subtree};
use super::stats::{self, Counters, IndexStats};
use super::{KeyResolver, LeafForm, ScanDirection, pack, scan};

/// Keys [`AlexIndex::get_candidates`] takes down the tree together: enough
/// for their cache misses to overlap, few enough that the lines hinted for
/// the first are still cached when it is read.
pub const LOOKUP_BATCH: usize = 16;

/// An ALEX learned index from byte-string keys to `u64` payloads.
///
/// Reads ([`get`](Self::get), [`get_candidate`](Self::get_candidate),
/// [`collect`](Self::collect)) are lock-free under a caller-pinned epoch
/// guard; writes are serialized by an internal mutex and never block them.
/// Memory use is about 16 bytes per entry over the data-node density
/// (0.75 to 0.85 under inserts), roughly 20-24 bytes per entry, in data
/// nodes; about 6.2 in packed leaves ([`LeafForm::Packed`]).
#[derive(Debug)]
pub struct AlexIndex {
    root: Link,
    len: AtomicUsize,
    /// Writes that changed the index (see [`Self::changes`]).
    changes: AtomicU64,
    write_lock: Mutex<()>,
    counters: Counters,
    side: SideRebuild,
}

impl Default for AlexIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for AlexIndex {
    fn drop(&mut self) {
        free_tree(&mut self.root);
        // No write to this index will free what it retired: free the pool now.
        retired::free_all();
    }
}

impl AlexIndex {
    /// An empty index: a single, small data node.
    pub fn new() -> Self {
        let guard = epoch::pin();
        let root = NodeRef::publish(Node::Data(DataNode::empty()), &guard);
        Self::with_root(Link::new(root), 0)
    }

    pub(super) fn with_root(root: Link, len: usize) -> Self {
        Self {
            root,
            len: AtomicUsize::new(len),
            changes: AtomicU64::new(0),
            write_lock: Mutex::new(()),
            counters: Counters::default(),
            side: SideRebuild::default(),
        }
    }

    /// An index of `payloads`, which must be sorted by their keys (bytewise
    /// lexicographic) with unique keys, built top-down with cost-chosen
    /// fanouts so that data nodes hold roughly 100-400 keys.
    pub fn bulk_load<R: KeyResolver>(payloads: &[u64], resolver: &R) -> Self {
        Self::bulk_load_as(payloads, resolver, LeafForm::Dense)
    }

    /// [`Self::bulk_load`] with leaves of the given form.
    pub fn bulk_load_as<R: KeyResolver>(payloads: &[u64], resolver: &R, form: LeafForm) -> Self {
        debug_assert!(
            payloads
                .windows(2)
                .all(|w| resolver.key(w[0]) < resolver.key(w[1]))
        );
        let guard = epoch::pin();
        let entries = Entries::unknown(payloads, resolver);
        let root = build_subtree_as(entries, false, form, &guard);
        Self::with_root(Link::new(root), payloads.len())
    }

    /// An index of `n` entries given by position: `resolver` turns a
    /// position `0..n` into its key (positions must be in key order, keys
    /// unique) and `payload_of` into the payload stored for it. Builds from
    /// keys held apart from the payloads' records (an index checkpoint).
    /// A large index is built by two threads. Leaves are of the form
    /// `form`.
    pub fn bulk_load_positions<R: KeyResolver + Sync>(
        n: usize,
        resolver: &R,
        payload_of: &(dyn Fn(u64) -> u64 + Sync),
        form: LeafForm,
    ) -> Self {
        let guard = epoch::pin();
        let root = build_subtree_by_position(n, resolver, payload_of, form, &guard);
        Self::with_root(Link::new(root), n)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Whether the index has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The leaf that holds `key` if it is present.
    #[inline]
    fn leaf<'g>(&self, key: &[u8], guard: &'g Guard) -> Leaf<'g> {
        let mut node = self.root.load(guard).get();
        loop {
            match node {
                Node::Inner(inner) => node = inner.child(inner.route_hinting(key), guard).get(),
                Node::Data(data) => return Leaf::Dense(data),
                Node::Packed(packed) => return Leaf::Packed(packed),
            }
        }
    }

    /// Lock-free read. Returns the payload of the only entry that can be
    /// `key`: if exactly one entry has `key`'s model key it is returned
    /// without calling the resolver (the caller must confirm the full key);
    /// if several entries share the model key, the resolver picks the exact
    /// one. `None` means the key is certainly absent.
    #[inline]
    pub fn get_candidate<R: KeyResolver>(
        &self,
        key: &[u8],
        resolver: &R,
        guard: &Guard,
    ) -> Option<u64> {
        self.leaf(key, guard).get_candidate(key, resolver)
    }

    /// Lock-free [`get_candidate`](Self::get_candidate) of every key of
    /// `keys`, appended to `out` in order. Up to [`LOOKUP_BATCH`] keys go
    /// down the tree together, a level at a time, and each step hints the
    /// memory every key of the batch reads next (the link, the child node,
    /// the predicted slot, and through `resolver` the candidate's record)
    /// before reading any of it: the keys' cache misses overlap instead of
    /// following one another.
    pub fn get_candidates<R: KeyResolver>(
        &self,
        keys: &[&[u8]],
        resolver: &R,
        guard: &Guard,
        out: &mut impl Extend<Option<u64>>,
    ) {
        for batch in keys.chunks(LOOKUP_BATCH) {
            let leaves = self.leaves_hinted(batch, guard);
            for (leaf, key) in leaves.iter().zip(batch) {
                Leaf::of(*leaf).hint_lookup(key);
            }
            for (leaf, key) in leaves.iter().zip(batch) {
                Leaf::of(*leaf).hint_entry(key);
            }
            for (leaf, key) in leaves.iter().zip(batch) {
                let candidate = Leaf::of(*leaf).get_candidate(key, resolver);
                if let Some(payload) = candidate {
                    resolver.prefetch(payload);
                }
                out.extend([candidate]);
            }
        }
    }

    /// The data node of each key of `batch` (at most [`LOOKUP_BATCH`]; the
    /// array's tail past it is unused), found level by level: every key's
    /// route is computed and its link hinted, then every link is read and
    /// its child hinted.
    fn leaves_hinted<'g>(&self, batch: &[&[u8]], guard: &'g Guard) -> [NodeRef<'g>; LOOKUP_BATCH] {
        let mut nodes = [self.root.load(guard); LOOKUP_BATCH];
        let mut slots = [0usize; LOOKUP_BATCH];
        loop {
            let mut descending = false;
            for ((node, key), slot) in nodes.iter().zip(batch).zip(&mut slots) {
                if let Node::Inner(inner) = node.get() {
                    *slot = inner.route(key);
                    inner.hint_child(*slot);
                    descending = true;
                }
            }
            if !descending {
                return nodes;
            }
            for (node, slot) in nodes.iter_mut().zip(&slots).take(batch.len()) {
                if let Node::Inner(inner) = node.get() {
                    *node = inner.child(*slot, guard);
                    node.hint();
                }
            }
        }
    }

    /// Lock-free exact lookup (always confirms the key with the resolver).
    pub fn get<R: KeyResolver>(&self, key: &[u8], resolver: &R, guard: &Guard) -> Option<u64> {
        self.leaf(key, guard).get(key, resolver)
    }

    /// How many writes have changed the index: entries added, removed or
    /// repointed, subtrees rebuilt. Packing leaves ([`Self::pack_leaves`])
    /// does not count, so a count that stays the same says the index was
    /// left alone since it was read.
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::Relaxed)
    }

    /// The write lock, for a write that changes the index (counted in
    /// [`Self::changes`]).
    fn lock_to_change(&self) -> MutexGuard<'_, ()> {
        let lock = self.lock();
        self.changes.fetch_add(1, Ordering::Relaxed);
        lock
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The tree is consistent between any two link stores, and the lock
        // protects no data of its own, so a panicked writer leaves nothing
        // to repair.
        self.write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn writer<'a, 'g, R>(&'a self, resolver: &'a R, guard: &'g Guard) -> Writer<'a, 'g, R> {
        Writer {
            root: &self.root,
            guard,
            resolver,
            counters: &self.counters,
            side: &self.side,
        }
    }

    /// Inserts `key` or replaces its payload; returns the previous payload.
    /// Writers are serialized; readers never wait.
    pub fn upsert<R: KeyResolver>(&self, key: &[u8], payload: u64, resolver: &R) -> Option<u64> {
        let previous = self.upsert_locked(key, payload, resolver);
        retired::free_some(retired::FREED_PER_WRITE);
        previous
    }

    fn upsert_locked<R: KeyResolver>(&self, key: &[u8], payload: u64, resolver: &R) -> Option<u64> {
        let _lock = self.lock_to_change();
        let guard = epoch::pin();
        let w = self.writer(resolver, &guard);
        loop {
            let (path, leaf_ref) = w.descend(key);
            if let Node::Packed(_) = leaf_ref.get() {
                match self.upsert_packed(&w, &path, leaf_ref, key, payload) {
                    Some(previous) => return previous,
                    None => {
                        w.unpacked(&path, leaf_ref);
                        continue;
                    }
                }
            }
            let leaf = as_data(leaf_ref);
            let mk = leaf.model_key(key);
            let (pos, found, iters) = leaf.seek_ge(key, mk, resolver);
            if let (Some(pos), true) = (pos, found) {
                let old = leaf.payload_at(pos);
                leaf.store_payload(pos, payload);
                self.side
                    .log(path.iter().map(|s| s.node()), key, Some(payload));
                return Some(old);
            }
            if leaf.is_full() {
                w.make_room(&path, leaf_ref);
                continue;
            }
            w.replace_with_copy(
                &path,
                leaf_ref,
                w.publish(leaf.with_insert(mk, payload, pos, iters)),
            );
            Writer::<R>::count_key(&path, true);
            self.len.fetch_add(1, Ordering::Relaxed);
            self.side
                .log(path.iter().map(|s| s.node()), key, Some(payload));
            return None;
        }
    }

    /// [`Writer::upsert_packed`], counted and logged for rebuilds to the
    /// side when done: `Some(previous payload)`, or `None` if the packed
    /// leaf `leaf` cannot take the entry (the caller unpacks it).
    fn upsert_packed<'g, R: KeyResolver>(
        &self,
        w: &Writer<'_, 'g, R>,
        path: &[Step<'g>],
        leaf: NodeRef<'g>,
        key: &[u8],
        payload: u64,
    ) -> Option<Option<u64>> {
        let previous = w.upsert_packed(path, leaf, key, payload)?;
        if previous.is_none() {
            Writer::<R>::count_key(path, true);
            self.len.fetch_add(1, Ordering::Relaxed);
        }
        self.side
            .log(path.iter().map(|s| s.node()), key, Some(payload));
        Some(previous)
    }

    /// Upserts every `(key, payload)` of `entries` under one acquisition of
    /// the writer lock, and returns each entry's previous payload **in input
    /// order** (`result[i]` belongs to `entries[i]`), exactly as if the
    /// entries had been [`upsert`](Self::upsert)ed one by one in input
    /// order: of entries with equal keys the later one wins, and each one's
    /// previous payload is that of the equal entry before it in the batch,
    /// or what the index held for the first. `resolver` must resolve the
    /// payloads of all `entries` from the start of the call.
    ///
    /// The entries are applied in key order (a stable sort keeps equal keys
    /// in input order) and grouped by the data node they go to. Overwrites
    /// of existing keys are stored in place (`DataNode::store_payload`);
    /// the inserts of a group are applied to one private copy of its node,
    /// published once: a data node that receives many new keys is copied
    /// once, not once per key.
    /// When the copy fills up it is published, the node expands or splits
    /// as for a single insert, and the group continues in the new node(s).
    /// Readers never wait; they see the batch's entries appear node by node
    /// (the batch is not atomic).
    pub fn upsert_batch<R: KeyResolver>(
        &self,
        entries: &[(&[u8], u64)],
        resolver: &R,
    ) -> Vec<Option<u64>> {
        let previous = self.upsert_batch_locked(entries, resolver);
        retired::free_some(retired::FREED_PER_WRITE * entries.len());
        previous
    }

    fn upsert_batch_locked<R: KeyResolver>(
        &self,
        entries: &[(&[u8], u64)],
        resolver: &R,
    ) -> Vec<Option<u64>> {
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by(|&a, &b| entries[a].0.cmp(entries[b].0));
        let mut previous = vec![None; entries.len()];
        let _lock = self.lock_to_change();
        let mut next = 0;
        while next < order.len() {
            // A fresh guard per node group, as for single upserts: one guard
            // for the whole batch would keep every node the batch retires
            // (6 KiB each) alive until the end of the call.
            let guard = epoch::pin();
            let w = self.writer(resolver, &guard);
            let group = next;
            let (path, leaf_ref) = w.descend(entries[order[group]].0);
            if let Node::Packed(_) = leaf_ref.get() {
                // A packed leaf takes the entries one at a time.
                let (key, payload) = entries[order[group]];
                match self.upsert_packed(&w, &path, leaf_ref, key, payload) {
                    Some(old) => {
                        previous[order[group]] = old;
                        next = group + 1;
                    }
                    None => {
                        w.unpacked(&path, leaf_ref);
                    }
                }
                continue;
            }
            let leaf = as_data(leaf_ref);
            let mut copy: Option<DataNode> = None;
            let (mut added, mut full) = (0, false);
            for (i, &e) in order.iter().enumerate().skip(group) {
                let (key, payload) = entries[e];
                if i > group && !w.leaf_of(key).ptr_eq(leaf_ref) {
                    break;
                }
                let node = copy.as_ref().unwrap_or(leaf);
                let mk = node.model_key(key);
                let (pos, found, iters) = node.seek_ge(key, mk, resolver);
                if found || !node.is_full() {
                    self.side
                        .log(path.iter().map(|s| s.node()), key, Some(payload));
                }
                match (pos, found) {
                    (Some(pos), true) => {
                        previous[e] = Some(node.payload_at(pos));
                        // An overwrite needs no copy: into the private copy
                        // if the group already made one, else in place.
                        match copy.as_mut() {
                            Some(copy) => copy.set_payload(pos, payload),
                            None => leaf.store_payload(pos, payload),
                        }
                    }
                    _ if node.is_full() => {
                        full = true;
                        break;
                    }
                    _ => {
                        copy.get_or_insert_with(|| leaf.clone())
                            .insert(mk, payload, pos, iters);
                        added += 1;
                    }
                }
                next = i + 1;
            }
            if let Some(copy) = copy {
                w.replace_with_copy(&path, leaf_ref, w.publish(copy));
            }
            Writer::<R>::count_keys(&path, added);
            self.len.fetch_add(added, Ordering::Relaxed);
            if full {
                // Same as `upsert` on a full node: make room, then retry
                // the entry (the loop descends to it again).
                let (path, leaf_ref) = w.descend(entries[order[next]].0);
                w.make_room(&path, leaf_ref);
            }
        }
        previous
    }

    /// Removes `key`; returns its payload. Contracts the data node when it
    /// gets sparse.
    pub fn remove<R: KeyResolver>(&self, key: &[u8], resolver: &R) -> Option<u64> {
        self.remove_where(key, resolver, |leaf| match leaf.seek_ge(key, resolver) {
            (Some(pos), true) => Some(pos),
            _ => None,
        })
    }

    /// Removes `key` only if its payload is still `expected` (checked under
    /// the index's write lock, so an overwrite racing with the caller is
    /// never removed); returns whether it did. The entry is found by its
    /// payload among the entries with its model key: no key is read.
    pub fn remove_if<R: KeyResolver>(&self, key: &[u8], expected: u64, resolver: &R) -> bool {
        self.remove_where(key, resolver, |leaf| leaf.find_payload(key, expected))
            .is_some()
    }

    /// Replaces the payload of `key` with `new` if it is still `expected`
    /// (checked under the index's write lock); returns whether it did. As
    /// for [`Self::remove_if`], the entry is found by its payload, so no
    /// key is read: compaction repoints the heads it moved with this, and
    /// at a key per record a lookup that read each key from the log cost it
    /// a cache miss per key, under the writer lock.
    pub fn replace_if<R: KeyResolver>(
        &self,
        key: &[u8],
        expected: u64,
        new: u64,
        resolver: &R,
    ) -> bool {
        let _lock = self.lock_to_change();
        let guard = epoch::pin();
        let w = self.writer(resolver, &guard);
        let (path, mut leaf_ref) = w.descend(key);
        let Some(pos) = Leaf::of(leaf_ref).find_payload(key, expected) else {
            return false;
        };
        if let Node::Packed(_) = leaf_ref.get() {
            if w.store_packed(&path, leaf_ref, pos, new) {
                self.side.log(path.iter().map(|s| s.node()), key, Some(new));
                return true;
            }
            leaf_ref = w.unpacked(&path, leaf_ref);
        }
        let leaf = as_data(leaf_ref);
        let Some(pos) = leaf.find_payload(leaf.model_key(key), expected) else {
            return false;
        };
        leaf.store_payload(pos, new);
        self.side.log(path.iter().map(|s| s.node()), key, Some(new));
        true
    }

    fn remove_where<R: KeyResolver>(
        &self,
        key: &[u8],
        resolver: &R,
        entry: impl Fn(Leaf<'_>) -> Option<usize>,
    ) -> Option<u64> {
        let removed = self.remove_locked(key, resolver, entry);
        retired::free_some(retired::FREED_PER_WRITE);
        removed
    }

    /// Removes the entry `entry` finds in the leaf `key` routes to.
    fn remove_locked<R: KeyResolver>(
        &self,
        key: &[u8],
        resolver: &R,
        entry: impl Fn(Leaf<'_>) -> Option<usize>,
    ) -> Option<u64> {
        let _lock = self.lock_to_change();
        let guard = epoch::pin();
        let w = self.writer(resolver, &guard);
        let (path, leaf_ref) = w.descend(key);
        let leaf = Leaf::of(leaf_ref);
        let pos = entry(leaf)?;
        let old = leaf.payload_at(pos);
        let node = match leaf {
            Leaf::Packed(packed) => Node::Packed(packed.with_remove(pos)),
            Leaf::Dense(data) => {
                let mut node = data.with_remove(pos);
                if node.is_sparse() {
                    node = node.resized(resolver, 0);
                    Counters::bump(&self.counters.contractions);
                    Counters::bump(&self.counters.retrains);
                }
                Node::Data(node)
            }
        };
        w.replace(&path, leaf_ref, NodeRef::publish(node, &guard));
        Writer::<R>::count_key(&path, false);
        self.len.fetch_sub(1, Ordering::Relaxed);
        self.side.log(path.iter().map(|s| s.node()), key, None);
        Some(old)
    }

    /// Lock-free ordered scan: pushes up to `limit` payloads in `direction`
    /// order into `out`, starting at `from` (`Unbounded`: the first or last
    /// key; for `Reverse`, `Included(k)` starts at the last key `<= k` and
    /// `Excluded(k)` at the last key `< k`). Seeks with one root-to-leaf
    /// descent, then walks leaves. Under concurrent writes each call sees
    /// entries in strict order, without duplicates, and includes every entry
    /// present for the whole call.
    pub fn collect<R: KeyResolver>(
        &self,
        from: Bound<&[u8]>,
        direction: ScanDirection,
        limit: usize,
        resolver: &R,
        guard: &Guard,
        out: &mut Vec<u64>,
    ) {
        scan::collect(&self.root, from, direction, limit, resolver, guard, out);
    }

    /// Packs every data node whose entries fit a packed leaf, in place:
    /// about 5 bytes an entry instead of ~20 (see `packed_leaf`), leaves of
    /// the data nodes' sizes (a bulk load with [`LeafForm::Packed`] builds
    /// leaves about five times bigger, which cost less). Reads no key.
    /// Returns how many leaves were packed.
    pub fn pack_leaves(&self) -> usize {
        let packed = {
            let _lock = self.lock();
            let guard = epoch::pin();
            pack::pack_tree(&self.root, &self.side, &guard)
        };
        self.counters
            .packs
            .fetch_add(packed as u64, Ordering::Relaxed);
        super::reclaim_retired_after(packed);
        packed
    }

    /// Sends rebuilds of subtrees over `keys` keys to a background thread
    /// (the engine uses [`super::SIDE_REBUILD_KEYS`]), which must then call
    /// [`Self::rebuild_to_the_side`] whenever [`Self::take_rebuild_signal`]
    /// says so; `None` (the default) runs every rebuild under the write
    /// lock.
    pub fn set_side_rebuild_above(&self, keys: Option<usize>) {
        self.side.set_above(keys);
    }

    /// Whether a writer asked for a subtree rebuild to the side since the
    /// last call: the caller should then run [`Self::rebuild_to_the_side`]
    /// on a background thread.
    pub fn take_rebuild_signal(&self) -> bool {
        self.side.take_signal()
    }

    /// Runs the subtree rebuild a writer asked for, if any (see
    /// `side_rebuild`): collects and bulk loads the subtree and replays the
    /// writes made meanwhile without the write lock, then holds it only to
    /// replay the last few (usually fewer than 256) and link the new subtree.
    /// `fresh` makes a resolver for each step; it must resolve every
    /// payload the index has held since the call began (a resolver that
    /// reports [`KeyResolver::failed`] makes the rebuild give up, changing
    /// nothing). Returns whether a subtree was replaced.
    pub fn rebuild_to_the_side<R: KeyResolver>(&self, mut fresh: impl FnMut() -> R) -> bool {
        let Some((id, depth, key)) = self.side.start() else {
            return false;
        };
        // Ends the job however the rebuild ends, unwinding included: a job
        // left pending keeps its node frozen and every write through it
        // logged (gigabytes under a big subtree) until its delta outgrows
        // the subtree.
        let _end = side_rebuild::EndJob::new(&self.side, id);
        self.run_side_rebuild(id, depth, &key, &mut fresh)
    }

    fn run_side_rebuild<R: KeyResolver>(
        &self,
        id: u64,
        depth: usize,
        key: &[u8],
        fresh: &mut impl FnMut() -> R,
    ) -> bool {
        let resolver = fresh();
        // The global epoch is held only while the subtree's nodes are read:
        // writers' replaced nodes are freed while keys are read from the
        // log and the private tree is built and caught up.
        let mut collected = {
            let guard = epoch::pin();
            let root = self.root.load(&guard);
            let Some((_, old)) = side_rebuild::find_frozen(root, key, depth, &self.side, &guard)
            else {
                return false;
            };
            side_rebuild::collect_from(old, &guard)
        };
        collected.dedup(&resolver);
        let subtree = side_rebuild::build_private(collected.entries(&resolver));
        let mut private = Self::with_root(subtree, collected.len());
        drop(collected);
        private.side.set_above(self.side.above());
        if resolver.failed() {
            return false;
        }
        let mut applied = 0;
        for round in 0.. {
            let Some(writes) = self.side.writes_since(id, applied, CHUNK) else {
                return false;
            };
            // Catch up until few writes are left for the lock; writers
            // that keep outpacing the replay get a bigger remainder.
            if writes.len() < if round < 64 { LOCKED_REPLAY } else { CHUNK } {
                break;
            }
            if !replay(&private, &writes, &fresh()) {
                return false;
            }
            applied += writes.len();
        }
        let lock = self.lock_to_change();
        let Some(writes) = self.side.writes_since(id, applied, usize::MAX) else {
            return false;
        };
        if !replay(&private, &writes, &fresh()) {
            return false;
        }
        let guard = epoch::pin();
        let root = self.root.load(&guard);
        let Some((above, old)) = side_rebuild::find_frozen(root, key, depth, &self.side, &guard)
        else {
            return false;
        };
        let new = private.root.load(&guard);
        private.root = Link::null();
        match above.last() {
            None => self.root.store(new),
            Some(parent) => {
                let Node::Inner(inner) = parent.get() else {
                    unreachable!("nodes above the frozen node are inner nodes")
                };
                inner.set_range(inner.slot_range(inner.route(key), old, &guard), new);
            }
        }
        // Unfrozen before the old root can be freed and its address reused.
        self.side.end(id);
        drop(lock);
        // Unreachable from the root now: no writer can link it again.
        retire_subtree(old, &guard);
        Counters::bump(&self.counters.rebuilds);
        Counters::bump(&self.counters.side_rebuilds);
        let replayed = (applied + writes.len()) as u64;
        self.counters
            .side_rebuild_writes
            .fetch_add(replayed, Ordering::Relaxed);
        true
    }

    /// Heap bytes held by live nodes. Walks the tree: O(nodes).
    pub fn memory_bytes(&self) -> usize {
        self.stats().memory_bytes
    }

    /// The tree's shape and structure-change counters. Walks the tree.
    pub fn stats(&self) -> IndexStats {
        let guard = epoch::pin();
        let mut stats = IndexStats::default();
        stats::measure(self.root.load(&guard), 1, &guard, &mut stats);
        self.counters.fill(&mut stats);
        stats
    }
}

/// Replays logged writes into a private tree; false if `resolver` failed.
fn replay<R: KeyResolver>(tree: &AlexIndex, writes: &[Write], resolver: &R) -> bool {
    for (key, payload) in writes {
        match payload {
            Some(p) => {
                tree.upsert(key, *p, resolver);
            }
            None => {
                tree.remove(key, resolver);
            }
        }
    }
    !resolver.failed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::data_node::tests::Keys;

    /// Resolves keys from `Keys` until `ok` reads, then panics.
    struct FailingAfter<'k> {
        keys: &'k Keys,
        ok: std::cell::Cell<usize>,
    }

    impl KeyResolver for FailingAfter<'_> {
        fn key(&self, payload: u64) -> &[u8] {
            assert!(self.ok.get() > 0, "resolver failed");
            self.ok.set(self.ok.get() - 1);
            self.keys.key(payload)
        }
    }

    /// The share of `keys` (every 7th) whose search hint, from the last
    /// inner node above their data node, names the cache line of the slot
    /// the data node's model predicts.
    fn hinted_line_share(index: &AlexIndex, keys: &Keys) -> f64 {
        let guard = epoch::pin();
        let (mut hits, mut seen) = (0, 0);
        for key in keys.0.iter().step_by(7) {
            let mut node = index.root.load(&guard).get();
            let mut hinted = None;
            let data = loop {
                match node {
                    Node::Inner(inner) => {
                        hinted = inner.hinted_address(key);
                        node = inner.child(inner.route(key), &guard).get();
                    }
                    Node::Data(data) => break data,
                    Node::Packed(_) => unreachable!("these tests pack no leaf"),
                }
            };
            let predicted = data.model.predict_local(data.model_key(key), data.slots());
            let line = (data.array_address() + predicted * 16) / 64;
            hits += usize::from(hinted.is_some_and(|h| h / 64 == line));
            seen += 1;
        }
        hits as f64 / seen as f64
    }

    #[test]
    fn search_hints_point_at_the_line_the_data_node_search_starts_at() {
        const N: u64 = 200_000;
        for strings in [false, true] {
            let key_of = |i: u64| match strings {
                true => format!("user:profile:{:012}", i * 7 % (3 * N)).into_bytes(),
                false => i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes().to_vec(),
            };
            let keys = Keys((0..N + N / 4).map(key_of).collect());
            let mut loaded: Vec<u64> = (0..N).collect();
            loaded.sort_by(|&a, &b| keys.key(a).cmp(keys.key(b)));
            let index = AlexIndex::bulk_load(&loaded, &keys);
            let after_load = hinted_line_share(&index, &keys);
            // Inserts copy, split and relink data nodes: hints follow.
            for p in N..N + N / 4 {
                index.upsert(keys.key(p), p, &keys);
            }
            let after_inserts = hinted_line_share(&index, &keys);
            assert!(after_load > 0.99, "strings {strings}: {after_load}");
            assert!(after_inserts > 0.98, "strings {strings}: {after_inserts}");
        }
    }

    /// Hints stay right through the structure changes a hot range and
    /// appends past the end cause (parents doubled and extended, nodes
    /// split and rebuilt), which copy hints instead of recomputing them.
    #[test]
    fn search_hints_survive_doublings_and_extensions() {
        let (stable, n) = (20_000u64, 120_000u64);
        let hot = hot_gap_keys(stable, n, 1);
        let tail = (0..40_000u64).map(|i| ((30_000u64 << 40) + (i << 30)).to_be_bytes().to_vec());
        let keys = Keys(hot.0.into_iter().chain(tail).collect());
        let loaded: Vec<u64> = (0..stable).collect();
        let index = AlexIndex::bulk_load(&loaded, &keys);
        for p in stable..keys.0.len() as u64 {
            index.upsert(keys.key(p), p, &keys);
        }
        let stats = index.stats();
        assert!(stats.parent_doublings + stats.extensions > 0, "{stats:?}");
        let share = hinted_line_share(&index, &keys);
        assert!(share > 0.93, "{share}");
    }

    /// `stable` keys far apart, then `n - stable` keys in one gap between
    /// two of them (a hot range, whose inserts make the ancestors double);
    /// the whole list `copies` times, so that payload `i + k * n` is another
    /// location of key `i`.
    fn hot_gap_keys(stable: u64, n: u64, copies: u64) -> Keys {
        let gap = 6_000 << 40;
        let key_of = |i: u64| match i < stable {
            true => i << 40,
            false => gap + 1 + (i - stable).wrapping_mul(0x9E37_79B9) % (1 << 39),
        };
        Keys(
            (0..copies * n)
                .map(|i| key_of(i % n).to_be_bytes().to_vec())
                .collect(),
        )
    }

    /// The stable keys of [`hot_gap_keys`] bulk loaded with rebuilds to the
    /// side above 1,000 keys, then hot keys upserted until one is asked
    /// for: returns the index, with a node frozen, and the first key left.
    fn frozen_by_a_hot_range(keys: &Keys, stable: u64, n: u64) -> (AlexIndex, u64) {
        let loaded: Vec<u64> = (0..stable).collect();
        let index = AlexIndex::bulk_load(&loaded, keys);
        index.set_side_rebuild_above(Some(1_000));
        let mut p = stable;
        while !index.take_rebuild_signal() {
            assert!(p < n, "no rebuild was requested");
            index.upsert(keys.key(p), p, keys);
            p += 1;
        }
        assert!(index.side.any_frozen());
        (index, p)
    }

    /// Regression: a rebuild to the side that panicked (a bug in the build,
    /// at 100M keys) left its node frozen, and every later write through it
    /// was logged for a job nobody ran.
    #[test]
    fn a_side_rebuild_that_panics_unfreezes_its_node() {
        let (stable, n) = (20_000u64, 100_000u64);
        let keys = hot_gap_keys(stable, n, 1);
        let (index, p) = frozen_by_a_hot_range(&keys, stable, n);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            index.rebuild_to_the_side(|| FailingAfter {
                keys: &keys,
                ok: 10.into(),
            })
        }));
        assert!(panicked.is_err());
        assert!(!index.side.any_frozen(), "the node stayed frozen");
        // The index is whole and takes writes and rebuilds as before.
        for q in p..n {
            index.upsert(keys.key(q), q, &keys);
            while index.rebuild_to_the_side(|| &keys) {}
        }
        let guard = epoch::pin();
        for q in 0..n {
            assert_eq!(index.get(keys.key(q), &keys, &guard), Some(q));
        }
    }

    /// `replace_if` and `remove_if` read no key (a resolver that fails on
    /// any read is never called), act only on the expected payload, and
    /// what they change while a subtree is rebuilt to the side survives
    /// the rebuild (they log like any write).
    #[test]
    fn payload_checked_writes_read_no_key_and_survive_a_side_rebuild() {
        let (stable, n) = (20_000u64, 60_000u64);
        // Payload `i + n` is a second location of key `i`.
        let keys = hot_gap_keys(stable, n, 2);
        let (index, p) = frozen_by_a_hot_range(&keys, stable, n);
        let blind = FailingAfter {
            keys: &keys,
            ok: 0.into(),
        };
        for q in 0..p {
            assert!(!index.replace_if(keys.key(q), q + n, q, &blind));
            match q % 3 {
                0 => assert!(index.replace_if(keys.key(q), q, q + n, &blind)),
                1 => assert!(index.remove_if(keys.key(q), q, &blind)),
                _ => assert!(!index.remove_if(keys.key(q), q + n, &blind)),
            }
        }
        while index.rebuild_to_the_side(|| &keys) {}
        let guard = epoch::pin();
        for q in 0..p {
            let expected = [Some(q + n), None, Some(q)][(q % 3) as usize];
            assert_eq!(index.get(keys.key(q), &keys, &guard), expected, "key {q}");
        }
        let removed = (0..p).filter(|q| q % 3 == 1).count();
        assert_eq!(index.len(), p as usize - removed);
    }

    /// The most consecutive slots any child of an inner node fills.
    fn widest_child(node: NodeRef<'_>, guard: &Guard) -> usize {
        let Node::Inner(inner) = node.get() else {
            return 0;
        };
        let links = inner.links();
        let (mut widest, mut run) = (0, 0);
        for (s, link) in links.iter().enumerate() {
            let child = link.load(guard);
            let same = s > 0 && links[s - 1].load(guard).ptr_eq(child);
            run = if same { run + 1 } else { 1 };
            widest = widest.max(run).max(widest_child(child, guard));
        }
        widest
    }

    /// Batched lookups (`get_candidates`) over a tree three levels deep
    /// give exactly what one lookup per key gives, present keys and absent.
    #[test]
    fn batched_lookups_find_what_single_lookups_find() {
        let (stable, n) = (20_000u64, 60_000u64);
        let keys = hot_gap_keys(stable, n, 1);
        let mut sorted: Vec<u64> = (0..stable).collect();
        sorted.sort_by(|a, b| keys.key(*a).cmp(keys.key(*b)));
        let index = AlexIndex::bulk_load(&sorted, &keys);
        for p in stable..n {
            index.upsert(keys.key(p), p, &keys);
        }
        assert!(index.stats().depth >= 3, "{:?}", index.stats());
        // Every key, and beside each one a key that is absent.
        let absent: Vec<Vec<u8>> = keys.0.iter().map(|k| [k, &b"\0"[..]].concat()).collect();
        let probes: Vec<&[u8]> = keys
            .0
            .iter()
            .zip(&absent)
            .flat_map(|(k, a)| [k.as_slice(), a.as_slice()])
            .collect();
        let guard = epoch::pin();
        let mut batched = Vec::new();
        index.get_candidates(&probes, &keys, &guard, &mut batched);
        let single: Vec<Option<u64>> = probes
            .iter()
            .map(|k| index.get_candidate(k, &keys, &guard))
            .collect();
        assert_eq!(batched, single);
        for (i, k) in keys.0.iter().enumerate() {
            assert_eq!(batched[2 * i], Some(i as u64), "{k:?}");
        }
    }

    /// Appends (and prepends) extend the parent; the edge child must not
    /// fill the new slots, or every copy-on-write of it relinks them all.
    #[test]
    fn edge_children_fill_few_slots() {
        let n = 100_000u64;
        for descending in [false, true] {
            let keys = Keys(
                (0..n)
                    .map(|i| {
                        let v = if descending { n - i } else { i };
                        (v * 10).to_be_bytes().to_vec()
                    })
                    .collect(),
            );
            let index = AlexIndex::new();
            for p in 0..n {
                index.upsert(keys.key(p), p, &keys);
            }
            let guard = epoch::pin();
            let root = index.root.load(&guard);
            let Node::Inner(inner) = root.get() else {
                panic!("root is a leaf");
            };
            let widest = widest_child(root, &guard);
            assert!(
                widest <= 64.max(inner.slots() / 32),
                "descending {descending}: a child fills {widest} of {} slots",
                inner.slots()
            );
            let guard = epoch::pin();
            for p in (0..n).step_by(13) {
                assert_eq!(index.get(keys.key(p), &keys, &guard), Some(p));
            }
        }
    }
}
