//! Turning a batch's operations into the records to log.
//!
//! Each operation consumes one sequence number (as in RocksDB). A range
//! delete is one record whatever it covers (see [`crate::mvcc::range_tombstones`]);
//! its sequence number orders it after the batch's earlier operations and
//! before its later ones. A merge is planned here, over the key's state at
//! that point of the batch: stacked as an operand, or resolved (see
//! [`crate::write::stacking`]).

use smallvec::SmallVec;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use crate::db::keyspace::{Keyspace, KeyspaceId, KeyspaceTable};
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::record::{MergeState, RecordKind};
use crate::write::batch::{BatchOp, WriteBatch};
use crate::write::stacking::{self, KeyState};

/// One record to write, with the keyspace it goes to.
pub(crate) struct PendingRecord<'b> {
    pub ks: Arc<Keyspace>,
    pub kind: RecordKind,
    pub merge_state: MergeState,
    pub key: &'b [u8],
    /// A merge's operand (empty for the other kinds).
    pub operand: &'b [u8],
    /// The value: a put's, or the value a merge resolved to (empty for a
    /// stacked operand).
    pub value: Cow<'b, [u8]>,
    /// Offset of the record's batch operation among the batch's
    /// sequence-numbered operations (log data is not one of them).
    pub op: usize,
}

impl<'b> PendingRecord<'b> {
    fn new(ks: Arc<Keyspace>, kind: RecordKind, key: &'b [u8], op: usize) -> Self {
        PendingRecord {
            ks,
            kind,
            merge_state: MergeState::Resolved,
            key,
            operand: &[],
            value: Cow::Borrowed(&[]),
            op,
        }
    }
}

/// Each key's state after the batch's operations so far, kept only for
/// batches that merge.
type Written<'b> = HashMap<(u32, &'b [u8]), KeyState<'b>>;

/// A batch's records, inline for a batch of one or two writes (most
/// writes), so that writing them allocates nothing for the list.
pub(crate) type PendingRecords<'b> = SmallVec<[PendingRecord<'b>; 2]>;

/// The records for `batch`, in order, to be written to segment `active`.
/// Runs under the writer lock, so the indexes cannot change underneath.
pub(crate) fn expand<'b>(
    shared: &Shared,
    keyspaces: &KeyspaceTable,
    batch: &'b WriteBatch,
    active: u32,
) -> Result<PendingRecords<'b>> {
    let has_merge = batch.ops().any(|op| matches!(op, BatchOp::Merge { .. }));
    let mut written = Written::new();
    let mut ranges: Vec<(u32, &[u8], &[u8])> = Vec::new();
    let mut out = PendingRecords::with_capacity(batch.len());
    let mut numbered = 0;
    for op in batch.ops() {
        // An operation's offset in the batch's sequence numbers: log data
        // takes none, so it shares the offset of the operation after it.
        let op_index = numbered;
        numbered += usize::from(!matches!(op, BatchOp::LogData { .. }));
        match op {
            BatchOp::Put {
                keyspace,
                key,
                value,
            } => {
                let mut r = PendingRecord::new(
                    lookup(keyspaces, keyspace)?,
                    RecordKind::Put,
                    key,
                    op_index,
                );
                r.value = Cow::Borrowed(value);
                out.push(r);
            }
            BatchOp::Delete { keyspace, key } => out.push(PendingRecord::new(
                lookup(keyspaces, keyspace)?,
                RecordKind::Delete,
                key,
                op_index,
            )),
            BatchOp::Merge {
                keyspace,
                key,
                operand,
            } => {
                let ks = lookup(keyspaces, keyspace)?;
                let mut state = match written.remove(&(ks.id().0, key)) {
                    Some(state) => state,
                    None if covered_in_batch(&ranges, &ks, key) => KeyState::absent(),
                    None => KeyState::of_head(shared, &ks, key)?,
                };
                let (merge_state, value) =
                    stacking::plan_merge(shared, &ks, key, (&mut state, operand), &out, active)?;
                written.insert((ks.id().0, key), state);
                let mut r = PendingRecord::new(ks, RecordKind::Merge, key, op_index);
                r.merge_state = merge_state;
                r.operand = operand;
                r.value = Cow::Owned(value);
                out.push(r);
                continue;
            }
            BatchOp::DeleteRange {
                keyspace,
                start,
                end,
            } => {
                let ks = lookup(keyspaces, keyspace)?;
                // An empty or reversed range deletes nothing: no record (the
                // operation still consumes its sequence number).
                if !ks.range_order().is_empty_range(start, end) {
                    if has_merge {
                        forget_written_in(&mut written, &ks, start, end);
                        ranges.push((ks.id().0, start, end));
                    }
                    let mut r = PendingRecord::new(ks, RecordKind::RangeDelete, start, op_index);
                    r.value = Cow::Borrowed(end);
                    out.push(r);
                }
                continue;
            }
            BatchOp::LogData { blob } => {
                // Kept in the default keyspace's place with no key; never
                // indexed (see `log_writer`).
                let mut r = PendingRecord::new(
                    lookup(keyspaces, KeyspaceId(0))?,
                    RecordKind::LogData,
                    &[],
                    op_index,
                );
                r.value = Cow::Borrowed(blob);
                out.push(r);
                continue;
            }
        }
        if has_merge && let Some(r) = out.last() {
            written.insert((r.ks.id().0, r.key), KeyState::after(&out, out.len() - 1));
        }
    }
    Ok(out)
}

/// Whether a range delete earlier in the batch covers `key`.
fn covered_in_batch(ranges: &[(u32, &[u8], &[u8])], ks: &Keyspace, key: &[u8]) -> bool {
    let order = ks.range_order();
    ranges
        .iter()
        .any(|&(id, start, end)| id == ks.id().0 && order.covers(start, end, key))
}

/// Marks the keys the batch wrote in `[start, end)` as deleted.
fn forget_written_in(written: &mut Written<'_>, ks: &Keyspace, start: &[u8], end: &[u8]) {
    let order = ks.range_order();
    for ((id, key), state) in written.iter_mut() {
        if *id == ks.id().0 && order.covers(start, end, key) {
            *state = KeyState::absent();
        }
    }
}

fn lookup(keyspaces: &KeyspaceTable, id: KeyspaceId) -> Result<Arc<Keyspace>> {
    match keyspaces.get(id) {
        Some(ks) if !ks.is_dropped() => Ok(ks.clone()),
        Some(_) => Err(Error::InvalidArgument(format!(
            "keyspace {} was dropped",
            id.0
        ))),
        None => Err(Error::InvalidArgument(format!(
            "keyspace {} does not exist (dropped?)",
            id.0
        ))),
    }
}
