//! Turning a batch's operations into the records to log.
//!
//! Each operation consumes one sequence number (as in RocksDB). A range
//! delete becomes one delete record per key that has a value in the range at
//! that point of the batch — including keys put by earlier operations of the
//! same batch — and those records share the operation's sequence number.
//! A merge is resolved here, over the key's value at that point of the
//! batch (see [`crate::merge`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use crossbeam_epoch as epoch;

use crate::batch::{BatchOp, WriteBatch};
use crate::error::{Error, Result};
use crate::format::record::{MergeState, RecordKind};
use crate::index::{KeyResolver, ScanDirection};
use crate::keyspace::{Keyspace, KeyspaceId, KeyspaceTable};
use crate::location::Location;
use crate::merge::{self, MergeBase};
use crate::read::TableResolver;
use crate::shared::Shared;

/// One record to write, with the keyspace it goes to.
pub(crate) struct PendingRecord<'b> {
    pub ks: Arc<Keyspace>,
    pub kind: RecordKind,
    pub merge_state: MergeState,
    pub key: Cow<'b, [u8]>,
    /// A merge's operand (empty for the other kinds).
    pub operand: &'b [u8],
    /// The value: a put's, or the value a merge resolved to.
    pub value: Cow<'b, [u8]>,
    /// Index of the batch operation the record comes from.
    pub op: usize,
}

impl<'b> PendingRecord<'b> {
    fn new(ks: Arc<Keyspace>, kind: RecordKind, key: Cow<'b, [u8]>, op: usize) -> Self {
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

    /// What a later merge of the same key in this batch builds on.
    fn as_merge_base(&self) -> MergeBase {
        match (self.kind, self.merge_state) {
            (RecordKind::Delete, _) => MergeBase::Absent,
            (_, MergeState::Resolved) => MergeBase::Value(self.value.to_vec()),
            (_, state) => MergeBase::Unresolved(state),
        }
    }
}

/// Keys the batch itself has set (`true`) or deleted (`false`) so far.
type Overlay = BTreeMap<(u32, Vec<u8>), bool>;

/// Each key's value after the batch's operations so far, kept only for
/// batches that merge.
type Written = HashMap<(u32, Vec<u8>), MergeBase>;

/// The records for `batch`, in order. Runs under the writer lock, so the
/// indexes cannot change underneath.
pub(crate) fn expand<'b>(
    shared: &Shared,
    keyspaces: &KeyspaceTable,
    batch: &'b WriteBatch,
) -> Result<Vec<PendingRecord<'b>>> {
    let has_range = batch
        .ops()
        .iter()
        .any(|op| matches!(op, BatchOp::DeleteRange { .. }));
    let has_merge = batch
        .ops()
        .iter()
        .any(|op| matches!(op, BatchOp::Merge { .. }));
    let mut overlay = Overlay::new();
    let mut written = Written::new();
    let mut out: Vec<PendingRecord<'b>> = Vec::with_capacity(batch.len());
    for (op_index, op) in batch.ops().iter().enumerate() {
        let first = out.len();
        match op {
            BatchOp::Put {
                keyspace,
                key,
                value,
            } => {
                let mut r = PendingRecord::new(
                    lookup(keyspaces, *keyspace)?,
                    RecordKind::Put,
                    key.as_slice().into(),
                    op_index,
                );
                r.value = Cow::Borrowed(value);
                out.push(r);
            }
            BatchOp::Delete { keyspace, key } => out.push(PendingRecord::new(
                lookup(keyspaces, *keyspace)?,
                RecordKind::Delete,
                key.as_slice().into(),
                op_index,
            )),
            BatchOp::Merge {
                keyspace,
                key,
                operand,
            } => {
                let ks = lookup(keyspaces, *keyspace)?;
                let base = match written.get(&(ks.id().0, key.clone())) {
                    Some(base) => base.clone(),
                    None => current_base(shared, &ks, key)?,
                };
                let (state, value) =
                    merge::resolve(ks.merge_function().as_ref(), key, &base, operand);
                let mut r =
                    PendingRecord::new(ks, RecordKind::Merge, key.as_slice().into(), op_index);
                r.merge_state = state;
                r.operand = operand;
                r.value = Cow::Owned(value);
                out.push(r);
            }
            BatchOp::DeleteRange {
                keyspace,
                start,
                end,
            } => {
                let ks = lookup(keyspaces, *keyspace)?;
                for key in keys_to_delete(shared, &ks, start, end, &overlay) {
                    out.push(PendingRecord::new(
                        ks.clone(),
                        RecordKind::Delete,
                        key.into(),
                        op_index,
                    ));
                }
            }
        }
        for r in &out[first..] {
            if has_range {
                overlay.insert((r.ks.id().0, r.key.to_vec()), r.kind != RecordKind::Delete);
            }
            if has_merge {
                written.insert((r.ks.id().0, r.key.to_vec()), r.as_merge_base());
            }
        }
    }
    Ok(out)
}

/// The newest value of `key` in `ks`, for a merge to build on. Runs under
/// the writer lock, so the head cannot change or move underneath.
fn current_base(shared: &Shared, ks: &Keyspace, key: &[u8]) -> Result<MergeBase> {
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    let guard = epoch::pin();
    let Some(head) = ks.index.get(key, &resolver, &guard).map(Location) else {
        return Ok(MergeBase::Absent);
    };
    let segment = table.get(head.segment()).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "the newest version of a key lies in segment {}, which is not open",
            head.segment()
        ))
    })?;
    let record = segment.record_at(head.offset(), shared.options.verify_checksums)?;
    Ok(match (record.kind, record.merge_state) {
        (RecordKind::Delete, _) => MergeBase::Absent,
        (_, MergeState::Resolved) => MergeBase::Value(record.value.to_vec()),
        (_, state) => MergeBase::Unresolved(state),
    })
}

fn lookup(keyspaces: &KeyspaceTable, id: KeyspaceId) -> Result<Arc<Keyspace>> {
    keyspaces.get(id).cloned().ok_or_else(|| {
        Error::InvalidArgument(format!("keyspace {} does not exist (dropped?)", id.0))
    })
}

/// Keys in `[start, end)` with a value at this point of the batch: those
/// the index holds as live, corrected by what the batch did before.
fn keys_to_delete(
    shared: &Shared,
    ks: &Keyspace,
    start: &[u8],
    end: &[u8],
    overlay: &Overlay,
) -> Vec<Vec<u8>> {
    if start >= end {
        return Vec::new();
    }
    let mut keys: BTreeMap<Vec<u8>, bool> = live_keys_in(shared, ks, start, end)
        .into_iter()
        .map(|k| (k, true))
        .collect();
    let lo = (ks.id().0, start.to_vec());
    let hi = (ks.id().0, end.to_vec());
    for ((_, key), live) in overlay.range((Bound::Included(lo), Bound::Excluded(hi))) {
        keys.insert(key.clone(), *live);
    }
    keys.into_iter()
        .filter(|(_, live)| *live)
        .map(|(k, _)| k)
        .collect()
}

/// Keys in `[start, end)` whose newest version in the index is a put.
fn live_keys_in(shared: &Shared, ks: &Keyspace, start: &[u8], end: &[u8]) -> Vec<Vec<u8>> {
    const CHUNK: usize = 256;
    let mut keys = Vec::new();
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    let mut from = Bound::Included(start.to_vec());
    loop {
        let guard = epoch::pin();
        let mut payloads = Vec::with_capacity(CHUNK);
        let bound = match &from {
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        };
        ks.index.collect(
            bound,
            ScanDirection::Forward,
            CHUNK,
            &resolver,
            &guard,
            &mut payloads,
        );
        for &p in &payloads {
            let key = resolver.key(p);
            if key >= end {
                return keys;
            }
            if !Location(p).is_tombstone() {
                keys.push(key.to_vec());
            }
        }
        match payloads.last() {
            Some(&p) if payloads.len() == CHUNK => from = Bound::Excluded(resolver.key(p).to_vec()),
            _ => return keys,
        }
    }
}
