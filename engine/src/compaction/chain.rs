//! Planning one key's version chain during compaction: which old versions
//! live snapshots can see (copied), and which runs of versions nobody can
//! see are spliced out of the chain (one relocation entry per run, so the
//! memory kept for a snapshot grows with keys, not with overwrites).

use std::sync::Arc;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::mvcc::{Relocation, SnapshotSet};
use crate::segment::Segment;

use super::decisions::{Decisions, Reason, push_seen};

/// Sequence number of the record at `loc`, if it can be read.
pub(super) fn head_seq(shared: &Shared, loc: Location) -> Option<u64> {
    let table = shared.segments.load();
    let segment = table.get(loc.segment())?;
    segment.record_at(loc.offset(), false).ok().map(|r| r.seq)
}

/// One version on a key's chain, newest first.
struct Step {
    /// The location the newer version's `prev` holds (may be a moved one).
    reached_via: Location,
    /// Where the version is now.
    at: Location,
    seq: u64,
    /// Sequence number of the next newer version.
    newer_seq: u64,
    in_inputs: bool,
    /// Some live snapshot sees exactly this version.
    visible: bool,
}

impl Step {
    fn kept(&self, is_head: bool) -> bool {
        is_head || !self.in_inputs || self.visible
    }
}

/// Walks the chain of the key whose newest version is at `head`, down to the
/// version the oldest snapshot sees. Versions in the inputs that a snapshot
/// sees are copied (once: a record of a merge stack copied as it is, see
/// [`super::kept_stacks`], is copied already); each run of dropped versions
/// is spliced out with one relocation entry so every snapshot can still
/// walk to what it sees.
pub(super) fn plan_chain<'a>(
    shared: &Shared,
    ks: &Arc<Keyspace>,
    head: Location,
    inputs: &'a [Arc<Segment>],
    set: &SnapshotSet,
    out: &mut Decisions<'a>,
) -> Result<()> {
    let steps = walk_chain(shared, head, inputs, set)?;
    for (i, step) in steps.iter().enumerate() {
        if i > 0 && step.in_inputs && step.visible && !out.stacked.contains(&step.at) {
            let segment = inputs
                .iter()
                .find(|s| s.id() == step.at.segment())
                .expect("step is in the inputs");
            let record = segment.record_at(step.at.offset(), true)?;
            let reason = Reason::Snapshot(step.newer_seq);
            push_seen(ks, segment, step.at, record, reason, out)?;
        }
    }
    let kept: Vec<bool> = (steps.iter().enumerate())
        .map(|(i, step)| step.kept(i == 0) || out.stacked.contains(&step.at))
        .collect();
    let mut i = 0;
    while i < steps.len() {
        if !kept[i] {
            let run_start = i;
            while i < steps.len() && !kept[i] {
                i += 1;
            }
            let target = match steps.get(i) {
                Some(kept) => kept.at,
                None => last_prev(shared, &steps[i - 1])?,
            };
            let newer = steps[run_start - 1].seq;
            out.splices.push((
                steps[run_start].reached_via,
                Relocation {
                    to: target,
                    needed_below: newer,
                    bytes: 0,
                },
            ));
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// The `prev` of the last walked version (the walk stopped at chain end).
fn last_prev(shared: &Shared, step: &Step) -> Result<Location> {
    let table = shared.segments.load();
    let segment = table
        .get(step.at.segment())
        .ok_or_else(|| Error::InvalidArgument("segment vanished during compaction".into()))?;
    Ok(segment.record_at(step.at.offset(), false)?.prev)
}

fn walk_chain(
    shared: &Shared,
    head: Location,
    inputs: &[Arc<Segment>],
    set: &SnapshotSet,
) -> Result<Vec<Step>> {
    let table = shared.segments.load();
    let relocations = shared.relocations.load();
    // Snapshots registered after the capture have sequence numbers of at
    // least `set.visible`: treat them as one more snapshot there.
    let oldest = set
        .seqs
        .first()
        .copied()
        .unwrap_or(u64::MAX)
        .min(set.visible);
    let mut steps = Vec::new();
    let mut via = head;
    let mut newer_seq = u64::MAX;
    loop {
        let mut at = via;
        while table.get(at.segment()).is_none() {
            match relocations.get(at) {
                Some(next) if !next.is_none() => at = next,
                _ => return Ok(steps),
            }
        }
        let record = table
            .get(at.segment())
            .expect("checked above")
            .record_at(at.offset(), false)?;
        steps.push(Step {
            reached_via: via,
            at,
            seq: record.seq,
            newer_seq,
            in_inputs: inputs.iter().any(|s| s.id() == at.segment()),
            visible: set.any_in(record.seq, newer_seq) || newer_seq > set.visible,
        });
        if record.seq <= oldest || record.prev.is_none() {
            return Ok(steps);
        }
        newer_seq = record.seq;
        via = record.prev;
    }
}
