//! The packing pass: data nodes replaced by packed leaves of the same
//! entries (see `packed_leaf`), from their stored model keys, and packed
//! leaves whose words compaction widened (or whose group tables name runs
//! that are gone) re-encoded narrow; neither reads a key.

use crossbeam_epoch::Guard;

use super::inner_node::InnerNode;
use super::node::{Link, Node, NodeRef};
use super::packed_leaf::PackedLeaf;
use super::side_rebuild::SideRebuild;

/// Packs every non-empty data node under `root` whose entries fit a packed
/// leaf, outside subtrees frozen for a rebuild to the side; returns how
/// many it packed. Writer only (under the index's write lock).
pub(crate) fn pack_tree(root: &Link, side: &SideRebuild, guard: &Guard) -> usize {
    let node = root.load(guard);
    match node.get() {
        Node::Data(_) | Node::Packed(_) => match packed_copy(node, guard) {
            Some(packed) => {
                root.store(packed);
                node.retire(guard);
                1
            }
            None => 0,
        },
        Node::Inner(inner) if !side.is_frozen(node) => pack_children(inner, side, guard),
        Node::Inner(_) => 0,
    }
}

/// [`pack_tree`] below the inner node `inner`.
fn pack_children(inner: &InnerNode, side: &SideRebuild, guard: &Guard) -> usize {
    let mut packed = 0;
    let mut slot = 0;
    while slot < inner.slots() {
        let child = inner.child(slot, guard);
        let range = inner.slot_range(slot, child, guard);
        slot = range.end() + 1;
        match child.get() {
            Node::Inner(below) if !side.is_frozen(child) => {
                packed += pack_children(below, side, guard);
            }
            Node::Data(_) | Node::Packed(_) => {
                if let Some(copy) = packed_copy(child, guard) {
                    inner.set_range(range, copy);
                    child.retire(guard);
                    packed += 1;
                }
            }
            Node::Inner(_) => {}
        }
    }
    packed
}

/// The data node `node` packed, or the packed leaf `node` re-encoded
/// narrower, and published; `None` if it has no entries, they do not fit
/// or nothing would shrink.
fn packed_copy<'g>(node: NodeRef<'g>, guard: &'g Guard) -> Option<NodeRef<'g>> {
    let packed = match node.get() {
        Node::Data(data) if data.len() > 0 => PackedLeaf::from_data(data)?,
        Node::Packed(leaf) => leaf.renarrowed()?,
        Node::Data(_) | Node::Inner(_) => return None,
    };
    Some(NodeRef::publish(Node::Packed(packed), guard))
}
