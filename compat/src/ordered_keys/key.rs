//! [`OrderedKey`]: a user key that sorts by its column family's comparator.
//!
//! Keys the comparator calls equal are one key to RocksDB (a put of
//! `"user"` overwrites `"User"` under a case-insensitive comparator), but
//! their bytes differ and the engine stores each byte form on its own. The
//! set keeps every byte form that may have a visible version, next to each
//! other: a class of equal keys sorts by the comparator, and within it by
//! bytes. A probe marks either end of a class, so that a search can start
//! before its first form or after its last.

use std::cmp::Ordering;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::comparator::Comparator;

/// Key bytes held inline, without an allocation of their own: a search
/// then reads a key where it reads its node.
const INLINE_BYTES: usize = 32;

/// Where a key sorts among the keys its comparator calls equal to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Place {
    /// A probe before every form of its class.
    First,
    /// A stored form, among the others by its bytes.
    Form,
    /// A probe after every form of its class.
    Last,
}

/// A user key and the comparator it sorts by, so that a standard ordered
/// collection keeps keys in the comparator's order. The comparator is
/// shared by every key of a set (one pointer per key); a key of up to
/// [`INLINE_BYTES`] is held inline.
pub(crate) struct OrderedKey {
    bytes: SmallVec<[u8; INLINE_BYTES]>,
    order: Arc<Comparator>,
    place: Place,
}

impl OrderedKey {
    /// `bytes`, ordered by `order`, at `place` within its class.
    pub(crate) fn new(bytes: &[u8], order: &Arc<Comparator>, place: Place) -> Self {
        Self {
            bytes: SmallVec::from_slice(bytes),
            order: Arc::clone(order),
            place,
        }
    }

    /// The user key.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Ord for OrderedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // The same bytes are the same key: the comparator is not asked (a
        // single put into an empty family calls it not at all, as in
        // RocksDB).
        let by_order = match self.bytes == other.bytes {
            true => Ordering::Equal,
            false => self.order.compare_user_keys(&self.bytes, &other.bytes),
        };
        by_order
            .then_with(|| self.place.cmp(&other.place))
            .then_with(|| match self.place {
                Place::Form => self.bytes.cmp(&other.bytes),
                Place::First | Place::Last => Ordering::Equal,
            })
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
