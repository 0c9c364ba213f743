//! ALEX inner nodes: a linear model over a power-of-2 array of child links.
//!
//! A child may fill several consecutive slots. The writer updates the links
//! in place (a reader sees either the old or the new child of a slot, both
//! complete); everything else about an inner node is fixed once published.

use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_epoch::Guard;

use super::cost::Edge;
use super::model::LinearModel;
use super::node_heap::{self, HeapBox};
use super::node_ptr::{Link, NodeRef};
use super::projection::Projection;

/// An inner node.
#[derive(Debug)]
pub(crate) struct InnerNode {
    proj: Projection,
    model: LinearModel,
    children: HeapBox<[Link]>,
    /// Keys in the subtree, kept by the writer.
    num_keys: AtomicUsize,
    /// Keys in the subtree when it was built.
    built_keys: usize,
}

impl InnerNode {
    /// A node routing with `proj` and `model` to `children`, over a subtree
    /// of `num_keys` keys.
    pub(crate) fn new(
        proj: Projection,
        model: LinearModel,
        children: Vec<Link>,
        num_keys: usize,
    ) -> Self {
        debug_assert!(children.len().is_power_of_two());
        Self {
            proj,
            model,
            children: node_heap::slice_from(children),
            num_keys: AtomicUsize::new(num_keys),
            built_keys: num_keys,
        }
    }

    /// Number of child slots.
    pub(crate) fn slots(&self) -> usize {
        self.children.len()
    }

    /// The child links.
    pub(crate) fn links(&self) -> &[Link] {
        &self.children
    }

    /// The projection of keys onto this node's model keys.
    pub(crate) fn proj(&self) -> &Projection {
        &self.proj
    }

    /// The slot `key` routes to.
    #[inline]
    pub(crate) fn route(&self, key: &[u8]) -> usize {
        self.route_mk(self.proj.model_key(key))
    }

    /// The slot a key of model key `mk` (under [`Self::proj`]) routes to.
    #[inline]
    pub(crate) fn route_mk(&self, mk: u64) -> usize {
        self.model.predict(mk, self.children.len())
    }

    /// The slot a key of model key `mk` would route to in [`Self::doubled`].
    pub(crate) fn route_doubled_mk(&self, mk: u64) -> usize {
        self.model.doubled().predict(mk, 2 * self.children.len())
    }

    /// Hints the CPU to load the link in `slot` (read by [`Self::child`]).
    #[inline]
    pub(crate) fn hint_child(&self, slot: usize) {
        crate::io::prefetch::prefetch_value(&self.children[slot]);
    }

    /// The child in `slot`.
    #[inline]
    pub(crate) fn child<'g>(&self, slot: usize, guard: &'g Guard) -> NodeRef<'g> {
        self.children[slot].load(guard)
    }

    /// The slots around `slot` that link to `child`.
    pub(crate) fn slot_range(
        &self,
        slot: usize,
        child: NodeRef<'_>,
        guard: &Guard,
    ) -> RangeInclusive<usize> {
        let same = |s: usize| self.child(s, guard).ptr_eq(child);
        debug_assert!(same(slot));
        let mut lo = slot;
        while lo > 0 && same(lo - 1) {
            lo -= 1;
        }
        let mut hi = slot;
        while hi + 1 < self.slots() && same(hi + 1) {
            hi += 1;
        }
        lo..=hi
    }

    /// Links `node` from every slot in `range`. Writer only.
    pub(crate) fn set_range(&self, range: RangeInclusive<usize>, node: NodeRef<'_>) {
        for link in &self.children[range] {
            link.store(node);
        }
    }

    /// A copy with twice the slots, each child filling both halves of its
    /// old slots, routing every key to one of them.
    pub(crate) fn doubled(&self, guard: &Guard) -> Self {
        let children = (0..2 * self.slots()).map(|s| Link::new(self.child(s / 2, guard)));
        Self {
            proj: self.proj.clone(),
            model: self.model.doubled(),
            children: node_heap::slice_from(children),
            num_keys: AtomicUsize::new(self.keys()),
            built_keys: self.built_keys,
        }
    }

    /// The unclamped slot the model predicts for model key `mk`.
    pub(crate) fn predict_slot_mk(&self, mk: u64) -> i64 {
        self.model.predict_slot(mk)
    }

    /// A copy with `slots` slots (a power of 2 above the current count)
    /// whose new slots cover keys beyond the old domain (ALEX's root
    /// expansion): on the right (`Edge::Tail`) with the model unchanged, on
    /// the left (`Edge::Head`) with every prediction moved up by the number
    /// of new slots. Old slots keep their children; new ones link the edge
    /// child.
    pub(crate) fn extended(&self, slots: usize, edge: Edge, guard: &Guard) -> Self {
        let old = self.slots();
        let shift = slots - old;
        let model = match edge {
            Edge::Tail => self.model,
            Edge::Head => self.model.offset_by(shift as i64),
        };
        let source = |s: usize| match edge {
            Edge::Tail => s.min(old - 1),
            Edge::Head => s.saturating_sub(shift),
        };
        let children = (0..slots).map(|s| Link::new(self.child(source(s), guard)));
        Self {
            proj: self.proj.clone(),
            model,
            children: node_heap::slice_from(children),
            num_keys: AtomicUsize::new(self.keys()),
            built_keys: self.built_keys,
        }
    }

    /// Keys in the subtree.
    pub(crate) fn keys(&self) -> usize {
        self.num_keys.load(Ordering::Relaxed)
    }

    /// Records that the subtree gained (`true`) or lost one key. Writer
    /// only, so a plain load and store suffice (no locked read-modify-write).
    pub(crate) fn count_key(&self, added: bool) {
        let keys = self.keys();
        let keys = if added { keys + 1 } else { keys - 1 };
        self.num_keys.store(keys, Ordering::Relaxed);
    }

    /// Records that the subtree gained `n` keys. Writer only.
    pub(crate) fn add_keys(&self, n: usize) {
        self.num_keys.store(self.keys() + n, Ordering::Relaxed);
    }

    /// Whether the subtree has at least doubled since it was built, so that
    /// rebuilding it costs O(1) amortized per insert.
    pub(crate) fn has_doubled(&self) -> bool {
        self.keys() >= 2 * self.built_keys.max(super::cost::LEAF_BUILD_MAX_KEYS / 2)
    }

    /// The distinct children, in slot order.
    pub(crate) fn unique_children<'g>(
        &self,
        guard: &'g Guard,
    ) -> impl Iterator<Item = NodeRef<'g>> {
        let mut prev: Option<NodeRef<'g>> = None;
        self.children.iter().filter_map(move |link| {
            let child = link.load(guard);
            let fresh = prev.is_none_or(|p| !p.ptr_eq(child));
            prev = Some(child);
            fresh.then_some(child)
        })
    }

    /// Heap bytes of the link array and prefix.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.children.len() * size_of::<Link>() + self.proj.heap_bytes()
    }
}
