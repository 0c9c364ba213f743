//! Range deletes in the comparator's order.
//!
//! The engine's range deletes cover a bytewise range, which is not the
//! comparator's. A range delete `[begin, end)` of a column family with a
//! custom comparator is therefore written as one point delete per key the
//! set holds in the range by the comparator. The writer holds the write
//! gate exclusively meanwhile (see `Core::apply`), so no other write to a
//! column family with a comparator runs between reading the range and
//! making the deletes visible: the expansion covers every key a range
//! delete would. Each point delete takes a sequence number of its own,
//! where RocksDB's range delete takes one.

use super::{OrderedKeys, Start, Way};
use crate::Error;
use std::cmp::Ordering;

/// Keys walked per search.
const RANGE_WINDOW: usize = 256;

impl OrderedKeys {
    /// The keys the set holds in `[begin, end)` by the comparator (every
    /// form of each class in it). Fails as
    /// RocksDB does when `end` sorts before `begin`.
    pub(crate) fn keys_in(&self, begin: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        let order = self.comparator();
        if order.compare_user_keys(begin, end) == Ordering::Greater {
            return Err(Error::invalid_argument("end key comes before start key"));
        }
        let mut keys = Vec::new();
        let mut from = Start::Including(begin.to_vec());
        loop {
            let before = keys.len();
            self.walk(from.as_ref(), Way::Forward, RANGE_WINDOW, &mut keys);
            let walked = keys.len() - before;
            if let Some(past) = keys[before..]
                .iter()
                .position(|k| order.compare_user_keys(k, end) != Ordering::Less)
            {
                keys.truncate(before + past);
                break;
            }
            match keys.last() {
                Some(last) if walked == RANGE_WINDOW => from = Start::After(last.clone()),
                _ => break,
            }
        }
        Ok(keys)
    }
}
