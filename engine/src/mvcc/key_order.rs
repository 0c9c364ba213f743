//! The order a keyspace's range deletes follow.
//!
//! The index and the segments order keys by their bytes, whatever the
//! keyspace. A range delete covers the keys in `[start, end)`; by default
//! "in" means bytewise, but a keyspace may be given a [`KeyOrder`] of its
//! own (the compat layer's column families with a custom comparator), and
//! its range deletes then cover the keys that order puts in the range,
//! wherever their bytes sort. Readers, writers, recovery and compaction
//! all ask the keyspace's [`RangeOrder`], so one record stands for the
//! whole range in every order.
//!
//! The order's name is kept in the `MANIFEST` (see `FORMAT.md`), and an
//! open without an order of that name for the keyspace is refused: read
//! bytewise, its range deletes would cover other keys.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::manifest::Manifest;

/// A total order on a keyspace's keys, other than their bytes'.
pub trait KeyOrder: Send + Sync {
    /// The order's name, kept in the `MANIFEST`: an open must give an
    /// order of the same name.
    fn name(&self) -> &str;
    /// Compares two keys.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;
}

/// The order a keyspace's range deletes follow.
#[derive(Clone, Default)]
pub enum RangeOrder {
    /// By the keys' bytes.
    #[default]
    Bytewise,
    /// By an order of the keyspace's own.
    Custom(Arc<dyn KeyOrder>),
}

impl RangeOrder {
    /// Compares two keys in this order.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            RangeOrder::Bytewise => a.cmp(b),
            RangeOrder::Custom(order) => order.compare(a, b),
        }
    }

    /// Whether `key` lies in `[start, end)` in this order.
    #[inline]
    pub fn covers(&self, start: &[u8], end: &[u8], key: &[u8]) -> bool {
        self.compare(start, key).is_le() && self.compare(key, end).is_lt()
    }

    /// Whether `[start, end)` holds no key in this order.
    pub fn is_empty_range(&self, start: &[u8], end: &[u8]) -> bool {
        self.compare(start, end).is_ge()
    }

    /// Whether this is the bytes' order.
    pub fn is_bytewise(&self) -> bool {
        matches!(self, RangeOrder::Bytewise)
    }

    /// The custom order's name, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            RangeOrder::Bytewise => None,
            RangeOrder::Custom(order) => Some(order.name()),
        }
    }
}

impl fmt::Debug for RangeOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeOrder::Bytewise => f.write_str("Bytewise"),
            RangeOrder::Custom(order) => write!(f, "Custom({:?})", order.name()),
        }
    }
}

/// The orders of a database's keyspaces, resolved at open from what the
/// `MANIFEST` records and what the options give.
#[derive(Debug, Default)]
pub(crate) struct KeyspaceOrders {
    by_id: HashMap<u32, RangeOrder>,
    /// Keyspaces given an order the `MANIFEST` does not record yet, with
    /// its name: an open that may write records them.
    pub(crate) adopted: Vec<(u32, String)>,
}

impl KeyspaceOrders {
    /// Matches each keyspace of `manifest` with the order `given` names
    /// for it. A keyspace whose recorded order `given` lacks, or names
    /// otherwise, is an error: its range deletes would cover other keys.
    pub(crate) fn resolve(
        manifest: &Manifest,
        given: &HashMap<String, Arc<dyn KeyOrder>>,
    ) -> Result<Self> {
        let mut orders = KeyspaceOrders::default();
        for (id, name) in &manifest.keyspaces {
            let recorded = manifest
                .key_orders
                .iter()
                .find(|(ks, _)| ks == id)
                .map(|(_, order)| order.as_str());
            match (recorded, given.get(name)) {
                (None, None) => {}
                (None, Some(order)) => {
                    orders.adopted.push((*id, order.name().to_string()));
                    orders.by_id.insert(*id, RangeOrder::Custom(order.clone()));
                }
                (Some(recorded), Some(order)) if order.name() == recorded => {
                    orders.by_id.insert(*id, RangeOrder::Custom(order.clone()));
                }
                (Some(recorded), given) => {
                    let given = given.map_or("none (the keys' bytes)", |o| o.name());
                    return Err(Error::InvalidArgument(format!(
                        "keyspace {name:?} keeps its range deletes in the key order \
                         {recorded:?}; the open gives {given}: open it with that order"
                    )));
                }
            }
        }
        Ok(orders)
    }

    /// [`Self::resolve`] for a read-only open, which may name fewer
    /// keyspaces: one whose recorded order `given` lacks is left out of
    /// `manifest` (the reader does not see it), not an error.
    pub(crate) fn resolve_for_reader(
        manifest: &mut Manifest,
        given: &HashMap<String, Arc<dyn KeyOrder>>,
    ) -> Result<Self> {
        let unordered = |id: &u32, name: &String| {
            manifest.key_orders.iter().any(|(ks, _)| ks == id) && !given.contains_key(name)
        };
        let left_out: Vec<u32> = manifest
            .keyspaces
            .iter()
            .filter(|(id, name)| unordered(id, name))
            .map(|(id, _)| *id)
            .collect();
        manifest.keyspaces.retain(|(id, _)| !left_out.contains(id));
        manifest.key_orders.retain(|(id, _)| !left_out.contains(id));
        let mut orders = Self::resolve(manifest, given)?;
        // A reader records nothing.
        orders.adopted.clear();
        Ok(orders)
    }

    /// The order of keyspace `id`.
    pub(crate) fn of(&self, id: u32) -> RangeOrder {
        self.by_id.get(&id).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Reverse;

    impl KeyOrder for Reverse {
        fn name(&self) -> &str {
            "reverse"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            b.cmp(a)
        }
    }

    #[test]
    fn a_range_covers_what_its_order_puts_in_it() {
        let bytes = RangeOrder::Bytewise;
        assert!(bytes.covers(b"b", b"d", b"c"));
        assert!(!bytes.covers(b"b", b"d", b"d"));
        let reverse = RangeOrder::Custom(Arc::new(Reverse));
        assert!(reverse.covers(b"d", b"b", b"c"));
        assert!(reverse.covers(b"d", b"b", b"d"));
        assert!(!reverse.covers(b"d", b"b", b"b"));
        assert!(!reverse.covers(b"b", b"d", b"c"));
        assert!(reverse.is_empty_range(b"b", b"d"));
        assert_eq!(format!("{reverse:?}"), "Custom(\"reverse\")");
    }
}
