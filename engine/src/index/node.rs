//! The two kinds of ALEX nodes.

use super::data_node::DataNode;
use super::inner_node::InnerNode;

/// A tree node.
#[derive(Debug)]
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
