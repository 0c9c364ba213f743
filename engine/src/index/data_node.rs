//! ALEX data nodes: immutable gapped arrays of model keys and payloads.
//!
//! Layout: an array of `slots` [`Slot`]s, each a model key and its payload
//! side by side (16 bytes, 16-aligned, so one never straddles a cache
//! line), plus a separate occupancy bitmap. A gap holds a copy of the next
//! occupied slot (model key `u64::MAX` after the last one), so the model
//! keys are sorted and can be searched without looking at the bitmap, and
//! since payloads are unique among entries, a run of slots with one model
//! key and one payload is a single entry: lookups need the bitmap only for
//! model-key ties.
//! Entries are in full-key order; equal model keys are ordered by the full
//! keys they stand for.
//!
//! A lookup reads the node header (the projection, the array pointer and
//! the model sit in the first cache line of the 64-aligned [`Node`]), then
//! the line of the predicted slot, which holds the payload too: two cache
//! misses per data node when the model is accurate.
//!
//! A published data node is never modified, with one exception: an
//! overwrite stores the new payload into the entry's slot and its gap
//! copies ([`DataNode::store_payload`]). Every other change builds a copy
//! (`data_write.rs`).
//!
//! [`Node`]: super::node::Node

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use super::KeyResolver;
use super::bitmap;
use super::cost::{self, CostTracker, Edge, MAX_DATA_SLOTS, MAX_DENSITY, MIN_DATA_SLOTS};
use super::known_keys::Entries;
use super::model::LinearModel;
use super::node_heap::{self, HeapBox};
use super::projection::Projection;

/// One slot of a gapped array: a model key and its payload.
///
/// The payload is atomic because an overwrite replaces it in a published
/// node ([`DataNode::store_payload`]) instead of copying the node; readers
/// load it with `Acquire`, which on x86-64 is a plain load.
#[repr(C, align(16))]
pub(crate) struct Slot {
    /// The entry's model key, or in a gap the next entry's.
    pub(crate) mk: u64,
    /// The entry's payload (in a gap, a copy of the next entry's).
    payload: AtomicU64,
}

impl Slot {
    /// A slot holding `mk` and `payload`.
    pub(crate) const fn new(mk: u64, payload: u64) -> Self {
        Slot {
            mk,
            payload: AtomicU64::new(payload),
        }
    }

    /// A gap past the last entry.
    pub(crate) const fn tail_gap() -> Self {
        Slot::new(u64::MAX, 0)
    }

    /// The payload, as published.
    #[inline]
    pub(crate) fn payload(&self) -> u64 {
        self.payload.load(AtomicOrdering::Acquire)
    }

    /// Sets the payload of a slot of an unpublished node.
    pub(crate) fn set_payload(&mut self, payload: u64) {
        *self.payload.get_mut() = payload;
    }

    /// Publishes a new payload in a published node.
    pub(crate) fn store_payload(&self, payload: u64) {
        self.payload.store(payload, AtomicOrdering::Release);
    }
}

impl Clone for Slot {
    fn clone(&self) -> Self {
        Slot::new(self.mk, self.payload())
    }
}

/// A copy of `slots` in the index's heap, for a private copy of a node.
///
/// Allocated once and filled by a plain loop: the generic boxed-slice
/// clone went element by element through `Slot::clone` and a growing
/// vector, and was a quarter of an insert's instructions (new keys into one
/// range). The payloads are loaded as readers load them (`Acquire`, a plain
/// load on x86-64), so a copy published later carries the records'
/// visibility with it.
fn copy_slots(slots: &[Slot]) -> HeapBox<[Slot]> {
    node_heap::slice_from_exact(slots.iter().map(|s| Slot::new(s.mk, s.payload())))
}

impl PartialEq for Slot {
    fn eq(&self, other: &Self) -> bool {
        self.mk == other.mk && self.payload() == other.payload()
    }
}

impl Eq for Slot {}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("mk", &self.mk)
            .field("payload", &self.payload())
            .finish()
    }
}

/// A gapped-array leaf, immutable once published except for overwrites
/// ([`DataNode::store_payload`]).
///
/// `repr(C)`: the fields every lookup reads (`proj`, with a prefix of up to
/// 22 bytes kept inline, `array`, and the model's line, whose integer offset
/// is always 0 in data nodes and is not read) come first: with the [`Node`]
/// tag they fill the node's first cache line and the first 8 bytes of the
/// second. Measured (1M `user:profile:` keys, zero-copy gets): the prefix in
/// this line, not in the heap, saves about 13% a get; putting the model
/// first and the projection last, all lookup fields but the prefix's bytes
/// in the first line, saved nothing.
///
/// [`Node`]: super::node::Node
#[derive(Debug)]
#[repr(C)]
pub(crate) struct DataNode {
    pub(super) proj: Projection,
    /// The gapped array; its length is the node's slot count.
    pub(super) array: HeapBox<[Slot]>,
    pub(super) model: LinearModel,
    /// Occupancy bitmap of `array`.
    pub(super) bits: HeapBox<[u64]>,
    pub(super) num_keys: usize,
    pub(super) cost: CostTracker,
}

impl Clone for DataNode {
    /// A private copy, to change before publishing it (copy-on-write).
    fn clone(&self) -> Self {
        DataNode {
            proj: self.proj.clone(),
            array: copy_slots(&self.array),
            model: self.model,
            bits: node_heap::slice_from(self.bits.iter().copied()),
            num_keys: self.num_keys,
            cost: self.cost,
        }
    }
}

impl DataNode {
    /// An empty node of the minimum size.
    pub(crate) fn empty() -> Self {
        Self::empty_with(Projection::default())
    }

    /// An empty node of the minimum size with projection `proj` (a fresh
    /// sibling for keys near a neighbour's, which share its prefix).
    pub(crate) fn empty_with(proj: Projection) -> Self {
        Self::from_sorted(proj, &[], &[], MIN_DATA_SLOTS)
    }

    /// A node of `entries` (sorted; their handles are the payloads), sized
    /// for the initial density, with its projection computed from the keys.
    /// With `edge`, see [`Self::with_edge_room`].
    pub(crate) fn from_entries<R: KeyResolver>(
        entries: Entries<'_, R>,
        edge: Option<Edge>,
    ) -> Self {
        let proj = entries.projection();
        let mks = entries.model_keys(&proj);
        let payloads = entries.handles();
        match edge {
            Some(edge) => Self::with_edge_room(proj, &mks, &payloads, edge),
            None => Self::from_sorted(proj, &mks, &payloads, cost::slots_for(mks.len())),
        }
    }

    /// A node for a key range that receives inserts at one `edge`: the keys
    /// fill the other end of the array at the initial density and the model
    /// extends over the free part, so new edge keys land at their predicted
    /// slots instead of piling up against the end of a full array.
    pub(crate) fn with_edge_room(
        proj: Projection,
        mks: &[u64],
        payloads: &[u64],
        edge: Edge,
    ) -> Self {
        let span = cost::slots_for(mks.len());
        let slots = (2 * span).min(MAX_DATA_SLOTS).max(span);
        let model = LinearModel::fit(mks, span as f64);
        let model = match edge {
            Edge::Tail => model,
            Edge::Head => model.shifted((slots - span) as f64),
        };
        Self::build(proj, mks, payloads, model, slots)
    }

    /// See [`Self::build`]; the model spans the whole array.
    pub(crate) fn from_sorted(
        proj: Projection,
        mks: &[u64],
        payloads: &[u64],
        slots: usize,
    ) -> Self {
        let model = LinearModel::fit(mks, slots as f64);
        Self::build(proj, mks, payloads, model, slots)
    }

    /// Builds a node of `slots` slots from entries sorted by key, with their
    /// model keys `mks`, by model-based placement: each key goes to the slot
    /// `model` predicts unless that would break the order or leave too
    /// little room for the keys after it.
    fn build(
        proj: Projection,
        mks: &[u64],
        payloads: &[u64],
        model: LinearModel,
        slots: usize,
    ) -> Self {
        let n = mks.len();
        debug_assert!(n <= slots && n == payloads.len());
        let mut array = node_heap::slice_of(slots, Slot::tail_gap());
        let mut bits = node_heap::slice_of(bitmap::words_for(slots), 0u64);
        let mut next_free = 0;
        let mut iters = 0.0;
        for (i, (&mk, &payload)) in mks.iter().zip(payloads).enumerate() {
            let pos = model
                .predict_local(mk, slots)
                .max(next_free)
                .min(slots - (n - i));
            iters += cost::search_iters(model.predict_f64(mk) - pos as f64);
            // The slot, and copies of it in the gaps before it.
            array[next_free..=pos].fill(Slot::new(mk, payload));
            bitmap::set(&mut bits, pos);
            next_free = pos + 1;
        }
        let expected_iters = if n == 0 { 0.0 } else { iters / n as f64 };
        let mut node = Self {
            proj,
            array,
            model,
            bits,
            num_keys: n,
            cost: CostTracker::default(),
        };
        let expected =
            cost::SEARCH_ITER_NS * expected_iters + cost::SHIFT_NS * node.expected_shifts();
        node.cost = CostTracker::new(expected);
        node
    }

    /// Expected slots moved by an insert: an insert into a packed run of `r`
    /// keys moves about `r / 4` of them, and lands there with chance `r / n`.
    fn expected_shifts(&self) -> f64 {
        if self.num_keys == 0 {
            return 0.0;
        }
        let (mut sum, mut run) = (0usize, 0usize);
        for pos in 0..self.slots() {
            if self.is_occupied(pos) {
                run += 1;
            } else {
                sum += run * run;
                run = 0;
            }
        }
        sum += run * run;
        sum as f64 / (4.0 * self.num_keys as f64)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.num_keys
    }

    /// Number of slots.
    #[inline]
    pub(crate) fn slots(&self) -> usize {
        self.array.len()
    }

    /// The address of the slot array, for hints only (see
    /// [`super::inner_node`]'s search hints).
    pub(crate) fn array_address(&self) -> usize {
        self.array.as_ptr() as usize
    }

    /// Heap bytes of the node's arrays and prefix.
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of_val(&*self.array) + size_of_val(&*self.bits) + self.proj.heap_bytes()
    }

    /// Whether an insert needs the node to expand or split first.
    pub(crate) fn is_full(&self) -> bool {
        (self.num_keys + 1) as f64 > self.slots() as f64 * MAX_DENSITY
    }

    /// The model key stored in (or, in a gap, after) slot `pos`.
    #[inline]
    pub(super) fn mk_at(&self, pos: usize) -> u64 {
        self.array[pos].mk
    }

    #[inline]
    pub(super) fn payload(&self, pos: usize) -> u64 {
        self.array[pos].payload()
    }

    #[inline]
    pub(super) fn is_occupied(&self, pos: usize) -> bool {
        bitmap::get(&self.bits, pos)
    }

    /// The first occupied slot at or after `pos`.
    #[inline]
    pub(crate) fn next_occupied(&self, pos: usize) -> Option<usize> {
        bitmap::next_set(&self.bits, pos, self.slots())
    }

    /// The last occupied slot before `pos`.
    #[inline]
    pub(crate) fn prev_occupied(&self, pos: usize) -> Option<usize> {
        pos.checked_sub(1)
            .and_then(|p| bitmap::prev_set(&self.bits, p))
    }

    /// The payload stored in occupied slot `pos`.
    pub(crate) fn payload_at(&self, pos: usize) -> u64 {
        self.payload(pos)
    }

    /// The model key of `key` in this node.
    #[inline]
    pub(crate) fn model_key(&self, key: &[u8]) -> u64 {
        self.proj.model_key(key)
    }

    /// The occupied slots in key order.
    pub(crate) fn occupied(&self) -> impl Iterator<Item = &Slot> {
        bitmap::Ones::new(&self.bits).map(|pos| &self.array[pos])
    }

    /// All payloads in key order.
    pub(crate) fn payloads_in_order(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.num_keys);
        out.extend(self.occupied().map(Slot::payload));
        out
    }

    /// The first slot whose model key is `>= mk` (maybe `slots`), found by
    /// exponential search from the model's prediction, and the number of
    /// search iterations it took.
    #[inline]
    pub(crate) fn lower_bound(&self, mk: u64) -> (usize, u32) {
        let arr = &*self.array;
        let n = arr.len();
        let p = self.model.predict_local(mk, n);
        let mut bound = 1;
        let mut iters = 1;
        let (lo, hi) = if arr[p].mk >= mk {
            while bound <= p && arr[p - bound].mk >= mk {
                bound *= 2;
                iters += 1;
            }
            (if bound > p { 0 } else { p - bound + 1 }, p - bound / 2)
        } else {
            while p + bound < n && arr[p + bound].mk < mk {
                bound *= 2;
                iters += 1;
            }
            (p + bound / 2 + 1, (p + bound).min(n))
        };
        let pos = lo + arr[lo..hi].partition_point(|s| s.mk < mk);
        (pos, iters + (hi - lo).max(1).ilog2())
    }

    /// Hints the CPU to load the slot the model predicts for `key`, where
    /// [`Self::get_candidate`]'s search starts.
    #[inline]
    pub(crate) fn hint_lookup(&self, key: &[u8]) {
        let predicted = self
            .model
            .predict_local(self.model_key(key), self.array.len());
        crate::io::prefetch::prefetch_value(&self.array[predicted]);
    }

    /// The first occupied slot whose key is `>= key`, and whether it equals
    /// `key`. Full keys are compared only among entries with model key `mk`.
    pub(crate) fn seek_ge<R: KeyResolver>(
        &self,
        key: &[u8],
        mk: u64,
        resolver: &R,
    ) -> (Option<usize>, bool, u32) {
        self.seek_ge_from(self.lower_bound(mk), key, mk, resolver)
    }

    /// [`Self::seek_ge`] from `found`, what [`Self::lower_bound`] returned
    /// for `mk` (for a caller that used that position already).
    pub(crate) fn seek_ge_from<R: KeyResolver>(
        &self,
        found: (usize, u32),
        key: &[u8],
        mk: u64,
        resolver: &R,
    ) -> (Option<usize>, bool, u32) {
        let (start, iters) = found;
        let mut pos = self.next_occupied(start);
        while let Some(p) = pos {
            if self.mk_at(p) != mk {
                return (Some(p), false, iters);
            }
            match resolver.key(self.payload(p)).cmp(key) {
                Ordering::Less => pos = self.next_occupied(p + 1),
                Ordering::Equal => return (Some(p), true, iters),
                Ordering::Greater => return (Some(p), false, iters),
            }
        }
        (None, false, iters)
    }

    /// The occupied slot holding `payload` among the entries whose model
    /// key is `mk`. Payloads are unique among entries, so this finds a key's
    /// entry by its payload without comparing (or reading) any key.
    pub(crate) fn find_payload(&self, mk: u64, payload: u64) -> Option<usize> {
        let (start, _) = self.lower_bound(mk);
        let mut pos = self.next_occupied(start);
        while let Some(p) = pos {
            if self.mk_at(p) != mk {
                return None;
            }
            if self.payload(p) == payload {
                return Some(p);
            }
            pos = self.next_occupied(p + 1);
        }
        None
    }

    /// The payload of `key`, confirmed with the resolver.
    pub(crate) fn get<R: KeyResolver>(&self, key: &[u8], resolver: &R) -> Option<u64> {
        match self.seek_ge(key, self.model_key(key), resolver) {
            (Some(p), true, _) => Some(self.payload(p)),
            _ => None,
        }
    }

    /// The payload of the only entry that can be `key`: unconfirmed when it
    /// is the only entry with `key`'s model key, confirmed otherwise.
    #[inline]
    pub(crate) fn get_candidate<R: KeyResolver>(&self, key: &[u8], resolver: &R) -> Option<u64> {
        let mk = self.model_key(key);
        let (start, _) = self.lower_bound(mk);
        let arr = &*self.array;
        // Fast path without the bitmap: gaps are copies of the next entry
        // and payloads are unique among entries, so a run of slots holding
        // `mk` with a single payload is a single entry (usually one cache
        // line), and no slot holding `mk` means no entry has it. `u64::MAX`
        // is excluded because trailing gaps hold it too.
        if mk != u64::MAX {
            let first = arr.get(start).filter(|s| s.mk == mk)?.payload();
            let run = arr[start + 1..].iter().take_while(|s| s.mk == mk);
            if run.clone().all(|s| s.payload() == first) {
                return Some(first);
            }
        }
        let pos = self.next_occupied(start)?;
        if self.mk_at(pos) != mk {
            return None;
        }
        match self.next_occupied(pos + 1) {
            Some(next) if self.mk_at(next) == mk => self.get(key, resolver),
            _ => Some(self.payload(pos)),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Test resolver: payload `i` is `keys[i]`.
    pub(crate) struct Keys(pub(crate) Vec<Vec<u8>>);

    impl KeyResolver for Keys {
        fn key(&self, payload: u64) -> &[u8] {
            &self.0[payload as usize]
        }
    }

    /// A node over `keys` (sorted), payload = index.
    pub(crate) fn node_of(keys: &Keys) -> DataNode {
        let payloads: Vec<u64> = (0..keys.0.len() as u64).collect();
        DataNode::from_entries(Entries::unknown(&payloads, keys), None)
    }

    #[test]
    fn finds_every_key_and_rejects_others() {
        let keys = Keys(
            (0..200u64)
                .map(|i| (i * 7).to_be_bytes().to_vec())
                .collect(),
        );
        let node = node_of(&keys);
        assert_eq!(node.len(), 200);
        for (i, k) in keys.0.iter().enumerate() {
            assert_eq!(node.get(k, &keys), Some(i as u64));
            assert_eq!(node.get_candidate(k, &keys), Some(i as u64));
        }
        assert_eq!(node.get(&8u64.to_be_bytes(), &keys), None);
        assert_eq!(node.get_candidate(&8u64.to_be_bytes(), &keys), None);
        assert_eq!(node.payloads_in_order(), (0..200).collect::<Vec<_>>());
    }

    /// A copy has the original's slots (with payloads stored in place
    /// since it was published), occupancy and model, in arrays of its own.
    #[test]
    fn a_copy_holds_the_same_slots_bits_and_model() {
        let keys = Keys(
            (0..300u64)
                .map(|i| (i * 11).to_be_bytes().to_vec())
                .collect(),
        );
        let node = node_of(&keys);
        let pos = node.find_payload(node.model_key(&keys.0[7]), 7).unwrap();
        node.store_payload(pos, 1_000);
        let copy = node.clone();
        assert_ne!(copy.array_address(), node.array_address());
        assert_eq!(&*copy.array, &*node.array);
        assert_eq!(&*copy.bits, &*node.bits);
        assert_eq!(copy.model, node.model);
        assert_eq!(copy.num_keys, node.num_keys);
        assert_eq!(copy.payload_at(pos), 1_000);
        assert_eq!(copy.payloads_in_order(), node.payloads_in_order());
    }

    /// Three keys with one model key ("a", "a\0", "a\0\0"), then "b".
    fn tie_keys() -> Keys {
        Keys(
            ["a", "a\0", "a\0\0", "b"]
                .map(|k| k.as_bytes().to_vec())
                .to_vec(),
        )
    }

    /// An entry is found by its payload among its model-key ties, and a
    /// payload that is not the entry's (or an entry of another model key)
    /// is not found.
    #[test]
    fn finds_an_entry_by_its_payload_among_ties() {
        let keys = tie_keys();
        let node = node_of(&keys);
        for (i, k) in keys.0.iter().enumerate() {
            let pos = node.find_payload(node.model_key(k), i as u64).unwrap();
            assert_eq!(node.payload_at(pos), i as u64);
        }
        assert_eq!(node.find_payload(node.model_key(b"a"), 3), None);
        assert_eq!(node.find_payload(node.model_key(b"b"), 0), None);
        assert_eq!(node.find_payload(node.model_key(b"c"), 3), None);
    }

    #[test]
    fn ties_are_broken_by_full_keys() {
        let keys = tie_keys();
        let node = node_of(&keys);
        for (i, k) in keys.0.iter().enumerate() {
            assert_eq!(node.get_candidate(k, &keys), Some(i as u64));
        }
        assert_eq!(node.get_candidate(b"a\0\0\0", &keys), None);
    }
}
