//! The two kinds of ALEX nodes.

use super::data_node::DataNode;
use super::inner_node::InnerNode;

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
}

impl Node {
    /// Heap bytes of the node itself (its box and arrays, not its children).
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of::<Self>()
            + match self {
                Self::Inner(inner) => inner.heap_bytes(),
                Self::Data(data) => data.heap_bytes(),
            }
    }
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
