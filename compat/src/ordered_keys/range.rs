//! Range deletes in the comparator's order.
//!
//! A range delete `[begin, end)` of a column family with a custom
//! comparator is one engine range delete, as in RocksDB: the family's
//! keyspace is opened with the comparator as its key order
//! (`alexdb_engine::key_order`), so the engine's record covers the keys
//! the comparator puts in the range, wherever their bytes sort. The set
//! keeps the keys it covers until a sweep finds them without a version; so
//! that the sweep comes when they pile up, the range delete counts them,
//! one step of the set per key, holding nothing but the shared write gate
//! and no memory of its own.

use std::cmp::Ordering;
use std::ops::Bound;

use crossbeam_epoch as epoch;

use super::OrderedKeys;
use super::key::Place;
use crate::Error;
use crate::comparator::Comparator;

impl OrderedKeys {
    /// The number of keys the set holds in `[begin, end)` by the
    /// comparator (every form of each class in it). Fails as RocksDB does
    /// when `end` sorts before `begin`.
    pub(crate) fn count_in(&self, begin: &[u8], end: &[u8]) -> Result<u64, Error> {
        check_range(self.comparator(), begin, end)?;
        let guard = &epoch::pin();
        let first = self.probe(begin, Place::First);
        let mut entry = self.keys.lower_bound(Bound::Included(&first), guard);
        let mut count = 0;
        while let Some(at) = entry {
            if self.comparator().compare_user_keys(at.key().bytes(), end) != Ordering::Less {
                break;
            }
            count += 1;
            entry = at.next();
        }
        Ok(count)
    }
}

/// Fails as RocksDB does when `end` sorts before `begin` in `order`.
pub(crate) fn check_range(order: &Comparator, begin: &[u8], end: &[u8]) -> Result<(), Error> {
    match order.compare_user_keys(begin, end) {
        Ordering::Greater => Err(Error::invalid_argument("end key comes before start key")),
        _ => Ok(()),
    }
}
