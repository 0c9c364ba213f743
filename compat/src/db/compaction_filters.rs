//! Running the column families' compaction filters on `compact_range`.
//!
//! RocksDB calls a compaction filter on each entry that compaction rewrites.
//! AlexDB's compaction rewrites whole segments below the compat layer, so
//! `compact_range` first passes every live entry of each column family that
//! has a filter through it, and applies the decisions (`Remove`: a delete,
//! `Change`: a put of the new value) as one write batch, atomically. The
//! filter sees level 0. Unlike RocksDB, those changes take sequence numbers
//! (as writes do) and show in `get_updates_since`.

use alexdb_engine::{KeyRange, KeyspaceId};

use super::core::Core;
use super::errors::IntoRocks;
use crate::compaction_filter::Decision;
use crate::options::SharedCompactionFilter;
use crate::{Error, WriteBatch, WriteOptions};

impl Core {
    /// Passes every live entry of each filtered column family through its
    /// filter and applies the decisions.
    pub(crate) fn run_compaction_filters(&self) -> Result<(), Error> {
        let filtered: Vec<(u32, SharedCompactionFilter)> = self
            .families()
            .iter()
            .filter_map(|(id, f)| Some((*id, f.compaction_filter.clone()?)))
            .collect();
        if filtered.is_empty() {
            return Ok(());
        }
        let mut batch = WriteBatch::default();
        for (cf, filter) in filtered {
            self.filter_family(cf, &filter, &mut batch)?;
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.write(&batch, &WriteOptions::default())
    }

    /// Adds the decisions of `filter` on column family `cf` to `batch`.
    fn filter_family(
        &self,
        cf: u32,
        filter: &SharedCompactionFilter,
        batch: &mut WriteBatch,
    ) -> Result<(), Error> {
        let mut filter = filter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut cursor = self
            .engine
            .cursor(KeyspaceId(cf), KeyRange::default())
            .rocks()?;
        cursor.seek_to_first();
        while let Some(entry) = cursor.entry() {
            match (*filter)(0, entry.key(), entry.value()) {
                Decision::Keep => {}
                Decision::Remove => batch.delete_in(cf, entry.key()),
                Decision::Change(value) => batch.put_in(cf, entry.key(), value),
            }
            cursor.forward();
        }
        Ok(())
    }
}
