//! Changes of data nodes. Structural changes are copy-on-write: each
//! `with_*` returns a new node and leaves the published one untouched, and
//! the in-place forms (`insert`, `set_payload`) are for private copies that
//! are not published yet, so a batch of changes to one node costs one copy.
//! An overwrite of an existing key's payload is the exception: it is stored
//! into the published node ([`DataNode::store_payload`]).

use super::KeyResolver;
use super::bitmap;
use super::cost::{self, Edge, MIN_DATA_SLOTS, MIN_DENSITY};
use super::data_node::{DataNode, Slot};

impl DataNode {
    /// Replaces the payload of occupied slot `pos` in a published node,
    /// for an overwrite: the entry's slot first, then the gap copies before
    /// it, right to left. A concurrent reader sees, for this entry, either
    /// payload; both name a head of the key's version chain (the old one is
    /// the new one's `prev`), and the new record is written before the store
    /// (`Release`, paired with the readers' `Acquire`). A reader that finds
    /// the entry's run holding two payloads takes the bitmap path to the
    /// entry slot. The caller must be the index's (serialized) writer.
    pub(crate) fn store_payload(&self, pos: usize, payload: u64) {
        debug_assert!(self.is_occupied(pos));
        self.array[pos].store_payload(payload);
        let mut gap = pos;
        while gap > 0 && !bitmap::get(&self.bits, gap - 1) {
            gap -= 1;
            self.array[gap].store_payload(payload);
        }
    }

    /// Replaces the payload in occupied slot `pos` of an unpublished node
    /// (and in the gaps before it, which are copies).
    pub(crate) fn set_payload(&mut self, pos: usize, payload: u64) {
        debug_assert!(self.is_occupied(pos));
        self.array[pos].set_payload(payload);
        self.fill_gaps_before(pos);
    }

    /// Makes the gaps right before slot `pos` copies of it.
    fn fill_gaps_before(&mut self, pos: usize) {
        let mut gap = pos;
        while gap > 0 && !bitmap::get(&self.bits, gap - 1) {
            gap -= 1;
            self.array[gap] = self.array[pos].clone();
        }
    }

    /// A copy with a new entry inserted, see [`Self::insert`].
    pub(crate) fn with_insert(
        &self,
        mk: u64,
        payload: u64,
        succ: Option<usize>,
        iters: u32,
    ) -> Self {
        let mut node = self.clone();
        node.insert(mk, payload, succ, iters);
        node
    }

    /// Places a new entry of model key `mk` before the occupied slot `succ`
    /// (the first entry greater than the new key; `None` when there is
    /// none) of an unpublished node. `iters` is what the search cost, for
    /// the tracker. The node must not be full.
    pub(crate) fn insert(&mut self, mk: u64, payload: u64, succ: Option<usize>, iters: u32) {
        let slots = self.slots();
        debug_assert!(self.num_keys < slots);
        let succ = succ.unwrap_or(slots);
        let pred = self.prev_occupied(succ);
        let first_free = pred.map_or(0, |p| p + 1);
        let (pos, shifts) = if first_free < succ {
            // Keys beyond the model's range (appends) go right after their
            // predecessor, leaving the gaps after them for the next ones;
            // keys before it (prepends) right before their successor.
            let guess = self.model.predict_slot(mk);
            let pos = if guess >= slots as i64 {
                first_free
            } else if guess < 0 {
                succ - 1
            } else {
                (guess as usize).clamp(first_free, succ - 1)
            };
            (pos, 0)
        } else {
            self.open_slot(succ)
        };
        self.array[pos] = Slot::new(mk, payload);
        bitmap::set(&mut self.bits, pos);
        self.fill_gaps_before(pos);
        self.num_keys += 1;
        let edge = if succ == slots {
            Some(Edge::Tail)
        } else if pred.is_none() {
            Some(Edge::Head)
        } else {
            None
        };
        self.cost.record(iters, shifts as u32, edge);
    }

    /// Frees a slot for a key that belongs right before occupied slot
    /// `succ` (or at the end) when no gap is there, by shifting the entries
    /// between it and the nearest gap by one. Returns the freed slot, now
    /// marked unoccupied-but-about-to-be-written, and the number of moves.
    fn open_slot(&mut self, succ: usize) -> (usize, usize) {
        let slots = self.slots();
        let right = bitmap::next_clear(&self.bits, succ, slots);
        let left = succ
            .checked_sub(1)
            .and_then(|p| bitmap::prev_clear(&self.bits, p));
        let use_right = match (left, right) {
            (Some(l), Some(r)) => r - succ < succ - l,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if use_right {
            let r = right.unwrap_or(slots);
            // Moves slots succ..r one to the right; slot succ is rewritten.
            self.array[succ..=r].rotate_right(1);
            bitmap::set(&mut self.bits, r);
            (succ, r - succ)
        } else {
            let l = left.unwrap_or(0);
            // Moves slots l+1..succ one to the left; slot succ-1 is rewritten.
            self.array[l..succ].rotate_left(1);
            bitmap::set(&mut self.bits, l);
            (succ - 1, succ - 1 - l)
        }
    }

    /// A copy without the entry in occupied slot `pos`.
    pub(crate) fn with_remove(&self, pos: usize) -> Self {
        let mut node = self.clone();
        let next = node
            .next_occupied(pos + 1)
            .map_or_else(Slot::tail_gap, |p| node.array[p].clone());
        bitmap::clear(&mut node.bits, pos);
        let mut gap = pos + 1;
        while gap > 0 && !bitmap::get(&node.bits, gap - 1) {
            gap -= 1;
            node.array[gap] = next.clone();
        }
        node.num_keys -= 1;
        node
    }

    /// Whether the node is so sparse it should contract.
    pub(crate) fn is_sparse(&self) -> bool {
        self.slots() > MIN_DATA_SLOTS
            && (self.num_keys as f64) < self.slots() as f64 * MIN_DENSITY
            && cost::slots_for(self.num_keys) < self.slots()
    }

    /// Whether more than one entry has a clamped model key (`0` or
    /// `u64::MAX`): the keys have outgrown the node's prefix.
    fn has_clamped_ties(&self) -> bool {
        let low = self.next_occupied(0).is_some_and(|p| {
            self.mk_at(p) == 0
                && self
                    .next_occupied(p + 1)
                    .is_some_and(|q| self.mk_at(q) == 0)
        });
        let high = self.prev_occupied(self.slots()).is_some_and(|p| {
            self.mk_at(p) == u64::MAX
                && self
                    .prev_occupied(p)
                    .is_some_and(|q| self.mk_at(q) == u64::MAX)
        });
        low || high
    }

    /// The node rebuilt at the initial density with a retrained model (an
    /// ALEX expansion or contraction). Keeps the prefix and the stored model
    /// keys, so it needs no key lookups, unless the keys have outgrown the
    /// prefix; then it recomputes both through `resolver`.
    pub(crate) fn resized<R: KeyResolver>(&self, resolver: &R, extra: usize) -> Self {
        let payloads = self.payloads_in_order();
        if self.has_clamped_ties() {
            let keys: Vec<&[u8]> = payloads.iter().map(|&p| resolver.key(p)).collect();
            let proj = match (keys.first(), keys.last()) {
                (Some(f), Some(l)) => super::projection::Projection::for_range(f, l),
                _ => Default::default(),
            };
            let mks: Vec<u64> = keys.iter().map(|k| proj.model_key(k)).collect();
            return Self::from_sorted(
                proj,
                &mks,
                &payloads,
                cost::slots_for(payloads.len() + extra),
            );
        }
        let mut mks = Vec::with_capacity(self.num_keys);
        mks.extend(self.occupied().map(|s| s.mk));
        if let Some(edge) = self.cost.busy_edge().filter(|_| extra > 0) {
            return Self::with_edge_room(self.proj.clone(), &mks, &payloads, edge);
        }
        Self::from_sorted(
            self.proj.clone(),
            &mks,
            &payloads,
            cost::slots_for(payloads.len() + extra),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::data_node::tests::{Keys, node_of};
    use super::super::known_keys::Entries;
    use super::*;

    fn check(node: &DataNode, keys: &Keys, live: &[u64]) {
        assert_eq!(node.payloads_in_order(), live);
        assert!(node.array.windows(2).all(|w| w[0].mk <= w[1].mk));
        // Every gap is a copy of the next entry (or the tail gap).
        for pos in 0..node.slots() {
            if !node.is_occupied(pos) {
                let next = node
                    .next_occupied(pos)
                    .map_or_else(Slot::tail_gap, |p| node.array[p].clone());
                assert_eq!(node.array[pos], next, "gap {pos}");
            }
        }
        for &p in live {
            assert_eq!(node.get(&keys.0[p as usize], keys), Some(p));
        }
    }

    fn insert(node: &DataNode, keys: &Keys, p: u64) -> DataNode {
        let k = &keys.0[p as usize];
        let mk = node.model_key(k);
        let (succ, found, iters) = node.seek_ge(k, mk, keys);
        assert!(!found);
        node.with_insert(mk, p, succ, iters)
    }

    #[test]
    fn inserts_and_removes_keep_order() {
        // Even keys are built in, odd ones inserted, forcing shifts in packed runs.
        let keys = Keys(
            (0..120u64)
                .map(|i| (i * 3).to_be_bytes().to_vec())
                .collect(),
        );
        let built: Vec<u64> = (0..120).step_by(2).collect();
        let mut node = DataNode::from_entries(Entries::unknown(&built, &keys), None);
        let mut live = built.clone();
        for p in (1..120).step_by(2) {
            if node.is_full() {
                node = node.resized(&keys, 1);
            }
            node = insert(&node, &keys, p);
            live.push(p);
            live.sort_unstable();
            check(&node, &keys, &live);
        }
        for p in (0..120).step_by(3) {
            let (pos, found, _) = node.seek_ge(
                &keys.0[p as usize],
                node.model_key(&keys.0[p as usize]),
                &keys,
            );
            assert!(found);
            node = node.with_remove(pos.unwrap_or_default());
            live.retain(|&x| x != p);
            check(&node, &keys, &live);
        }
        let small = node.resized(&keys, 0);
        check(&small, &keys, &live);
    }

    #[test]
    fn appends_beyond_prefix_recompute_it() {
        let keys = Keys(
            (0..40u64)
                .map(|i| format!("k:{:04}", i * 50).into_bytes())
                .collect(),
        );
        let first: Vec<u64> = (0..4).collect();
        let mut node = node_of(&Keys(keys.0[..4].to_vec()));
        let mut live = first;
        for p in 4..40 {
            if node.is_full() {
                node = node.resized(&keys, 1);
            }
            node = insert(&node, &keys, p);
            live.push(p);
            check(&node, &keys, &live);
        }
    }
}
