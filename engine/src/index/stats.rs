//! Structure statistics and the writer's event counters.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_epoch::Guard;

use super::node::{Node, NodeRef};

/// A snapshot of the index's shape and of the structure changes so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexStats {
    /// Entries in the index.
    pub num_keys: usize,
    /// Nodes on the longest root-to-leaf path (1: the root is a data node).
    pub depth: usize,
    /// Data nodes (leaves that take every change).
    pub data_nodes: usize,
    /// Packed leaves (leaves that take no new keys, about 5 bytes an
    /// entry).
    pub packed_leaves: usize,
    /// Entries in packed leaves.
    pub packed_keys: usize,
    /// Inner nodes.
    pub inner_nodes: usize,
    /// Slots of all data nodes together.
    pub data_slots: usize,
    /// Child slots of all inner nodes together.
    pub inner_slots: usize,
    /// Heap bytes held by live nodes (as [`super::AlexIndex::memory_bytes`]).
    pub memory_bytes: usize,
    /// Data nodes grown into a bigger array.
    pub expansions: u64,
    /// Data nodes shrunk after deletes.
    pub contractions: u64,
    /// Data nodes split into two siblings under the same parent.
    pub splits_sideways: u64,
    /// Of those, splits that first doubled the parent's slot array.
    pub parent_doublings: u64,
    /// Of those, splits that first extended the parent's slot array to
    /// cover keys beyond its domain (appends at the right edge).
    pub extensions: u64,
    /// Data nodes replaced by a new subtree (split down).
    pub splits_down: u64,
    /// Data-node models retrained on their keys (expansions, contractions,
    /// and each node created by a sideways split).
    pub retrains: u64,
    /// Subtrees rebuilt by bulk loading after doubling in size.
    pub rebuilds: u64,
    /// Keys of the largest subtree rebuilt under the write lock so far (such
    /// a rebuild holds writers for time proportional to it).
    pub largest_rebuild: u64,
    /// Subtrees rebuilt to the side by a background thread (also counted
    /// in `rebuilds`).
    pub side_rebuilds: u64,
    /// Writes made while a rebuild to the side was running and replayed
    /// into its new subtree (writers progressed meanwhile).
    pub side_rebuild_writes: u64,
    /// Data nodes packed so far.
    pub packs: u64,
    /// Packed leaves turned back into data nodes to take a new key (each
    /// read its entries' keys).
    pub unpacks: u64,
}

/// Event counters, bumped by the writer and read by `stats`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) expansions: AtomicU64,
    pub(crate) contractions: AtomicU64,
    pub(crate) splits_sideways: AtomicU64,
    pub(crate) parent_doublings: AtomicU64,
    pub(crate) extensions: AtomicU64,
    pub(crate) splits_down: AtomicU64,
    pub(crate) retrains: AtomicU64,
    pub(crate) rebuilds: AtomicU64,
    pub(crate) largest_rebuild: AtomicU64,
    pub(crate) side_rebuilds: AtomicU64,
    pub(crate) side_rebuild_writes: AtomicU64,
    pub(crate) packs: AtomicU64,
    pub(crate) unpacks: AtomicU64,
}

impl Counters {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a rebuild under the lock of a subtree of `keys` keys.
    pub(crate) fn note_rebuild(&self, keys: usize) {
        self.largest_rebuild
            .fetch_max(keys as u64, Ordering::Relaxed);
    }

    /// Copies the counters into `stats`.
    pub(crate) fn fill(&self, stats: &mut IndexStats) {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        stats.expansions = get(&self.expansions);
        stats.contractions = get(&self.contractions);
        stats.splits_sideways = get(&self.splits_sideways);
        stats.parent_doublings = get(&self.parent_doublings);
        stats.extensions = get(&self.extensions);
        stats.splits_down = get(&self.splits_down);
        stats.retrains = get(&self.retrains);
        stats.rebuilds = get(&self.rebuilds);
        stats.largest_rebuild = get(&self.largest_rebuild);
        stats.side_rebuilds = get(&self.side_rebuilds);
        stats.side_rebuild_writes = get(&self.side_rebuild_writes);
        stats.packs = get(&self.packs);
        stats.unpacks = get(&self.unpacks);
    }
}

/// Adds the shape of the subtree `node` at `depth` to `stats`.
pub(crate) fn measure(node: NodeRef<'_>, depth: usize, guard: &Guard, stats: &mut IndexStats) {
    let node_ref = node.get();
    stats.memory_bytes += node_ref.heap_bytes();
    stats.depth = stats.depth.max(depth);
    match node_ref {
        Node::Data(data) => {
            stats.data_nodes += 1;
            stats.data_slots += data.slots();
            stats.num_keys += data.len();
        }
        Node::Packed(packed) => {
            stats.packed_leaves += 1;
            stats.packed_keys += packed.len();
            stats.num_keys += packed.len();
        }
        Node::Inner(inner) => {
            stats.inner_nodes += 1;
            stats.inner_slots += inner.slots();
            for child in inner.unique_children(guard) {
                measure(child, depth + 1, guard, stats);
            }
        }
    }
}
