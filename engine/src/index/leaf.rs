//! A leaf as readers see it: a data node or a packed leaf, behind one set
//! of lookups and positions.
//!
//! Positions are a leaf's own: slots of a data node's gapped array, entry
//! numbers of a packed leaf (which has no gaps). Walks go from a position
//! to the next or previous occupied one, up to [`Leaf::end`].

use super::KeyResolver;
use super::data_node::DataNode;
use super::node::{Node, NodeRef};
use super::packed_leaf::PackedLeaf;

/// A leaf of the tree.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Leaf<'g> {
    /// A gapped array that takes every change.
    Dense(&'g DataNode),
    /// Packed entries that take no new keys.
    Packed(&'g PackedLeaf),
}

impl<'g> Leaf<'g> {
    /// The leaf `node` is, or `None` for an inner node.
    #[inline]
    pub(crate) fn of_node(node: &'g Node) -> Option<Self> {
        match node {
            Node::Data(data) => Some(Leaf::Dense(data)),
            Node::Packed(packed) => Some(Leaf::Packed(packed)),
            Node::Inner(_) => None,
        }
    }

    /// The leaf a leaf reference points at.
    #[inline]
    pub(crate) fn of(node: NodeRef<'g>) -> Self {
        Self::of_node(node.get()).expect("leaves are data nodes or packed leaves")
    }

    /// See [`DataNode::get_candidate`] and [`PackedLeaf::get_candidate`].
    #[inline]
    pub(crate) fn get_candidate<R: KeyResolver>(self, key: &[u8], resolver: &R) -> Option<u64> {
        match self {
            Leaf::Dense(data) => data.get_candidate(key, resolver),
            Leaf::Packed(packed) => packed.get_candidate(key, resolver),
        }
    }

    /// The payload of `key`, confirmed with the resolver.
    #[inline]
    pub(crate) fn get<R: KeyResolver>(self, key: &[u8], resolver: &R) -> Option<u64> {
        match self {
            Leaf::Dense(data) => data.get(key, resolver),
            Leaf::Packed(packed) => packed.get(key, resolver),
        }
    }

    /// Hints the CPU to load what a lookup of `key` reads first.
    #[inline]
    pub(crate) fn hint_lookup(self, key: &[u8]) {
        match self {
            Leaf::Dense(data) => data.hint_lookup(key),
            Leaf::Packed(packed) => packed.hint_lookup(key),
        }
    }

    /// Hints the CPU to load what a lookup of `key` reads next, once what
    /// [`Self::hint_lookup`] hinted is loaded: a packed leaf's entry where
    /// `key`'s ties start (a data node's slot was hinted already).
    #[inline]
    pub(crate) fn hint_entry(self, key: &[u8]) {
        if let Leaf::Packed(packed) = self {
            packed.hint_entry(key);
        }
    }

    /// The first occupied position whose key is `>= key`, and whether it
    /// equals `key`.
    pub(crate) fn seek_ge<R: KeyResolver>(self, key: &[u8], resolver: &R) -> (Option<usize>, bool) {
        match self {
            Leaf::Dense(data) => {
                let (pos, equal, _) = data.seek_ge(key, data.model_key(key), resolver);
                (pos, equal)
            }
            Leaf::Packed(packed) => packed.seek_ge(key, resolver),
        }
    }

    /// The position of `key`'s entry if it holds `payload`, found without
    /// reading any key.
    pub(crate) fn find_payload(self, key: &[u8], payload: u64) -> Option<usize> {
        match self {
            Leaf::Dense(data) => data.find_payload(data.model_key(key), payload),
            Leaf::Packed(packed) => packed.find_payload(packed.model_key(key), payload),
        }
    }

    /// The payload at occupied position `pos`.
    #[inline]
    pub(crate) fn payload_at(self, pos: usize) -> u64 {
        match self {
            Leaf::Dense(data) => data.payload_at(pos),
            Leaf::Packed(packed) => packed.payload_at(pos),
        }
    }

    /// The first occupied position at or after `pos`.
    #[inline]
    pub(crate) fn next_occupied(self, pos: usize) -> Option<usize> {
        match self {
            Leaf::Dense(data) => data.next_occupied(pos),
            Leaf::Packed(packed) => (pos < packed.len()).then_some(pos),
        }
    }

    /// The last occupied position before `pos`.
    #[inline]
    pub(crate) fn prev_occupied(self, pos: usize) -> Option<usize> {
        match self {
            Leaf::Dense(data) => data.prev_occupied(pos),
            Leaf::Packed(packed) => pos.min(packed.len()).checked_sub(1),
        }
    }

    /// One past the last position.
    #[inline]
    pub(crate) fn end(self) -> usize {
        match self {
            Leaf::Dense(data) => data.slots(),
            Leaf::Packed(packed) => packed.len(),
        }
    }
}
