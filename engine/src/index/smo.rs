//! The writer: copy-on-write updates of data nodes and ALEX's structure
//! modifications (expand, split sideways, double a parent, split down,
//! rebuild a subtree).
//!
//! When an insert finds its data node at `MAX_DENSITY`:
//! 1. if the node's empirical insert cost is close to what its model
//!    promised and a bigger node stays within `MAX_DATA_SLOTS`, expand it;
//! 2. else, if it is its parent's last (first) child and holds keys beyond
//!    the parent's domain (appends, or descending inserts), extend the
//!    parent's slot array on that side, every old key keeping its slot
//!    (ALEX's root expansion, at any level), and split the node in two; the
//!    edge half gets about twice the slots its keys route to and the far
//!    new slots go to a few fresh empty siblings, so that no child fills
//!    thousands of slots that every copy-on-write of it would relink;
//! 3. else, if it fills 2+ parent slots and its keys divide at a slot
//!    boundary into halves of at least 1/8, split it sideways;
//! 4. else, if the parent can double its slots and the doubled model divides
//!    the keys so, build the doubled parent (copy-on-write) with the two new
//!    nodes and swap it into the grandparent;
//! 5. else, if the leaf is `REBUILD_DEPTH` deep and an ancestor's subtree
//!    has doubled since it was built, rebuild the highest such ancestor
//!    (amortized O(1) per insert; this is what keeps appends at the right
//!    edge and drifting key distributions shallow); with rebuilds to the
//!    side enabled, an ancestor over their threshold (the engine uses
//!    `SIDE_REBUILD_KEYS`) is rebuilt by a background thread
//!    (`side_rebuild`) and the highest smaller one below it now, which
//!    bounds the time one insert holds the lock;
//! 6. else split down: the node becomes a bulk-loaded subtree.

use crossbeam_epoch::Guard;
use smallvec::SmallVec;

use super::KeyResolver;
use super::bulk_load::build_subtree;
use std::ops::RangeInclusive;

use super::cost::{self, Edge, MAX_DATA_SLOTS, MAX_INNER_SLOTS, REBUILD_DEPTH};
use super::data_node::DataNode;
use super::inner_node::InnerNode;
use super::known_keys::{Collected, Entries};
use super::node::{Link, Node, NodeRef};
use super::side_rebuild::SideRebuild;
use super::stats::Counters;

/// Most fresh empty siblings an extension creates beyond the edge child.
const MAX_EDGE_SIBLINGS: usize = 64;

/// One inner node on the path to a leaf and the slot taken.
#[derive(Clone, Copy)]
pub(crate) struct Step<'g> {
    node: NodeRef<'g>,
    slot: usize,
}

impl<'g> Step<'g> {
    /// The inner node.
    pub(crate) fn node(&self) -> NodeRef<'g> {
        self.node
    }

    fn inner(&self) -> &'g InnerNode {
        match self.node.get() {
            Node::Inner(inner) => inner,
            Node::Data(_) | Node::Packed(_) => unreachable!("path steps are inner nodes"),
        }
    }
}

/// The data node of a leaf reference known not to be packed (the writer
/// unpacks a packed leaf before any change a packed leaf cannot take).
pub(crate) fn as_data<'g>(node: NodeRef<'g>) -> &'g DataNode {
    match node.get() {
        Node::Data(data) => data,
        Node::Packed(_) => unreachable!("the writer unpacks a leaf before changing it"),
        Node::Inner(_) => unreachable!("leaves are data nodes"),
    }
}

/// The single writer's view of the tree, for one operation.
pub(crate) struct Writer<'a, 'g, R> {
    pub(crate) root: &'a Link,
    pub(crate) guard: &'g Guard,
    pub(crate) resolver: &'a R,
    pub(crate) counters: &'a Counters,
    pub(crate) side: &'a SideRebuild,
}

impl<'g, R: KeyResolver> Writer<'_, 'g, R> {
    /// The path to the leaf for `key`, and the leaf (inline up to 8
    /// levels: a write allocates nothing for it).
    pub(crate) fn descend(&self, key: &[u8]) -> (SmallVec<[Step<'g>; 8]>, NodeRef<'g>) {
        let mut path = SmallVec::new();
        let mut node = self.root.load(self.guard);
        while let Node::Inner(inner) = node.get() {
            let slot = inner.route(key);
            path.push(Step { node, slot });
            node = inner.child(slot, self.guard);
        }
        (path, node)
    }

    /// The leaf `key` routes to.
    pub(crate) fn leaf_of(&self, key: &[u8]) -> NodeRef<'g> {
        let mut node = self.root.load(self.guard);
        while let Node::Inner(inner) = node.get() {
            node = inner.child(inner.route(key), self.guard);
        }
        node
    }

    /// Counts `added` keys added to every subtree on `path`.
    pub(crate) fn count_keys(path: &[Step<'g>], added: usize) {
        if added > 0 {
            for step in path {
                step.inner().add_keys(added);
            }
        }
    }

    /// Counts a key added to or removed from every subtree on `path`.
    pub(crate) fn count_key(path: &[Step<'g>], added: bool) {
        for step in path {
            step.inner().count_key(added);
        }
    }

    /// Links `new` wherever `old` (reached through `path`) was linked, and
    /// retires `old` alone (not its children).
    pub(crate) fn replace(&self, path: &[Step<'g>], old: NodeRef<'g>, new: NodeRef<'g>) {
        self.relink(path, old, new);
        old.retire(self.guard);
    }

    /// [`Self::replace`] for a `copy` of the data node `old` with the same
    /// slot count, model and projection (it took inserts, see
    /// [`InnerNode::set_range_to_copy`]).
    pub(crate) fn replace_with_copy(&self, path: &[Step<'g>], old: NodeRef<'g>, copy: NodeRef<'g>) {
        self.relink_by(path, old, copy, InnerNode::set_range_to_copy);
        old.retire(self.guard);
    }

    fn relink(&self, path: &[Step<'g>], old: NodeRef<'g>, new: NodeRef<'g>) {
        self.relink_by(path, old, new, InnerNode::set_range);
    }

    /// Links `new` wherever `old` was: as the root, or through `link` in
    /// every parent slot that linked `old`.
    fn relink_by(
        &self,
        path: &[Step<'g>],
        old: NodeRef<'g>,
        new: NodeRef<'g>,
        link: fn(&InnerNode, RangeInclusive<usize>, NodeRef<'g>),
    ) {
        match path.last() {
            None => self.root.store(new),
            Some(step) => {
                let parent = step.inner();
                link(parent, parent.slot_range(step.slot, old, self.guard), new);
            }
        }
    }

    /// Publishes a data node.
    pub(crate) fn publish(&self, node: DataNode) -> NodeRef<'g> {
        NodeRef::publish(Node::Data(node), self.guard)
    }

    /// The leaf `leaf` (reached through `path`) as a data node: a packed
    /// leaf is unpacked (its keys read through the resolver) and the data
    /// node linked in its place.
    pub(crate) fn unpacked(&self, path: &[Step<'g>], leaf: NodeRef<'g>) -> NodeRef<'g> {
        let Node::Packed(packed) = leaf.get() else {
            return leaf;
        };
        Counters::bump(&self.counters.unpacks);
        let node = self.publish(packed.unpack(self.resolver));
        self.replace(path, leaf, node);
        node
    }

    /// Upserts `key` into the packed leaf `leaf` (reached through `path`):
    /// `Some(previous payload)` if done (the payload stored in place or a
    /// copy linked), `None` if the leaf cannot take it (the caller unpacks
    /// the leaf and retries).
    pub(crate) fn upsert_packed(
        &self,
        path: &[Step<'g>],
        leaf: NodeRef<'g>,
        key: &[u8],
        payload: u64,
    ) -> Option<Option<u64>> {
        let Node::Packed(packed) = leaf.get() else {
            unreachable!("upsert_packed is given a packed leaf")
        };
        match packed.seek_ge(key, self.resolver) {
            (Some(pos), true) => {
                let old = packed.payload_at(pos);
                self.store_packed(path, leaf, pos, payload)
                    .then_some(Some(old))
            }
            (pos, _) => {
                let pos = pos.unwrap_or(packed.len());
                let copy = packed.with_insert(key, pos, payload, self.resolver)?;
                let copy = NodeRef::publish(Node::Packed(copy), self.guard);
                self.replace(path, leaf, copy);
                Some(None)
            }
        }
    }

    /// Stores `payload` into entry `pos` of the packed leaf `leaf`: in
    /// place, or in a copy with a bigger group table. Returns false if the
    /// payload fits neither (the caller unpacks the leaf).
    pub(crate) fn store_packed(
        &self,
        path: &[Step<'g>],
        leaf: NodeRef<'g>,
        pos: usize,
        payload: u64,
    ) -> bool {
        let Node::Packed(packed) = leaf.get() else {
            unreachable!("store_packed is given a packed leaf")
        };
        if packed.store_payload(pos, payload) {
            return true;
        }
        match packed.with_payload(pos, payload) {
            Some(copy) => {
                let copy = NodeRef::publish(Node::Packed(copy), self.guard);
                self.replace(path, leaf, copy);
                true
            }
            None => false,
        }
    }

    /// Makes room in the full `leaf`; the caller then retries its insert.
    pub(crate) fn make_room(&self, path: &[Step<'g>], leaf: NodeRef<'g>) {
        let data = as_data(leaf);
        let grown = cost::slots_for(data.len() + 1);
        let edge = data.cost.busy_edge();
        if (edge.is_some() || !data.cost.degraded())
            && grown <= MAX_DATA_SLOTS
            && grown > data.slots()
        {
            Counters::bump(&self.counters.expansions);
            Counters::bump(&self.counters.retrains);
            let node = self.publish(data.resized(self.resolver, 1));
            return self.replace(path, leaf, node);
        }
        let mut collected = Collected::with_capacity(data.len());
        collected.push_node(data);
        let entries = collected.entries(self.resolver);
        if self.split_sideways(path, leaf, entries) {
            return;
        }
        if path.len() >= REBUILD_DEPTH
            && let Some(top) = self.rebuild_here(path, entries.key(0))
        {
            return self.rebuild(path, top);
        }
        Counters::bump(&self.counters.splits_down);
        let sub = build_subtree(entries, true, self.guard);
        self.replace(path, leaf, sub);
    }

    /// The highest ancestor on `path` that has doubled, to rebuild now;
    /// with rebuilds to the side on, the highest that holds at most their
    /// threshold of keys and lies below any frozen node; a doubled
    /// ancestor above it, too big to rebuild under the lock, is requested
    /// to the side (`side_rebuild`). `key` is on the path.
    fn rebuild_here(&self, path: &[Step<'g>], key: &[u8]) -> Option<usize> {
        let Some(cap) = self.side.above() else {
            return path.iter().position(|s| s.inner().has_doubled());
        };
        let frozen = path.iter().position(|s| self.side.is_frozen(s.node));
        let eligible = |i: usize| frozen.is_none_or(|f| i > f);
        let doubled = |i: &usize| path[*i].inner().has_doubled();
        let small = |i: &usize| path[*i].inner().keys() <= cap;
        let here = (0..path.len()).find(|i| doubled(i) && small(i) && eligible(*i));
        let big = (0..here.unwrap_or(path.len())).find(|i| doubled(i) && !small(i));
        if let Some(big) = big
            && frozen.is_none()
        {
            let keys = path[big].inner().keys();
            self.side.request(path[big].node, big, key, keys);
        }
        here
    }

    /// Splits `leaf` in two at a parent slot boundary, doubling the parent
    /// if needed. Returns false if no boundary divides the keys well.
    fn split_sideways(
        &self,
        path: &[Step<'g>],
        leaf: NodeRef<'g>,
        entries: Entries<'_, R>,
    ) -> bool {
        let edge = as_data(leaf).cost.busy_edge();
        let Some((step, above)) = path.split_last() else {
            return false;
        };
        let parent = step.inner();
        let range = parent.slot_range(step.slot, leaf, self.guard);
        // Extending or doubling replaces the parent: not while it is frozen.
        let frozen = self.side.is_frozen(step.node);
        // The keys' model keys in the parent, which doubling and extending
        // keep.
        let mks = entries.model_keys(parent.proj());
        if !frozen && self.split_extending(above, step, leaf, range.clone(), entries, &mks) {
            return true;
        }
        if range.start() < range.end() {
            let slots: Vec<usize> = mks.iter().map(|&mk| parent.route_mk(mk)).collect();
            if let Some(cut) = balanced_cut(&slots) {
                let (left, right) = self.halves(entries, cut, edge);
                parent.set_range(*range.start()..=slots[cut] - 1, left);
                parent.set_range(slots[cut]..=*range.end(), right);
                leaf.retire(self.guard);
                Counters::bump(&self.counters.splits_sideways);
                return true;
            }
        }
        if frozen || 2 * parent.slots() > MAX_INNER_SLOTS {
            return false;
        }
        let slots: Vec<usize> = mks.iter().map(|&mk| parent.route_doubled_mk(mk)).collect();
        let Some(cut) = balanced_cut(&slots) else {
            return false;
        };
        let doubled = parent.doubled(self.guard);
        let (left, right) = self.halves(entries, cut, edge);
        doubled.set_range(2 * range.start()..=slots[cut] - 1, left);
        doubled.set_range(slots[cut]..=2 * range.end() + 1, right);
        let doubled = NodeRef::publish(Node::Inner(doubled), self.guard);
        self.replace(above, step.node, doubled);
        leaf.retire(self.guard);
        Counters::bump(&self.counters.parent_doublings);
        Counters::bump(&self.counters.splits_sideways);
        true
    }

    /// When the first or last child of a parent overflows with keys beyond
    /// the parent's domain (prepends or appends), extends the parent's slot
    /// array on that side, keeping every old key in its old slot, and
    /// splits the child in two, the edge half next to the new slots, which
    /// it shares with fresh empty siblings ([`Self::link_edge_siblings`]).
    /// Returns false if that does not apply.
    fn split_extending(
        &self,
        above: &[Step<'g>],
        step: &Step<'g>,
        leaf: NodeRef<'g>,
        range: RangeInclusive<usize>,
        entries: Entries<'_, R>,
        mks: &[u64],
    ) -> bool {
        let parent = step.inner();
        let old = parent.slots();
        let (Some(&first), Some(&last)) = (mks.first(), mks.last()) else {
            return false;
        };
        let (high, low) = (parent.predict_slot_mk(last), parent.predict_slot_mk(first));
        let (edge, needed) = if *range.end() == old - 1 && high >= old as i64 {
            (Edge::Tail, high.saturating_add(1))
        } else if *range.start() == 0 && low < 0 {
            (Edge::Head, (old as i64).saturating_sub(low))
        } else {
            return false;
        };
        if needed > MAX_INNER_SLOTS as i64 {
            return false;
        }
        let slots = (2 * old).max((needed as usize).next_power_of_two());
        if slots > MAX_INNER_SLOTS {
            return false;
        }
        let extended = parent.extended(slots, edge, self.guard);
        let covered = match edge {
            Edge::Tail => *range.start()..=slots - 1,
            Edge::Head => 0..=*range.end() + (slots - old),
        };
        let routed: Vec<usize> = mks.iter().map(|&mk| extended.route_mk(mk)).collect();
        let Some(cut) = balanced_cut(&routed) else {
            return false;
        };
        let (left, right) = self.halves(entries, cut, Some(edge));
        // The edge child keeps `span` free slots beyond the `span` its keys
        // route to; the far new slots go to fresh empty siblings (see
        // `link_edge_siblings`).
        match edge {
            Edge::Tail => {
                let span = routed[routed.len() - 1] - routed[cut] + 1;
                let end = (routed[cut] + 2 * span - 1).min(*covered.end());
                extended.set_range(*covered.start()..=routed[cut] - 1, left);
                extended.set_range(routed[cut]..=end, right);
                self.link_edge_siblings(&extended, end + 1..=*covered.end(), span, right, edge);
            }
            Edge::Head => {
                let span = routed[cut - 1] - routed[0] + 1;
                let start = routed[0].saturating_sub(span).max(*covered.start());
                extended.set_range(start..=routed[cut] - 1, left);
                extended.set_range(routed[cut]..=*covered.end(), right);
                if start > *covered.start() {
                    let far = *covered.start()..=start - 1;
                    self.link_edge_siblings(&extended, far, span, left, edge);
                }
            }
        }
        let extended = NodeRef::publish(Node::Inner(extended), self.guard);
        self.replace(above, step.node, extended);
        leaf.retire(self.guard);
        Counters::bump(&self.counters.extensions);
        Counters::bump(&self.counters.splits_sideways);
        true
    }

    /// Links the new slots `far` of an extended (unpublished) `parent`,
    /// beyond the edge child `near` whose keys route to `span` slots, to
    /// fresh empty data nodes with `near`'s projection, each filling at
    /// least `2 * span` slots and at most `MAX_EDGE_SIBLINGS` of them in
    /// all. Without them the edge child would fill every new slot (up to
    /// half the parent), and every copy-on-write of it would relink them
    /// all; this bounds that to about `slots / MAX_EDGE_SIBLINGS`.
    fn link_edge_siblings(
        &self,
        parent: &InnerNode,
        far: RangeInclusive<usize>,
        span: usize,
        near: NodeRef<'g>,
        edge: Edge,
    ) {
        if far.is_empty() {
            return;
        }
        let len = far.end() - far.start() + 1;
        let width = (2 * span).max(len.div_ceil(MAX_EDGE_SIBLINGS));
        let proj = &as_data(near).proj;
        for i in 0..len.div_ceil(width) {
            // Pieces are laid out from the edge child outwards.
            let (lo, hi) = match edge {
                Edge::Tail => {
                    let lo = far.start() + i * width;
                    (lo, (lo + width - 1).min(*far.end()))
                }
                Edge::Head => {
                    let hi = far.end() - i * width;
                    (hi.saturating_sub(width - 1).max(*far.start()), hi)
                }
            };
            parent.set_range(lo..=hi, self.publish(DataNode::empty_with(proj.clone())));
        }
    }

    /// Two new data nodes: the entries before `cut` and the rest. The one
    /// at a busy `edge` (the right one for appends, the left one for
    /// prepends) keeps room there.
    fn halves(
        &self,
        entries: Entries<'_, R>,
        cut: usize,
        edge: Option<Edge>,
    ) -> (NodeRef<'g>, NodeRef<'g>) {
        Counters::bump(&self.counters.retrains);
        Counters::bump(&self.counters.retrains);
        let head = edge.filter(|&e| e == Edge::Head);
        let tail = edge.filter(|&e| e == Edge::Tail);
        let left = DataNode::from_entries(entries.slice(0..cut), head);
        let right = DataNode::from_entries(entries.slice(cut..entries.len()), tail);
        (self.publish(left), self.publish(right))
    }

    /// Rebuilds the subtree of `path[top]` by bulk loading its entries.
    fn rebuild(&self, path: &[Step<'g>], top: usize) {
        let old = path[top].node;
        let mut collected = Collected::with_capacity(path[top].inner().keys());
        collect_entries(old, self.guard, &mut collected);
        let new = build_subtree(collected.entries(self.resolver), false, self.guard);
        self.relink(&path[..top], old, new);
        retire_subtree(old, self.guard);
        Counters::bump(&self.counters.rebuilds);
        self.counters.note_rebuild(collected.len());
    }
}

/// The index `i` (`0 < i < len`) where `slots[i - 1] < slots[i]` that is
/// closest to the middle, if both sides keep at least 1/8 of the entries.
pub(crate) fn balanced_cut(slots: &[usize]) -> Option<usize> {
    let n = slots.len();
    let min_side = (n / 8).max(1);
    let mid = n / 2;
    let right = (mid.max(1)..n).find(|&i| slots[i - 1] != slots[i]);
    let left = (1..=mid.min(n.saturating_sub(1)))
        .rev()
        .find(|&i| slots[i - 1] != slots[i]);
    let best = match (left, right) {
        (Some(l), Some(r)) => Some(if mid - l <= r - mid { l } else { r }),
        (l, r) => l.or(r),
    }?;
    (best >= min_side && n - best >= min_side).then_some(best)
}

/// Appends the entries under `node` in key order.
pub(crate) fn collect_entries(node: NodeRef<'_>, guard: &Guard, out: &mut Collected) {
    match node.get() {
        Node::Data(data) => out.push_node(data),
        Node::Packed(packed) => out.push_unknown(&packed.payloads_in_order()),
        Node::Inner(inner) => {
            for child in inner.unique_children(guard) {
                collect_entries(child, guard, out);
            }
        }
    }
}

/// Retires `node` and everything under it.
pub(crate) fn retire_subtree(node: NodeRef<'_>, guard: &Guard) {
    if let Node::Inner(inner) = node.get() {
        for child in inner.unique_children(guard) {
            retire_subtree(child, guard);
        }
    }
    node.retire(guard);
}

#[cfg(test)]
mod tests {
    use super::balanced_cut;

    #[test]
    fn cuts_near_the_middle_or_not_at_all() {
        assert_eq!(balanced_cut(&[1, 1, 2, 2, 2, 3, 3, 3]), Some(5));
        assert_eq!(balanced_cut(&[4; 16]), None);
        let mut skewed = vec![0; 15];
        skewed.push(1);
        assert_eq!(balanced_cut(&skewed), None);
        assert_eq!(balanced_cut(&[0, 1]), Some(1));
    }
}
