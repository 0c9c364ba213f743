//! RocksDB's compaction filters, filter factories and TTL expiry, run by
//! the engine's compaction (see `alexdb_engine::compaction_filter`): each
//! column family that has one of them gets an engine filter, which each
//! compaction holding the column family's keys starts, so a filter costs
//! nothing beyond the compaction that runs anyway.
//!
//! A run uses the column family's compaction filter, else a filter its
//! factory makes for the run (told whether the compaction is full and
//! whether the user asked for it: `compact_range` does, background
//! compactions do not). In a database opened with a TTL (see `ttl.rs`),
//! an entry whose write time is more than its column family's TTL ago is
//! removed first; the user's filter sees values without their write time,
//! and a changed value keeps the write time of the value it replaces, as
//! RocksDB's `TtlCompactionFilter` does. The filter sees level 0.

use std::sync::{Arc, MutexGuard, PoisonError};
use std::time::Duration;

use alexdb_engine::compaction_filter::{Decision as EngineDecision, FilterContext, FilterRun};
use alexdb_engine::{Db, KeyspaceId};

use super::core::FamilyInfo;
use super::errors::IntoRocks;
use super::ttl;
use crate::Error;
use crate::compaction_filter::{CompactionFilter, Decision};
use crate::compaction_filter_factory::CompactionFilterContext;
use crate::options::{CompactionFilterBox, SharedCompactionFilter, SharedFilterFactory};

/// What compaction runs over one column family's keys.
struct FamilyFilter {
    filter: Option<SharedCompactionFilter>,
    factory: Option<SharedFilterFactory>,
    ttl: Option<Duration>,
    /// Bytes of write time at the end of each value (a TTL database).
    stamp: usize,
}

/// Gives the engine what compaction runs over column family `id`, described
/// by `info`, in a database whose values end in `stamp` bytes of write
/// time; none if it has no filter, factory or TTL.
pub(crate) fn install(
    engine: &Db,
    id: KeyspaceId,
    info: &FamilyInfo,
    stamp: usize,
) -> Result<(), Error> {
    let filter = FamilyFilter {
        filter: info.compaction_filter.clone(),
        factory: info.compaction_filter_factory.clone(),
        ttl: info.ttl,
        stamp,
    };
    let any = filter.filter.is_some() || filter.factory.is_some() || filter.ttl.is_some();
    let hook: Option<Arc<dyn alexdb_engine::CompactionFilter>> = match any {
        true => Some(Arc::new(filter)),
        false => None,
    };
    engine.set_compaction_filter(id, hook).rocks()
}

impl alexdb_engine::CompactionFilter for FamilyFilter {
    fn start(&self, context: &FilterContext) -> Box<dyn FilterRun + '_> {
        Box::new(Run {
            user: self.user_filter(context),
            ttl: self.ttl,
            stamp: self.stamp,
            now: ttl::now_seconds(),
        })
    }
}

impl FamilyFilter {
    /// The user's filter for a run: the column family's own (held for the
    /// run), else one its factory makes.
    fn user_filter(&self, context: &FilterContext) -> Option<UserFilter<'_>> {
        if let Some(filter) = &self.filter {
            let held = filter.lock().unwrap_or_else(PoisonError::into_inner);
            return Some(UserFilter::Shared(held));
        }
        let factory = self.factory.as_ref()?;
        let context = CompactionFilterContext {
            is_full_compaction: context.full,
            is_manual_compaction: context.manual,
        };
        let mut factory = factory.lock().unwrap_or_else(PoisonError::into_inner);
        Some(UserFilter::Made(factory.make(context)))
    }
}

/// The user's filter of one run.
enum UserFilter<'a> {
    /// The column family's compaction filter.
    Shared(MutexGuard<'a, CompactionFilterBox>),
    /// A filter its factory made for the run.
    Made(Box<dyn CompactionFilter>),
}

impl UserFilter<'_> {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> Decision {
        match self {
            UserFilter::Shared(filter) => filter(0, key, value),
            UserFilter::Made(filter) => filter.filter(0, key, value),
        }
    }
}

/// One run over a column family's keys.
struct Run<'a> {
    user: Option<UserFilter<'a>>,
    ttl: Option<Duration>,
    stamp: usize,
    /// When the run started, in the write times' seconds.
    now: u32,
}

impl FilterRun for Run<'_> {
    fn decide(&mut self, key: &[u8], stored: &[u8]) -> EngineDecision {
        if self
            .ttl
            .is_some_and(|ttl| ttl::expired(stored, ttl, self.now))
        {
            return EngineDecision::Remove;
        }
        let Some(user) = self.user.as_mut() else {
            return EngineDecision::Keep;
        };
        let (value, stamp) = stored.split_at(stored.len().saturating_sub(self.stamp));
        match user.filter(key, value) {
            Decision::Keep => EngineDecision::Keep,
            Decision::Remove => EngineDecision::Remove,
            Decision::Change(value) => EngineDecision::Change([value, stamp].concat()),
        }
    }
}
