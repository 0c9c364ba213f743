//! The compaction thread's fourth job: keeping a database within its
//! memory budget (`Options::memory_budget`; what counts is in
//! [`crate::memory_budget`]).
//!
//! At most every [`CHECK_EVERY`], it measures what the database holds
//! (walking its indexes). Over the budget, in order, stopping once under:
//! it drops the sealed segments' key filters and key directories (the next
//! compaction that needs one builds it again), packs every keyspace's full
//! leaves (about 20 bytes a key down to about 6; new keys then cost more
//! to insert), and gives the index heap's free small pages back to the
//! system. Whatever is left over is the packed index itself, which is
//! never evicted: `Stats::memory_over_budget` reports it. While it stays
//! over, the steps are taken again only once what the database holds has
//! grown since they were last taken: repeating them every second would
//! make compaction rebuild the filters it needs for nothing.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::db::shared::Shared;

/// How often the budget is checked at most: a check walks every index.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);

/// When the budget was last checked, and the budget and what the database
/// held after the last steps that left it over that budget.
#[derive(Debug, Default)]
pub(crate) struct LastCheck {
    at: Option<Instant>,
    over_with: Option<(u64, u64)>,
}

/// Checks the database against its budget, if it has one and the last
/// check was [`CHECK_EVERY`] ago, and acts if it is over.
pub(crate) fn run(shared: &Shared, last: &mut LastCheck) {
    let Some(budget) = shared.options.memory_budget.as_ref() else {
        return;
    };
    if budget.bytes() == 0 {
        last.over_with = None;
        shared.counters.over_budget.store(false, Ordering::Relaxed);
        return;
    }
    if last.at.is_some_and(|at| at.elapsed() < CHECK_EVERY) {
        return;
    }
    last.at = Some(Instant::now());
    let held = shared.memory_use();
    if !budget.is_exceeded_by(&held) {
        last.over_with = None;
        shared.counters.over_budget.store(false, Ordering::Relaxed);
        return;
    }
    let bytes = budget.bytes();
    if last
        .over_with
        .is_some_and(|(was, before)| was == bytes && held.total() <= before)
    {
        return;
    }
    shared
        .counters
        .budget_actions
        .fetch_add(1, Ordering::Relaxed);
    let still_over = || budget.is_exceeded_by(&shared.memory_use());
    let steps: [&dyn Fn(&Shared); 3] = [&drop_segment_filters, &pack_indexes, &trim_heap];
    let over = steps.iter().all(|step| {
        step(shared);
        still_over()
    });
    last.over_with = over.then(|| (bytes, shared.memory_use().total()));
    shared.counters.over_budget.store(over, Ordering::Relaxed);
}

/// Drops every segment's key filter and key directory.
fn drop_segment_filters(shared: &Shared) {
    for segment in shared.segments.load().iter() {
        segment.drop_rebuildable();
    }
}

/// Packs every keyspace's full leaves.
fn pack_indexes(shared: &Shared) {
    for keyspace in shared.keyspaces.load().iter() {
        keyspace.index.pack_leaves();
    }
}

/// Gives all of the index heap's free small pages back.
fn trim_heap(_: &Shared) {
    crate::index::trim_node_heap(usize::MAX);
}
