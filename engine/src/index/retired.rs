//! Retired nodes that no reader can see any more, waiting for an index
//! writer to free them.
//!
//! `crossbeam_epoch` runs a retired node's destructor on whichever thread
//! happens to collect garbage: every thread that pins, readers and the
//! compaction thread included. The writer allocates nearly every node (each
//! insert copies a leaf), so other threads freed the writer's nodes, in
//! bursts, while the writer allocated new ones. Here the destructor only
//! hands the node over, a short critical section that frees nothing, and
//! index writers free a few pooled nodes after each write, outside the
//! index's lock, so that the thread that allocates nodes frees them too.
//! [`free_all`] empties the pool for callers that retire many nodes without
//! writing (see [`super::reclaim_retired`]) and when an index is dropped.
//!
//! Measured (runner `hot-range` at 10M keys with a compaction
//! running, longest put): with mimalloc, 19–22 ms before, 4.9–9.3 ms in four
//! runs after (with repointing install steps no longer reclaiming, see
//! `compaction::rewrite::install_step`); with glibc's allocator 13–16 ms
//! before and 4.5–19 ms after, where the writer still sleeps on the arena
//! lock that other threads' frees of its smaller allocations take.
//! Nodes now live in the index's own heap (`node_heap`), not glibc's;
//! handing them to the writer still keeps frees off readers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::node::Node;
use super::node_heap::HeapBox;

/// Nodes freed per write, at most: more than a write retires (an insert
/// retires one leaf, a split or an expansion a few), so the pool drains
/// while anyone writes.
pub(crate) const FREED_PER_WRITE: usize = 8;

/// The pool, shared by every index of the process: a node is memory, and
/// any writer may free it. Boxed: the box is the node's own allocation,
/// which the writer frees with the rest of it.
static POOL: Mutex<Vec<HeapBox<Node>>> = Mutex::new(Vec::new());

/// How many nodes [`POOL`] holds, kept beside it so that a write that finds
/// the pool empty (an overwrite retires nothing) skips its lock. Only
/// changed with the pool's lock held; read without it, it may be stale by
/// a node handed over meanwhile, which the next write frees.
static POOLED: AtomicUsize = AtomicUsize::new(0);

fn pool() -> MutexGuard<'static, Vec<HeapBox<Node>>> {
    // A panic while the pool was locked leaves a valid vector behind.
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes a node no reader can reach any more, to be freed by a writer.
pub(crate) fn hand_over(node: HeapBox<Node>) {
    let mut pool = pool();
    pool.push(node);
    POOLED.store(pool.len(), Ordering::Relaxed);
}

/// Frees up to `max` pooled nodes on the calling thread, a few per hold of
/// the pool's lock and outside it, without allocating: this runs after
/// every write.
pub(crate) fn free_some(max: usize) {
    let mut left = max;
    while left > 0 && POOLED.load(Ordering::Relaxed) > 0 {
        let taken: [Option<HeapBox<Node>>; FREED_PER_WRITE] = {
            let mut pool = pool();
            let taken = std::array::from_fn(|i| if i < left { pool.pop() } else { None });
            POOLED.store(pool.len(), Ordering::Relaxed);
            taken
        };
        let freed = taken.iter().flatten().count();
        drop(taken);
        if freed < FREED_PER_WRITE.min(left) {
            return;
        }
        left -= freed;
    }
}

/// Frees every pooled node on the calling thread.
pub(crate) fn free_all() {
    let taken = {
        let mut pool = pool();
        POOLED.store(0, Ordering::Relaxed);
        std::mem::take(&mut *pool)
    };
    drop(taken);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::AlexIndex;
    use crate::index::data_node::tests::Keys;

    /// Writes keep the pool drained: every insert retires a leaf, and
    /// without the frees after each write all of them would wait in the
    /// pool (other tests of this binary share it, hence the loose bound).
    #[test]
    fn writes_free_what_writes_retire() {
        let n = 50_000u64;
        let keys = Keys(
            (0..n)
                .map(|i| (i * 7919 % n).to_be_bytes().to_vec())
                .collect(),
        );
        let index = AlexIndex::new();
        for i in 0..n {
            index.upsert(&keys.0[i as usize], i, &keys);
        }
        assert_eq!(index.len(), n as usize);
        let pooled = pool().len();
        assert!(
            pooled < n as usize / 2,
            "{pooled} retired nodes still pooled"
        );
        super::super::reclaim_retired();
    }
}
