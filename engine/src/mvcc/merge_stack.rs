//! A key's stack of merge operands: the operand records reached from the
//! newest one through `prev`, down to the bottom one, and the base value
//! they fold over (see FORMAT.md, "merge" under Records).
//!
//! A stack and its base always lie in one segment (the writer never stacks
//! an operand on a version in another segment), so a stack is read from
//! the segment that holds its top, without relocations (which live in
//! memory and do not survive a restart). Every step is checked: a `prev`
//! into another segment, a depth that does not step down by one, another
//! key, or a base that is not a value is corruption naming the record.

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::{MergeState, RECORD_HEADER_BYTES, RecordKind, RecordView};
use crate::segment::Segment;
use crate::write::merge::{self, SharedMergeFunction};

/// The parts of a stack, ready to fold.
pub(crate) struct StackParts<'s> {
    /// The value the operands fold over, if the stack has a base.
    pub base: Option<Cow<'s, [u8]>>,
    /// The operands, oldest first.
    pub operands: SmallVec<[&'s [u8]; 8]>,
}

/// Reads the stack whose top is `top`, an operand record of `segment`.
pub(crate) fn collect<'s>(
    segment: &'s Segment,
    top: &RecordView<'s>,
    verify: bool,
) -> Result<StackParts<'s>> {
    let mut operands = SmallVec::new();
    let mut record = *top;
    loop {
        let MergeState::Operand(stack) = record.merge_state else {
            return Err(broken(segment, top, "a stack record is not an operand"));
        };
        operands.push(record.operand);
        if stack.depth == 1 {
            let base = match stack.over_base {
                true => Some(base_value(segment, top, &record, verify)?),
                false => None,
            };
            operands.reverse();
            return Ok(StackParts { base, operands });
        }
        let below = below(segment, top, &record, verify)?;
        match below.merge_state {
            MergeState::Operand(next) if next.depth + 1 == stack.depth => record = below,
            _ => return Err(broken(segment, top, "the stack's depths do not step down")),
        }
    }
}

/// The records under `top`, an operand record of `segment`, newest
/// first, each with its offset: the deeper operands, then the stack's base
/// if it has one. Checked as [`collect`] checks a stack (checksums too, if
/// `verify`).
pub(crate) fn under_top<'s>(
    segment: &'s Segment,
    top: &RecordView<'s>,
    verify: bool,
) -> Result<Vec<(u64, RecordView<'s>)>> {
    let mut under = Vec::new();
    let mut record = *top;
    loop {
        let MergeState::Operand(stack) = record.merge_state else {
            return Err(broken(segment, top, "a stack record is not an operand"));
        };
        if stack.depth == 1 {
            if stack.over_base {
                let base = below(segment, top, &record, verify)?;
                if !matches!(
                    (base.kind, base.merge_state),
                    (RecordKind::Put | RecordKind::Merge, MergeState::Resolved)
                ) {
                    return Err(broken(segment, top, "a stack's base holds no value"));
                }
                under.push((record.prev.offset(), base));
            }
            return Ok(under);
        }
        let next = below(segment, top, &record, verify)?;
        match next.merge_state {
            MergeState::Operand(n) if n.depth + 1 == stack.depth => {
                under.push((record.prev.offset(), next));
                record = next;
            }
            _ => return Err(broken(segment, top, "the stack's depths do not step down")),
        }
    }
}

/// The value of the stack whose top is `top`, an operand record of
/// `segment`, folded with `function`: the state a resolved record of it
/// would have and its value (empty unless resolved).
pub(crate) fn fold(
    segment: &Segment,
    top: &RecordView<'_>,
    function: Option<&SharedMergeFunction>,
    verify: bool,
) -> Result<(MergeState, Vec<u8>)> {
    let parts = collect(segment, top, verify)?;
    Ok(merge::apply(
        function,
        top.key,
        parts.base.as_deref(),
        &parts.operands,
    ))
}

/// [`fold`] for a reader: the value, or the error a read of a failed merge
/// gives.
pub(crate) fn fold_for_read(
    segment: &Segment,
    top: &RecordView<'_>,
    function: Option<&SharedMergeFunction>,
    verify: bool,
) -> Result<Vec<u8>> {
    match fold(segment, top, function, verify)? {
        (MergeState::Resolved, value) => Ok(value),
        (state, _) => Err(Error::MergeFailed {
            key: top.key.to_vec(),
            no_function: state == MergeState::NoFunction,
        }),
    }
}

/// Checks the one step of a stack that starts at `record`, an operand
/// record of `segment`: the record below it is the operand one deeper of
/// the same key in the same segment, or for the bottom operand over a base,
/// a value. Checking this for every operand record of a segment checks
/// every stack in it ([`crate::Db::verify`]); a reader checks the steps of
/// the stacks it folds.
pub(crate) fn check_step(segment: &Segment, record: &RecordView<'_>) -> Result<()> {
    let MergeState::Operand(stack) = record.merge_state else {
        return Ok(());
    };
    match (stack.depth, stack.over_base) {
        (1, true) => base_value(segment, record, record, true).map(drop),
        (1, false) => Ok(()),
        (depth, _) => match below(segment, record, record, true)?.merge_state {
            MergeState::Operand(next) if next.depth + 1 == depth => Ok(()),
            _ => Err(broken(
                segment,
                record,
                "the stack's depths do not step down",
            )),
        },
    }
}

/// The record `record`'s `prev` names, which must be a version of the same
/// key in the same segment.
fn below<'s>(
    segment: &'s Segment,
    top: &RecordView<'_>,
    record: &RecordView<'_>,
    verify: bool,
) -> Result<RecordView<'s>> {
    let prev = record.prev;
    if prev == Location::NONE || prev.segment() != segment.id() {
        return Err(broken(segment, top, "a stack reaches out of its segment"));
    }
    let below = segment.record_at(prev.offset(), verify)?;
    if below.key != record.key || below.keyspace != record.keyspace {
        return Err(broken(segment, top, "a stack reaches another key"));
    }
    Ok(below)
}

/// The value of the base under the bottom record `bottom`: a put or a
/// resolved merge.
fn base_value<'s>(
    segment: &'s Segment,
    top: &RecordView<'_>,
    bottom: &RecordView<'_>,
    verify: bool,
) -> Result<Cow<'s, [u8]>> {
    let base = below(segment, top, bottom, verify)?;
    match (base.kind, base.merge_state) {
        (RecordKind::Put | RecordKind::Merge, MergeState::Resolved) => segment.value_of(&base),
        _ => Err(broken(segment, top, "a stack's base holds no value")),
    }
}

/// The corruption of the stack whose top is `top` (an operand record,
/// always in the long form), named by the top's offset.
fn broken(segment: &Segment, top: &RecordView<'_>, why: &str) -> Error {
    let key_at = top.key.as_ptr() as usize - segment.bytes().as_ptr() as usize;
    let offset = key_at.saturating_sub(RECORD_HEADER_BYTES);
    Error::corruption(
        segment.path(),
        offset as u64,
        format!("{why} (the merge stack of the record here)"),
    )
}
