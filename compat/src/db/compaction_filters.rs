//! Running the column families' compaction filters on `compact_range`.
//!
//! RocksDB calls a compaction filter on each entry that compaction rewrites.
//! AlexDB's compaction rewrites whole segments below the compat layer, so
//! `compact_range` first passes every live entry of each column family that
//! has a filter through it, and applies the decisions (`Remove`: a delete,
//! `Change`: a put of the new value) as one write batch, atomically. The
//! filter sees level 0. Unlike RocksDB, those changes take sequence numbers
//! (as writes do) and show in `get_updates_since`.
//!
//! A column family with a compaction filter factory and no filter gets a
//! fresh filter from the factory for each pass; the pass covers all its
//! data and the client asked for it, so the factory is told a full, manual
//! compaction.
//!
//! In a database opened with a TTL (see `ttl.rs`), the same pass drops the
//! entries of each column family with a TTL that expired; the filter sees
//! values without their write time, and a changed value gets a new one.

use std::sync::PoisonError;
use std::time::Duration;

use alexdb_engine::{KeyRange, KeyspaceId};

use super::core::Core;
use super::errors::IntoRocks;
use super::ttl;
use crate::compaction_filter::Decision;
use crate::compaction_filter_factory::{CompactionFilterContext, EntryFilter};
use crate::options::{SharedCompactionFilter, SharedFilterFactory};
use crate::{Error, WriteBatch, WriteOptions};

/// What the pass does to one column family.
struct FamilyPass {
    cf: u32,
    filter: Option<SharedCompactionFilter>,
    factory: Option<SharedFilterFactory>,
    ttl: Option<Duration>,
}

/// The context a factory gets for `compact_range`'s pass.
const PASS_CONTEXT: CompactionFilterContext = CompactionFilterContext {
    is_full_compaction: true,
    is_manual_compaction: true,
};

impl Core {
    /// Passes every live entry of each filtered column family through its
    /// filter (and its TTL) and applies the decisions.
    pub(crate) fn run_compaction_filters(&self) -> Result<(), Error> {
        let passes: Vec<FamilyPass> = self
            .families()
            .iter()
            .filter(|(_, f)| f.is_filtered() || f.ttl.is_some())
            .map(|(id, f)| FamilyPass {
                cf: *id,
                filter: f.compaction_filter.clone(),
                factory: f.compaction_filter_factory.clone(),
                ttl: f.ttl,
            })
            .collect();
        if passes.is_empty() {
            return Ok(());
        }
        let mut batch = WriteBatch::default();
        for pass in passes {
            self.filter_family(&pass, &mut batch)?;
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.write(&batch, &WriteOptions::default())
    }

    /// Adds the decisions on column family `pass.cf` to `batch`: those of
    /// its filter, else those of a filter its factory makes for the pass.
    fn filter_family(&self, pass: &FamilyPass, batch: &mut WriteBatch) -> Result<(), Error> {
        if let Some(filter) = &pass.filter {
            let mut filter = filter.lock().unwrap_or_else(PoisonError::into_inner);
            return self.decide_family(pass, Some(&mut **filter), batch);
        }
        let Some(factory) = &pass.factory else {
            return self.decide_family(pass, None, batch);
        };
        let mut factory = factory.lock().unwrap_or_else(PoisonError::into_inner);
        let mut outcome = Ok(());
        factory.with_filter(PASS_CONTEXT, &mut |filter| {
            outcome = self.decide_family(pass, Some(filter), batch);
        });
        outcome
    }

    /// Adds to `batch` what expiry (with a TTL) and `filter` decide for each
    /// live entry of column family `pass.cf`.
    fn decide_family(
        &self,
        pass: &FamilyPass,
        mut filter: Option<&mut EntryFilter<'_>>,
        batch: &mut WriteBatch,
    ) -> Result<(), Error> {
        let (trim, now) = (self.value_trim(), ttl::now_seconds());
        let mut cursor = self
            .engine
            .cursor(KeyspaceId(pass.cf), KeyRange::default())
            .rocks()?;
        cursor.seek_to_first();
        while let Some(entry) = cursor.entry() {
            let (key, stored) = (entry.key(), entry.value());
            if pass.ttl.is_some_and(|t| ttl::expired(stored, t, now)) {
                batch.delete_in(pass.cf, key);
            } else if let Some(filter) = filter.as_mut() {
                let value = &stored[..stored.len().saturating_sub(trim)];
                match filter(0, key, value) {
                    Decision::Keep => {}
                    Decision::Remove => batch.delete_in(pass.cf, key),
                    Decision::Change(value) => batch.put_in(pass.cf, key, value),
                }
            }
            cursor.forward();
        }
        Ok(())
    }
}
