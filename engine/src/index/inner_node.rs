//! ALEX inner nodes: a linear model over a power-of-2 array of child links.
//!
//! A child may fill several consecutive slots. The writer updates the links
//! in place (a reader sees either the old or the new child of a slot, both
//! complete); everything else about an inner node is fixed once published.
//!
//! Beside each link a slot keeps a search hint (`search_hint.rs`).

use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_epoch::Guard;

use super::cost::Edge;
use super::data_node::DataNode;
use super::model::LinearModel;
use super::node::Node;
use super::node::{Link, NodeRef};
use super::node_heap::{self, HeapBox};
use super::projection::Projection;
use super::search_hint::{SearchHint, equal_share};

/// An inner node.
#[derive(Debug)]
pub(crate) struct InnerNode {
    proj: Projection,
    model: LinearModel,
    children: HeapBox<[Link]>,
    /// One search hint per slot.
    hints: HeapBox<[SearchHint]>,
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
            hints: no_hints(children.len()),
            children: node_heap::slice_from(children),
            num_keys: AtomicUsize::new(num_keys),
            built_keys: num_keys,
        }
        .with_hints()
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

    /// Links `node` from every slot in `range` (all of the slots that link
    /// it). Writer only.
    pub(crate) fn set_range(&self, range: RangeInclusive<usize>, node: NodeRef<'_>) {
        for link in &self.children[range.clone()] {
            link.store(node);
        }
        self.set_hints(range, node);
    }

    /// Links `copy` from every slot in `range` in place of the data node
    /// those slots link, of which it is a copy with the same slot count,
    /// model and projection (a node copied to take an insert): the hints'
    /// lines still hold and only move to the copy's array. Writer only.
    pub(crate) fn set_range_to_copy(&self, range: RangeInclusive<usize>, copy: NodeRef<'_>) {
        for link in &self.children[range.clone()] {
            link.store(copy);
        }
        match copy.get() {
            Node::Data(data) => self.hints[range].iter().for_each(|h| h.move_to(data)),
            _ => self.set_hints(range, copy),
        }
    }

    /// Sets the search hints of `range`, the slots linking `child`.
    fn set_hints(&self, range: RangeInclusive<usize>, child: NodeRef<'_>) {
        let data = match child.get() {
            Node::Data(data) if data.slots() > 0 => data,
            _ => return self.hints[range].iter().for_each(SearchHint::clear),
        };
        let width = range.end() - range.start() + 1;
        // Each slot's end is the next one's start: one model line value
        // per edge.
        let mut start = self.line_at(data, *range.start());
        for slot in range.clone() {
            let end = self.line_at(data, slot + 1);
            let share = start
                .zip(end)
                .unwrap_or_else(|| equal_share(data.slots(), slot - range.start(), width));
            self.hints[slot].set(data, share);
            start = end;
        }
    }

    /// This node with the search hints of all its slots set.
    fn with_hints(self) -> Self {
        let guard = crossbeam_epoch::pin();
        let mut start = 0;
        while start < self.slots() {
            let child = self.child(start, &guard);
            let mut end = start;
            while end + 1 < self.slots() && self.child(end + 1, &guard).ptr_eq(child) {
                end += 1;
            }
            self.set_hints(start..=end, child);
            start = end + 1;
        }
        self
    }

    /// The position in `data`'s slot array its model gives the key this
    /// node's line puts at the start of `slot` (unclamped), if both models
    /// and the projections allow it.
    fn line_at(&self, data: &DataNode, slot: usize) -> Option<f64> {
        let mk = self.model.model_key_at(slot as f64)?;
        let mk = data.proj.narrowed_from(&self.proj, mk)?;
        Some(data.model.predict_f64(mk))
    }

    /// The slot `key` routes to, after hinting the CPU to load the line of
    /// the child's slot array its search will most likely start at (see
    /// `search_hint.rs`).
    #[inline]
    pub(crate) fn route_hinting(&self, key: &[u8]) -> usize {
        let (slot, hinted) = self.route_and_hint(key);
        if let Some(at) = hinted {
            crate::io::prefetch::prefetch_address(at as *const u8);
        }
        slot
    }

    /// The slot `key` routes to and the address its search hint gives.
    #[inline]
    fn route_and_hint(&self, key: &[u8]) -> (usize, Option<usize>) {
        let mk = self.proj.model_key(key);
        let (slot, within) = self.model.predict_within(mk, self.children.len());
        (slot, self.hints[slot].target(within))
    }

    /// The address the search hint gives for `key` (tests).
    #[cfg(test)]
    pub(crate) fn hinted_address(&self, key: &[u8]) -> Option<usize> {
        self.route_and_hint(key).1
    }

    /// A copy with twice the slots, each child filling both halves of its
    /// old slots, routing every key to one of them.
    pub(crate) fn doubled(&self, guard: &Guard) -> Self {
        let children = (0..2 * self.slots()).map(|s| Link::new(self.child(s / 2, guard)));
        // The same line over twice the slots: each hint splits in two
        // (not recomputed: that would read every child under the lock).
        let hints = (0..2 * self.slots()).map(|s| self.hints[s / 2].part(s % 2, 2));
        Self {
            proj: self.proj.clone(),
            model: self.model.doubled(),
            hints: node_heap::slice_from(hints),
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
        // Old slots keep their hints (the line moves with them); the new
        // ones link the edge child and get theirs from its model.
        let kept = |s: usize| match edge {
            Edge::Tail => (s < old).then_some(s),
            Edge::Head => s.checked_sub(shift),
        };
        let hints = (0..slots)
            .map(|s| kept(s).map_or_else(SearchHint::default, |k| self.hints[k].part(0, 1)));
        let node = Self {
            proj: self.proj.clone(),
            model,
            hints: node_heap::slice_from(hints),
            children: node_heap::slice_from(children),
            num_keys: AtomicUsize::new(self.keys()),
            built_keys: self.built_keys,
        };
        let added = match edge {
            Edge::Tail => old..=slots - 1,
            Edge::Head => 0..=shift - 1,
        };
        let edge_child = node.child(*added.start(), guard);
        node.set_hints(added, edge_child);
        node
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
        self.children.len() * (size_of::<Link>() + size_of::<SearchHint>()) + self.proj.heap_bytes()
    }
}

/// Search hints all empty, to be set.
fn no_hints(slots: usize) -> HeapBox<[SearchHint]> {
    node_heap::slice_from((0..slots).map(|_| SearchHint::default()))
}
