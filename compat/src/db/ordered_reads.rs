//! Point reads in column families with a custom comparator, where keys
//! the comparator calls equal are one key (as in RocksDB): a read whose
//! bytes found nothing reads the other forms of its key's class that the
//! family's key set holds (`ordered_keys/`). Writes keep at most one form
//! of a class visible at any point (`ordered_writes.rs`), so the first
//! found is the one.

use std::sync::Arc;

use alexdb_engine::{KeyspaceId, Snapshot};

use crate::Error;
use crate::comparator::Comparator;
use crate::db::core::Core;
use crate::db::errors::IntoRocks;
use crate::ordered_keys::OrderedKeys;

impl Core {
    /// The key set of column family `cf`, if it has a comparator of its own.
    fn ordered_set(&self, cf: u32) -> Option<Arc<OrderedKeys>> {
        if !self.has_ordered_families() {
            return None;
        }
        self.families().get(&cf).and_then(|f| f.ordered.clone())
    }

    /// The comparator that orders column family `cf`'s keys and tells
    /// them apart, if it has one of its own (a transaction's or an indexed
    /// batch's own writes are looked up by it).
    pub(crate) fn key_order(&self, cf: u32) -> Option<Comparator> {
        self.ordered_set(cf).map(|keys| keys.comparator().clone())
    }

    /// After a read of `key` in column family `cf` found nothing (at
    /// `snapshot`, or at the latest write without one): what `read` finds
    /// under another form of its class, read at one point. Without a
    /// snapshot one is taken and `key` is read again at it, so that the
    /// forms are read at one point even while a write replaces one by
    /// another.
    pub(crate) fn read_other_form<T>(
        &self,
        cf: u32,
        key: &[u8],
        snapshot: Option<&Snapshot>,
        read: impl Fn(&Snapshot, KeyspaceId, &[u8]) -> alexdb_engine::Result<Option<T>>,
    ) -> Result<Option<T>, Error> {
        let Some(keys) = self.ordered_set(cf) else {
            return Ok(None);
        };
        let aliases = keys.aliases(key);
        if aliases.is_empty() {
            return Ok(None);
        }
        let taken;
        let (snapshot, forms) = match snapshot {
            Some(snapshot) => (snapshot, &aliases[..]),
            None => {
                taken = self.engine.reader_snapshot();
                if let Some(value) = read(&taken, KeyspaceId(cf), key).rocks()? {
                    return Ok(Some(value));
                }
                (&taken, &aliases[..])
            }
        };
        for form in forms {
            if let Some(value) = read(snapshot, KeyspaceId(cf), form).rocks()? {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }
}
