//! Choosing which sealed segments to compact.

use std::sync::Arc;

use crate::segment::Segment;
use crate::shared::Shared;

/// Segments to rewrite together.
pub(crate) struct Plan {
    pub inputs: Vec<Arc<Segment>>,
}

/// Picks sealed segments whose dead fraction exceeds `dead_ratio`, worst
/// first, as many as fit in one output segment. When `dead_ratio` is
/// negative (a full compaction) it picks every sealed segment, oldest
/// first: the deletes, usually newer than the versions they hide, then
/// come last, when those versions are gone and the deletes can go too. Considers only segments `eligible` accepts,
/// and skips those in `exclude`.
pub(crate) fn plan(
    shared: &Shared,
    dead_ratio: f64,
    exclude: &[u32],
    eligible: impl Fn(&Segment) -> bool,
) -> Option<Plan> {
    // Read the active segment and the table together under the writer lock:
    // a rotation in between would make the new active segment look sealed,
    // and compacting a segment the writer still appends to loses the records
    // appended after the scan.
    let (active, table) = {
        let writer = shared.lock_writer();
        (writer.active.id(), shared.segments.load_full())
    };
    let mut candidates: Vec<(f64, Arc<Segment>)> = table
        .iter()
        .filter(|s| s.id() != active && !exclude.contains(&s.id()) && eligible(s))
        .map(|s| (dead_fraction(s), s.clone()))
        .filter(|(f, _)| *f > dead_ratio)
        .collect();
    let oldest_first = dead_ratio < 0.0;
    match oldest_first {
        true => candidates.sort_by_key(|(_, s)| s.id()),
        false => candidates.sort_by(|a, b| b.0.total_cmp(&a.0)),
    }
    let budget = shared.options.segment_bytes;
    let mut inputs = Vec::new();
    let mut live = 0;
    for (_, s) in candidates {
        let l = s.data_bytes().saturating_sub(s.dead_bytes());
        if !inputs.is_empty() && live + l > budget {
            // Oldest first stays in order: a newer segment of deletes that
            // would fit must not jump ahead of the versions they hide.
            match oldest_first {
                true => break,
                false => continue,
            }
        }
        live += l;
        inputs.push(s);
    }
    (!inputs.is_empty()).then_some(Plan { inputs })
}

/// Dead bytes over data bytes (1 for a segment without data).
pub(super) fn dead_fraction(s: &Segment) -> f64 {
    let data = s.data_bytes();
    if data == 0 {
        return 1.0;
    }
    s.dead_bytes() as f64 / data as f64
}
