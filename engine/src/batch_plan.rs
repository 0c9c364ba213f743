//! Turning a batch's operations into the records to log.
//!
//! Each operation consumes one sequence number (as in RocksDB). A range
//! delete becomes one delete record per key that has a value in the range at
//! that point of the batch — including keys put by earlier operations of the
//! same batch — and those records share the operation's sequence number.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use crossbeam_epoch as epoch;

use crate::batch::{BatchOp, WriteBatch};
use crate::error::{Error, Result};
use crate::format::record::RecordKind;
use crate::index::{KeyResolver, ScanDirection};
use crate::keyspace::{Keyspace, KeyspaceId, KeyspaceTable};
use crate::location::Location;
use crate::read::TableResolver;
use crate::shared::Shared;

/// One record to write, with the keyspace it goes to.
pub(crate) struct PendingRecord<'b> {
    pub ks: Arc<Keyspace>,
    pub kind: RecordKind,
    pub key: Cow<'b, [u8]>,
    pub value: &'b [u8],
    /// Index of the batch operation the record comes from.
    pub op: usize,
}

/// Keys the batch itself has set (`true`) or deleted (`false`) so far.
type Overlay = BTreeMap<(u32, Vec<u8>), bool>;

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
    let mut overlay = Overlay::new();
    let mut out = Vec::with_capacity(batch.len());
    for (op_index, op) in batch.ops().iter().enumerate() {
        let (id, kind, key, value): (_, _, &[u8], &[u8]) = match op {
            BatchOp::Put {
                keyspace,
                key,
                value,
            } => (keyspace, RecordKind::Put, key, value),
            BatchOp::Delete { keyspace, key } => (keyspace, RecordKind::Delete, key, &[]),
            BatchOp::DeleteRange {
                keyspace,
                start,
                end,
            } => {
                let ks = lookup(keyspaces, *keyspace)?;
                for key in keys_to_delete(shared, &ks, start, end, &overlay) {
                    overlay.insert((ks.id().0, key.clone()), false);
                    out.push(PendingRecord {
                        ks: ks.clone(),
                        kind: RecordKind::Delete,
                        key: key.into(),
                        value: &[],
                        op: op_index,
                    });
                }
                continue;
            }
        };
        if has_range {
            overlay.insert((id.0, key.to_vec()), kind == RecordKind::Put);
        }
        out.push(PendingRecord {
            ks: lookup(keyspaces, *id)?,
            kind,
            key: key.into(),
            value,
            op: op_index,
        });
    }
    Ok(out)
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
