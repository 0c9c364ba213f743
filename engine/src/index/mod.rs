//! The ALEX learned index (Ding et al., SIGMOD 2020) over byte-string keys.
//!
//! The index maps each key to a `u64` payload (in the engine: the location
//! of the key's newest record in the log). It does not store keys: every
//! payload can be turned back into its full key through a [`KeyResolver`],
//! and full keys break ties between equal model keys.
//!
//! Concurrency: readers are lock-free. They pin a `crossbeam_epoch` guard
//! for one short operation and never wait for the writer. Writers are
//! serialized internally. A structural write (insert, remove, split,
//! expansion) builds a new node and swaps the pointer, and the old node is
//! reclaimed through the epoch once no reader can still see it; an overwrite
//! of an existing key only stores the new payload into the published node
//! (atomically, slot by slot: see `DataNode::store_payload`).
//!
//! Layout, top-down: [`tree`](AlexIndex) is the API; `smo` the writer and
//! its structure modifications; `bulk_load` and `fanout` build subtrees;
//! `side_rebuild` rebuilds large subtrees without the lock; `scan` walks
//! leaves; `inner_node`, `data_node` (+ `data_write`, its copy-on-write
//! changes) and `packed_leaf` (leaves of about 5 bytes an entry, built by
//! an open's bulk load or by `pack`) are the nodes, `leaf` the view readers
//! take of either kind of leaf, `model`, `projection` and `bitmap` their
//! parts; `cost` is the cost model; `node` (the nodes and the pointers to
//! them) and `node_heap` (the nodes' memory, on huge pages) hold all
//! `unsafe`.

mod bitmap;
mod bulk_load;
mod cost;
mod data_node;
mod data_write;
mod fanout;
mod inner_node;
mod known_keys;
mod leaf;
mod model;
mod node;
mod node_heap;
mod pack;
mod packed_arrays;
mod packed_leaf;
mod page_prep;
mod projection;
mod retired;
mod scan;
mod search_hint;
mod side_rebuild;
mod smo;
mod stats;
mod tree;
mod write_log;

/// Epoch flushes per [`reclaim_retired`] call. A retired object is freed
/// two epoch advances after it was retired; each flush advances the epoch
/// at most once and frees at most 8 bags of 64 objects.
const RECLAIM_FLUSHES: usize = 4;

/// Frees the nodes that index changes retired, as far as readers allow.
///
/// `crossbeam_epoch` frees retired objects only now and then, when a thread
/// pins anew (every 128th pin), and a pin inside another counts for
/// nothing. A loop that makes many structural changes under one outer pin
/// (compaction's install step removes 256 keys, each retiring a copied
/// leaf) thus retires far faster than anything frees: deleting half of 1M
/// keys left 1.2 GB of retired leaves waiting. Such loops call
/// this after each step, with no pin of their own held.
pub(crate) fn reclaim_retired() {
    reclaim_retired_after(0);
}

/// [`reclaim_retired`] after a pass that retired `nodes` nodes at once
/// (packing a tree's leaves): enough flushes to free all of them, each
/// freeing at most 512. A quiet process pins too seldom to free them
/// otherwise, and its retired leaves would stay allocated.
pub(crate) fn reclaim_retired_after(nodes: usize) {
    for _ in 0..RECLAIM_FLUSHES + nodes.div_ceil(512) {
        crossbeam_epoch::pin().flush();
    }
    retired::free_all();
}

pub use node_heap::NodeHeapUsage;
pub use stats::IndexStats;

/// What the memory all indexes of the process allocate from holds now.
pub fn node_heap_usage() -> NodeHeapUsage {
    node_heap::usage()
}

/// Gives back to the system the memory of every 4 KiB page of the index
/// heap that holds only free blocks, and of the empty pages it keeps for
/// reuse, if the heap's free bytes (besides the pages kept ready for
/// writers) exceed its used bytes divided by `per_free_byte`
/// (`usize::MAX`: whenever any are free); returns the bytes given back.
/// Huge pages trimmed this way are split for good, which costs lookups in
/// the blocks left there a little: the engine calls this (with 4) once a
/// keyspace's writes have stopped for a while.
pub fn trim_node_heap(per_free_byte: usize) -> usize {
    node_heap::trim_if_free_above(per_free_byte)
}

/// The rebuild threshold the engine gives [`AlexIndex::set_side_rebuild_above`]:
/// a subtree over 2^15 keys is rebuilt by a background thread. A rebuild
/// under the write lock holds every writer: rebuilding the doubled
/// ancestor of a hot range of a 1M-key index (millions of keys) took
/// 0.6-0.8 s; 2^15 keys take a few milliseconds.
pub const SIDE_REBUILD_KEYS: usize = 1 << 15;
pub use tree::{AlexIndex, LOOKUP_BATCH};

/// Turns an index payload back into the full key it stands for.
///
/// The index calls this to break ties between keys whose model keys are
/// equal, and when it rebuilds nodes. Implementations must return the key
/// that was given when the payload was inserted, for every payload that is
/// currently in the index.
pub trait KeyResolver {
    /// The full key of the entry whose payload is `payload`.
    fn key(&self, payload: u64) -> &[u8];

    /// Whether some payload could not be resolved since this resolver was
    /// made (its key was returned empty). Work a rebuild to the side built
    /// with such a resolver is discarded.
    fn failed(&self) -> bool {
        false
    }

    /// Hints that the key of `payload` will be read soon (a resolver that
    /// reads keys from memory may start loading it; the default does
    /// nothing).
    fn prefetch(&self, _payload: u64) {}
}

impl<R: KeyResolver + ?Sized> KeyResolver for &R {
    fn key(&self, payload: u64) -> &[u8] {
        (**self).key(payload)
    }

    fn prefetch(&self, payload: u64) {
        (**self).prefetch(payload);
    }

    fn failed(&self) -> bool {
        (**self).failed()
    }
}

/// The form of the leaves a bulk load builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeafForm {
    /// Data nodes: gapped arrays of model keys and payloads, about 20
    /// bytes an entry, that take every change in place or by a copy.
    Dense,
    /// Packed leaves where the entries fit one (see `packed_leaf`): about
    /// 5 bytes an entry, for entries that take few new keys (a database
    /// just opened). Data nodes elsewhere.
    Packed,
}

/// The order of an [`AlexIndex::collect`] scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanDirection {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Reverse,
}
