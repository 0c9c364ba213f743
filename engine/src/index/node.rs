//! The kinds of ALEX nodes, and the pointers to them: the index's
//! `unsafe` code, with `node_heap`, is the epoch-protected [`Link`].
//!
//! Protocol. Nodes are published once and then only read, except that the
//! single writer (holding the index's write lock) stores into the child
//! [`Link`]s of live inner nodes. A node is retired only after the writer
//! has unlinked it from every live link; it is then destroyed by
//! `crossbeam_epoch` once every guard pinned before the retirement is gone.
//! A reader can still reach a retired node through a stale inner node it
//! loaded earlier, but only under a guard pinned before that inner node was
//! retired, hence before anything it points to was retired.

use std::sync::atomic::Ordering;

use crossbeam_epoch::{self as epoch, Atomic, Guard, Shared};

use super::data_node::DataNode;
use super::inner_node::InnerNode;
use super::node_heap::{HeapBox, NodeHeap};
use super::packed_leaf::PackedLeaf;

/// A tree node.
///
/// `repr(C, align(64))`: the tag sits at offset 0 and the variant right
/// after it, on a cache-line boundary, so a data node's lookup fields (see
/// [`DataNode`]) share the tag's cache line.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) enum Node {
    /// Routes keys to children with a linear model.
    Inner(InnerNode),
    /// Holds entries in a gapped array.
    Data(DataNode),
    /// Holds entries that take no new keys, packed (see `packed_leaf`).
    Packed(PackedLeaf),
}

impl Node {
    /// Heap bytes of the node itself (its box and arrays, not its children).
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of::<Self>()
            + match self {
                Self::Inner(inner) => inner.heap_bytes(),
                Self::Data(data) => data.heap_bytes(),
                Self::Packed(packed) => packed.heap_bytes(),
            }
    }
}

/// A pointer slot that always holds a published node.
#[derive(Debug)]
pub(crate) struct Link(Atomic<Node>);

/// A published node, readable while the guard `'g` stays pinned.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeRef<'g>(Shared<'g, Node>);

impl Link {
    /// A link to `node`.
    pub(crate) fn new(node: NodeRef<'_>) -> Self {
        Self(Atomic::from(node.0))
    }

    /// The node currently linked (Acquire: its contents are visible).
    #[inline]
    pub(crate) fn load<'g>(&self, guard: &'g Guard) -> NodeRef<'g> {
        NodeRef(self.0.load(Ordering::Acquire, guard))
    }

    /// Links `node` instead (Release: publishes its contents). Writer only.
    /// A link to nothing, for a tree whose nodes were handed over (freeing
    /// it frees nothing).
    pub(crate) fn null() -> Self {
        Self(Atomic::null())
    }

    pub(crate) fn store(&self, node: NodeRef<'_>) {
        self.0.store(node.0, Ordering::Release);
    }
}

impl<'g> NodeRef<'g> {
    /// Moves `node` to the index's heap so it can be linked while
    /// `guard` is pinned.
    pub(crate) fn publish(node: Node, _guard: &'g Guard) -> Self {
        let raw = HeapBox::into_raw(HeapBox::new_in(node, NodeHeap));
        Self(Shared::from(raw.cast_const()))
    }

    /// The node.
    #[inline]
    pub(crate) fn get(self) -> &'g Node {
        // SAFETY: a `NodeRef` is never null: it comes from `publish` or from
        // a `Link`, which only ever holds published nodes. The node stays
        // allocated while `'g`'s guard is pinned: it is freed only by
        // `retire` (deferred past every guard pinned before the retirement,
        // and the module protocol ensures no guard pinned later can reach
        // it) or by `free_tree`, which needs exclusive access to the tree.
        unsafe { self.0.deref() }
    }

    /// Hints the CPU to load the node's first cache line, without reading
    /// it (a batched lookup reads it after hinting its neighbours').
    #[inline]
    pub(crate) fn hint(self) {
        crate::io::prefetch::prefetch_address(self.0.as_raw().cast::<u8>());
    }

    /// The node's address, for identity checks only.
    pub(crate) fn addr(self) -> usize {
        self.0.as_raw() as usize
    }

    /// Whether both refer to the same node.
    #[inline]
    pub(crate) fn ptr_eq(self, other: NodeRef<'_>) -> bool {
        self.0.as_raw() == other.0.as_raw()
    }

    /// Schedules the node's destruction once no pinned reader can see it.
    /// Writer only, once per node, and only after unlinking it from every
    /// live link (see the module protocol). Children are not affected.
    /// The node is not dropped where the epoch collects it but handed
    /// over to [`super::retired`], for a writer to free.
    pub(crate) fn retire(self, guard: &Guard) {
        let raw = self.0.as_raw() as usize;
        // SAFETY: the writer calls this once per node, after replacing every
        // live link to it; epoch deferral runs the closure once, after every
        // guard that could have loaded the node is gone, so it then owns the
        // node alone (`raw` came from `HeapBox::into_raw` in `publish`,
        // with the same allocator as here). Dropping a
        // `Node` later never touches its children.
        unsafe {
            guard.defer_unchecked(move || {
                let node = HeapBox::from_raw_in(raw as *mut Node, NodeHeap);
                super::retired::hand_over(node);
            })
        }
    }
}

/// Frees every node reachable from `root`. Taking `&mut` proves that no
/// reader or writer uses the tree.
pub(crate) fn free_tree(root: &mut Link) {
    // SAFETY: with exclusive access to the root no other thread can be
    // reading these nodes, so no epoch protection is needed.
    let guard = unsafe { epoch::unprotected() };
    free_node(root.0.load(Ordering::Relaxed, guard), guard);
}

fn free_node(ptr: Shared<'_, Node>, guard: &Guard) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the tree owns every reachable node, each boxed by `publish`
    // in the index's heap; a child linked from several slots sits in
    // consecutive slots and is freed once below.
    let node = unsafe { HeapBox::from_raw_in(ptr.as_raw().cast_mut(), NodeHeap) };
    if let Node::Inner(inner) = &*node {
        let mut prev = Shared::null();
        for link in inner.links() {
            let child = link.0.load(Ordering::Relaxed, guard);
            if child != prev {
                free_node(child, guard);
                prev = child;
            }
        }
    }
    drop(node);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::model::LinearModel;
    use crate::index::projection::Projection;

    /// The lookup fields of a data node: its projection (with a prefix
    /// kept inline) and its array lie within the node's first cache line;
    /// the model but its last word, its unused integer offset, ends within
    /// the first 8 bytes of the second, a load independent of the first's
    /// (its address is known with the node's).
    #[test]
    fn data_lookup_fields_share_the_first_cache_line() {
        let node = Node::Data(DataNode::empty());
        let base = &raw const node as usize;
        let Node::Data(data) = &node else {
            unreachable!()
        };
        let data_offset = &raw const *data as usize - base;
        let end_of = |offset: usize, size: usize| data_offset + offset + size;
        let proj_end = end_of(
            std::mem::offset_of!(DataNode, proj),
            size_of::<Projection>(),
        );
        let array_end = end_of(std::mem::offset_of!(DataNode, array), 16);
        let model_end = end_of(
            std::mem::offset_of!(DataNode, model),
            size_of::<LinearModel>() - 8,
        );
        assert_eq!(base % 64, 0);
        assert!(proj_end <= 64 && array_end <= 64, "{proj_end}, {array_end}");
        assert!(model_end <= 72, "{model_end}");
    }
}
