//! ALEX data nodes: immutable gapped arrays of model keys and payloads.
//!
//! Layout: one allocation holding `slots` model keys, `slots` payloads and
//! the occupancy bitmap. A gap holds the model key of the next occupied slot
//! (`u64::MAX` after the last one), so the model-key array is sorted and can
//! be searched without looking at the bitmap. Entries are in full-key order;
//! equal model keys are ordered by the full keys they stand for.
//!
//! A published data node is never modified; `data_write.rs` builds the
//! changed copies.

use std::cmp::Ordering;

use super::KeyResolver;
use super::bitmap;
use super::cost::{self, CostTracker, Edge, MAX_DATA_SLOTS, MAX_DENSITY, MIN_DATA_SLOTS};
use super::model::LinearModel;
use super::projection::Projection;

/// An immutable gapped-array leaf.
#[derive(Clone, Debug)]
pub(crate) struct DataNode {
    pub(super) proj: Projection,
    pub(super) model: LinearModel,
    pub(super) slots: usize,
    pub(super) num_keys: usize,
    /// `[model keys; slots] [payloads; slots] [bitmap words]`.
    pub(super) buf: Box<[u64]>,
    pub(super) cost: CostTracker,
}

impl DataNode {
    /// An empty node of the minimum size.
    pub(crate) fn empty() -> Self {
        Self::from_sorted(Projection::default(), &[], &[], MIN_DATA_SLOTS)
    }

    /// A node of the entries `payloads` with keys `keys` (sorted), sized
    /// for the initial density, with its projection computed from the keys.
    /// With `edge`, see [`Self::with_edge_room`].
    pub(crate) fn from_keys(keys: &[&[u8]], payloads: &[u64], edge: Option<Edge>) -> Self {
        let proj = match (keys.first(), keys.last()) {
            (Some(first), Some(last)) => Projection::for_range(first, last),
            _ => Projection::default(),
        };
        let mks: Vec<u64> = keys.iter().map(|k| proj.model_key(k)).collect();
        match edge {
            Some(edge) => Self::with_edge_room(proj, &mks, payloads, edge),
            None => Self::from_sorted(proj, &mks, payloads, cost::slots_for(keys.len())),
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
        let words = bitmap::words_for(slots);
        let mut buf = vec![u64::MAX; 2 * slots + words].into_boxed_slice();
        buf[2 * slots..].fill(0);
        let (keys, rest) = buf.split_at_mut(slots);
        let (pays, bits) = rest.split_at_mut(slots);
        let mut next_free = 0;
        let mut iters = 0.0;
        for (i, (&mk, &payload)) in mks.iter().zip(payloads).enumerate() {
            let pos = model.predict(mk, slots).max(next_free).min(slots - (n - i));
            iters += cost::search_iters(model.predict_f64(mk) - pos as f64);
            keys[pos] = mk;
            pays[pos] = payload;
            bitmap::set(bits, pos);
            next_free = pos + 1;
        }
        let mut fill = u64::MAX;
        for pos in (0..slots).rev() {
            if bitmap::get(bits, pos) {
                fill = keys[pos];
            } else {
                keys[pos] = fill;
            }
        }
        let expected_iters = if n == 0 { 0.0 } else { iters / n as f64 };
        let mut node = Self {
            proj,
            model,
            slots,
            num_keys: n,
            buf,
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
        for pos in 0..self.slots {
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
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Heap bytes of the node's arrays and prefix.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.len() * 8 + self.proj.heap_bytes()
    }

    /// Whether an insert needs the node to expand or split first.
    pub(crate) fn is_full(&self) -> bool {
        (self.num_keys + 1) as f64 > self.slots as f64 * MAX_DENSITY
    }

    #[inline]
    pub(super) fn keys(&self) -> &[u64] {
        &self.buf[..self.slots]
    }

    #[inline]
    pub(super) fn payload(&self, pos: usize) -> u64 {
        self.buf[self.slots + pos]
    }

    #[inline]
    pub(super) fn bits(&self) -> &[u64] {
        &self.buf[2 * self.slots..]
    }

    #[inline]
    pub(super) fn is_occupied(&self, pos: usize) -> bool {
        bitmap::get(self.bits(), pos)
    }

    /// The first occupied slot at or after `pos`.
    #[inline]
    pub(crate) fn next_occupied(&self, pos: usize) -> Option<usize> {
        bitmap::next_set(self.bits(), pos, self.slots)
    }

    /// The last occupied slot before `pos`.
    #[inline]
    pub(crate) fn prev_occupied(&self, pos: usize) -> Option<usize> {
        pos.checked_sub(1)
            .and_then(|p| bitmap::prev_set(self.bits(), p))
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

    /// All payloads in key order.
    pub(crate) fn payloads_in_order(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.num_keys);
        let mut pos = self.next_occupied(0);
        while let Some(p) = pos {
            out.push(self.payload(p));
            pos = self.next_occupied(p + 1);
        }
        out
    }

    /// The first slot whose model key is `>= mk` (maybe `slots`), found by
    /// exponential search from the model's prediction, and the number of
    /// search iterations it took.
    #[inline]
    pub(crate) fn lower_bound(&self, mk: u64) -> (usize, u32) {
        let keys = self.keys();
        let n = keys.len();
        let p = self.model.predict(mk, n);
        let mut bound = 1;
        let mut iters = 1;
        let (lo, hi) = if keys[p] >= mk {
            while bound <= p && keys[p - bound] >= mk {
                bound *= 2;
                iters += 1;
            }
            (if bound > p { 0 } else { p - bound + 1 }, p - bound / 2)
        } else {
            while p + bound < n && keys[p + bound] < mk {
                bound *= 2;
                iters += 1;
            }
            (p + bound / 2 + 1, (p + bound).min(n))
        };
        let pos = lo + keys[lo..hi].partition_point(|&k| k < mk);
        (pos, iters + (hi - lo).max(1).ilog2())
    }

    /// The first occupied slot whose key is `>= key`, and whether it equals
    /// `key`. Full keys are compared only among entries with model key `mk`.
    pub(crate) fn seek_ge<R: KeyResolver>(
        &self,
        key: &[u8],
        mk: u64,
        resolver: &R,
    ) -> (Option<usize>, bool, u32) {
        let (start, iters) = self.lower_bound(mk);
        let mut pos = self.next_occupied(start);
        while let Some(p) = pos {
            if self.keys()[p] != mk {
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
        let keys = self.keys();
        // Fast path without the bitmap: a run of slots holding `mk` ends at
        // an occupied slot (a gap holds the next entry's model key), so a
        // run of length one is a single, unique entry. `u64::MAX` is
        // excluded because trailing gaps hold it too.
        if start < keys.len()
            && keys[start] == mk
            && mk != u64::MAX
            && keys.get(start + 1) != Some(&mk)
        {
            return Some(self.payload(start));
        }
        let pos = self.next_occupied(start)?;
        if self.keys()[pos] != mk {
            return None;
        }
        match self.next_occupied(pos + 1) {
            Some(next) if self.keys()[next] == mk => self.get(key, resolver),
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
        let refs: Vec<&[u8]> = keys.0.iter().map(Vec::as_slice).collect();
        DataNode::from_keys(&refs, &payloads, None)
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

    #[test]
    fn ties_are_broken_by_full_keys() {
        let keys = Keys(vec![
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            b"b".to_vec(),
        ]);
        let node = node_of(&keys);
        for (i, k) in keys.0.iter().enumerate() {
            assert_eq!(node.get_candidate(k, &keys), Some(i as u64));
        }
        assert_eq!(node.get_candidate(b"a\0\0\0", &keys), None);
    }
}
