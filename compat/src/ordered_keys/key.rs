//! [`OrderedKey`]: a user key that sorts by its column family's comparator.

use std::cmp::Ordering;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::comparator::Comparator;

/// Key bytes held inline, without an allocation of their own: a search
/// then reads a key where it reads its node.
const INLINE_BYTES: usize = 32;

/// A user key and the comparator it sorts by, so that a standard ordered
/// collection keeps keys in the comparator's order. The comparator is
/// shared by every key of a set (one pointer per key); a key of up to
/// [`INLINE_BYTES`] is held inline.
pub(crate) struct OrderedKey {
    bytes: SmallVec<[u8; INLINE_BYTES]>,
    order: Arc<Comparator>,
}

impl OrderedKey {
    /// `bytes`, ordered by `order`.
    pub(crate) fn new(bytes: &[u8], order: &Arc<Comparator>) -> Self {
        Self {
            bytes: SmallVec::from_slice(bytes),
            order: Arc::clone(order),
        }
    }

    /// The user key.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Ord for OrderedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order.compare_user_keys(&self.bytes, &other.bytes)
    }
}

impl PartialOrd for OrderedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for OrderedKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for OrderedKey {}
