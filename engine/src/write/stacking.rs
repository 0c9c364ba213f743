//! How the writer stores a merge: its operand alone, on top of the key's
//! stack of operands, or resolved (the stack and the operand folded into
//! the value, stored with the operand). See FORMAT.md, "merge" under
//! Records, for the rules a stack keeps; this file applies them.
//!
//! An operand is stacked when the keyspace has a merge function, the
//! stack stays within the keyspace's limit, the version it would rest on
//! lies where the record goes (an earlier record of the same batch, or the
//! key's newest version in the active log segment; a key with no value
//! needs none: the operand is the bottom of a new stack), and resolving
//! would not be cheaper: a merge over a value (or no value) whose fold
//! with the operand is under [`STACK_FROM_BYTES`] resolves. Otherwise the
//! merge is resolved, folding the stack with one call of the merge
//! function.

use smallvec::SmallVec;

use crossbeam_epoch as epoch;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::{MergeState, RecordKind, Stack};
use crate::mvcc::merge_stack;
use crate::segment::resolver::TableResolver;
use crate::write::merge::{self, SharedMergeFunction};
use crate::write::plan::PendingRecord;

/// The size from which a merge's base and operand are stacked rather than
/// resolved. Below it, resolving copies a few hundred bytes at most, which
/// costs less than stacking: a stack's fold reads its records back (about
/// one record read per merge, amortized) and every read of the key folds.
/// So counters and other small values stay resolved, one record a read,
/// and an appending merge stacks once its value passes this size.
pub(crate) const STACK_FROM_BYTES: usize = 256;

/// A key's newest version as a merge sees it, with the operands the batch
/// stacked on it so far.
#[derive(Clone, Debug)]
pub(crate) struct KeyState<'b> {
    under: Under,
    /// Operands of this batch stacked on `under`, oldest first.
    operands: SmallVec<[&'b [u8]; 2]>,
    /// The depth of the key's newest operand record (0 if the newest
    /// version is not one).
    depth: u16,
}

/// What the key's stack (possibly empty) rests on.
#[derive(Clone, Debug)]
enum Under {
    /// No value: absent, deleted or covered by a range delete.
    Absent,
    /// A merge that could not be resolved; merges on it inherit its state.
    Unresolved(MergeState),
    /// The record at this position of the batch's records: a put or a
    /// resolved merge.
    InBatch(usize),
    /// The newest version's value, shorter than [`STACK_FROM_BYTES`]
    /// (copied: a merge over it resolves, as cheap as a copy).
    Small(Vec<u8>),
    /// The record at this location: a put, a resolved merge, or the top of
    /// a stack (then `depth` is its depth).
    OnDisk(Location),
}

impl<'b> KeyState<'b> {
    /// A key with no value.
    pub(crate) fn absent() -> Self {
        Self::over(Under::Absent)
    }

    fn over(under: Under) -> Self {
        KeyState {
            under,
            operands: SmallVec::new(),
            depth: 0,
        }
    }

    /// The key after `records[at]`, a record of the batch that is not a
    /// stacked operand.
    pub(crate) fn after(records: &[PendingRecord<'_>], at: usize) -> Self {
        let r = &records[at];
        Self::over(match (r.kind, r.merge_state) {
            (RecordKind::Delete | RecordKind::RangeDelete, _) => Under::Absent,
            (_, MergeState::Resolved) => Under::InBatch(at),
            (_, state) => Under::Unresolved(state),
        })
    }

    /// The key's newest version in `ks`, read from the index. Runs under
    /// the writer lock, so the head cannot change or move underneath.
    pub(crate) fn of_head(shared: &Shared, ks: &Keyspace, key: &[u8]) -> Result<Self> {
        let table = shared.segments.load();
        let resolver = TableResolver::new(&table);
        let guard = epoch::pin();
        let Some(head) = ks.index.get(key, &resolver, &guard).map(Location) else {
            return Ok(Self::absent());
        };
        let segment = table.get(head.segment()).ok_or_else(|| missing(head))?;
        let record = segment.record_at(head.offset(), shared.options.verify_checksums)?;
        if ks.range_tombstones().hides(key, record.seq, u64::MAX) {
            return Ok(Self::absent());
        }
        Ok(match (record.kind, record.merge_state) {
            (RecordKind::Delete | RecordKind::RangeDelete, _) => Self::absent(),
            (_, MergeState::Resolved) if record.value.len() < STACK_FROM_BYTES => {
                Self::over(Under::Small(segment.value_of(&record)?.into_owned()))
            }
            (_, MergeState::Resolved) => Self::over(Under::OnDisk(head)),
            (_, MergeState::Operand(stack)) => KeyState {
                depth: stack.depth,
                ..Self::over(Under::OnDisk(head))
            },
            (_, state) => Self::over(Under::Unresolved(state)),
        })
    }
}

/// How a merge is written: its record's merge state and resolved value
/// (empty for a stacked operand or a failure).
pub(crate) type Planned = (MergeState, Vec<u8>);

/// Plans the merge of `operand` into `key` of `ks`, whose state is
/// `state` (updated to the state after it), with the batch's earlier
/// records `earlier`; `active` is the segment the record goes to.
pub(crate) fn plan_merge<'b>(
    shared: &Shared,
    ks: &Keyspace,
    key: &[u8],
    (state, operand): (&mut KeyState<'b>, &'b [u8]),
    earlier: &[PendingRecord<'_>],
    active: u32,
) -> Result<Planned> {
    let function = ks.merge_function();
    let stacks = function.is_some() && !resolves_cheaper(state, operand, earlier);
    if let Some(stack) = stacks
        .then(|| next_stack(state, ks.merge_stack_limit(), active))
        .flatten()
    {
        state.operands.push(operand);
        state.depth = stack.depth;
        return Ok((MergeState::Operand(stack), Vec::new()));
    }
    let planned = fold(shared, key, state, operand, earlier, function.as_ref())?;
    *state = KeyState::over(match planned.0 {
        MergeState::Resolved => Under::InBatch(earlier.len()),
        unresolved => Under::Unresolved(unresolved),
    });
    Ok(planned)
}

/// Whether resolving `operand` over the key's value in `state` copies less
/// than [`STACK_FROM_BYTES`] (a key whose newest version tops a stack is
/// never small: it was stacked because it was not).
fn resolves_cheaper(state: &KeyState<'_>, operand: &[u8], earlier: &[PendingRecord<'_>]) -> bool {
    let base = match &state.under {
        _ if state.depth > 0 => return false,
        Under::Absent => 0,
        Under::Small(value) => value.len(),
        Under::InBatch(at) => earlier[*at].value.len(),
        Under::OnDisk(_) | Under::Unresolved(_) => return false,
    };
    base + operand.len() < STACK_FROM_BYTES
}

/// Where the next operand goes in the stack, if it is stacked: see the
/// module comment.
fn next_stack(state: &KeyState<'_>, limit: u16, active: u32) -> Option<Stack> {
    if state.depth >= limit {
        return None;
    }
    let over_base = match state.under {
        Under::Unresolved(_) | Under::Small(_) => return None,
        Under::Absent => state.depth > 0,
        Under::InBatch(_) => true,
        Under::OnDisk(loc) if loc.segment() == active => true,
        Under::OnDisk(_) => return None,
    };
    Some(Stack {
        depth: state.depth + 1,
        over_base,
    })
}

/// Resolves the key's stack in `state` and `operand` with one call of
/// `function`.
fn fold(
    shared: &Shared,
    key: &[u8],
    state: &KeyState<'_>,
    operand: &[u8],
    earlier: &[PendingRecord<'_>],
    function: Option<&SharedMergeFunction>,
) -> Result<Planned> {
    let resolve = |base: Option<&[u8]>, below: &[&[u8]]| {
        let operands: SmallVec<[&[u8]; 8]> = (below.iter().copied())
            .chain(state.operands.iter().copied())
            .chain([operand])
            .collect();
        merge::apply(function, key, base, &operands)
    };
    match state.under {
        Under::Absent => Ok(resolve(None, &[])),
        Under::Unresolved(unresolved) => Ok((unresolved, Vec::new())),
        Under::InBatch(at) => Ok(resolve(Some(&earlier[at].value), &[])),
        Under::Small(ref value) => Ok(resolve(Some(value), &[])),
        Under::OnDisk(loc) => {
            let verify = shared.options.verify_checksums;
            let table = shared.segments.load();
            let segment = table.get(loc.segment()).ok_or_else(|| missing(loc))?;
            let record = segment.record_at(loc.offset(), verify)?;
            if !record.merge_state.is_operand() {
                let value = segment.value_of(&record)?;
                return Ok(resolve(Some(&value), &[]));
            }
            let parts = merge_stack::collect(segment, &record, verify)?;
            Ok(resolve(parts.base.as_deref(), &parts.operands))
        }
    }
}

/// The error for a newest version whose segment is not open.
fn missing(head: Location) -> Error {
    Error::InvalidArgument(format!(
        "the newest version of a key lies in segment {}, which is not open",
        head.segment()
    ))
}
