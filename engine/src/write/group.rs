//! Writing a group of batches under the writer lock (the leader's half of
//! RocksDB's write group; `write/queue.rs` forms the groups).
//!
//! Each batch is checked, expanded and encoded as its own frame (its own
//! sequence numbers, its own checksum, so it stays atomic after a crash)
//! into one buffer; the buffer is written with one `pwrite`; then the
//! batches are applied to the indexes in order and the last sequence number
//! is published, so readers see every batch of the group at once.
//!
//! A batch that fails its own checks (too large, a watched key changed, a
//! dropped keyspace) is left out and fails alone. A failed write of the
//! buffer fails every batch in it and poisons the handle, which then
//! refuses writes as after any I/O error.
//!
//! The buffer is written out early (a group may take several `pwrite`s)
//! when a batch must see the ones before it in the index: it merges into or
//! watches a key an earlier staged batch wrote, or it holds a range delete;
//! also when the active segment is full or the buffer is large.

use smallvec::SmallVec;
use std::sync::atomic::Ordering;

use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::frame::FRAME_HEADER_BYTES;
use crate::format::record::{self, RecordKind};
use crate::write::batch::{BatchOp, WriteBatch};
use crate::write::conflicts::{self, WatchedKey};
use crate::write::log_writer::{self, Placed, SEAL_RESERVE, SEQUENCE_MARK_BYTES, StagedHeads};
use crate::write::plan::{self, PendingRecord, PendingRecords};
use crate::write::writer::Writer;

/// Bytes a group buffers before writing them out even if batches remain.
const MAX_GROUP_BYTES: usize = 4 << 20;

/// One batch of a group, with the keys its commit is conditional on.
pub(crate) struct Member<'a> {
    pub batch: &'a WriteBatch,
    pub watched: &'a [WatchedKey<'a>],
}

/// A batch encoded into the group buffer, waiting for the `pwrite`.
struct StagedBatch<'b> {
    member: usize,
    records: PendingRecords<'b>,
    placed: Placed,
    first_seq: u64,
    /// The last sequence number the batch consumed (none for an empty batch).
    last_seq: Option<u64>,
}

/// What the group has encoded and not yet written.
struct Stage<'b> {
    buffer: Vec<u8>,
    batches: SmallVec<[StagedBatch<'b>; 1]>,
    heads: StagedHeads<'b>,
    /// Whether to remember each staged key (only needed with many batches).
    track: bool,
}

/// Each member's outcome, in order: the ticket to sync up to, or why its
/// batch was not written (inline for small groups: a lone write allocates
/// nothing for it).
pub(crate) type Outcomes = SmallVec<[Result<u64>; 4]>;

/// Writes the `members`' batches; returns each one's outcome (the ticket to
/// sync up to, or why it was not written), in order.
pub(crate) fn write(shared: &Shared, members: &[Member<'_>]) -> Outcomes {
    let mut outcomes: SmallVec<[Option<Result<u64>>; 4]> = members.iter().map(|_| None).collect();
    let mut w = shared.lock_writer();
    let mut stage = Stage {
        buffer: w.take_frame_buffer(),
        batches: SmallVec::new(),
        heads: StagedHeads::default(),
        track: members.len() > 1,
    };
    for (i, member) in members.iter().enumerate() {
        if let Err(e) = stage_member(shared, &mut w, &mut stage, i, member, &mut outcomes) {
            outcomes[i] = Some(Err(e));
        }
    }
    flush(shared, &mut w, &mut stage, &mut outcomes);
    w.return_frame_buffer(stage.buffer);
    drop(w);
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err(Error::Poisoned("the write group ended early".into()))))
        .collect()
}

/// Checks, expands and encodes one member's batch into the stage.
fn stage_member<'b>(
    shared: &Shared,
    w: &mut Writer,
    stage: &mut Stage<'b>,
    member: usize,
    m: &Member<'b>,
    outcomes: &mut [Option<Result<u64>>],
) -> Result<()> {
    m.batch.validate()?;
    shared.check_poison()?;
    let ranged = has_range_delete(m.batch);
    if ranged || depends_on_stage(stage, m) {
        flush(shared, w, stage, outcomes);
        shared.check_poison()?;
    }
    conflicts::check(shared, m.watched)?;
    let keyspaces = shared.keyspaces.load();
    let mut records = plan::expand(shared, &keyspaces, m.batch, w.active.id())?;
    let mut bytes = frame_bytes(&records) + mark_bytes(&records, m.batch);
    let full = w.active.written() + (stage.buffer.len() + bytes) as u64 + SEAL_RESERVE
        > w.active.capacity();
    if !stage.buffer.is_empty() && (full || stage.buffer.len() + bytes > MAX_GROUP_BYTES) {
        flush(shared, w, stage, outcomes);
        shared.check_poison()?;
    }
    if stage.buffer.is_empty() {
        let mut planned_for = w.active.id();
        log_writer::ensure_room(shared, w, bytes as u64)?;
        // A merge stacked on a version of the segment the log rotated away
        // from must be planned again: a stack never crosses segments.
        while planned_for != w.active.id() && stacks_any(&records) {
            planned_for = w.active.id();
            records = plan::expand(shared, &keyspaces, m.batch, planned_for)?;
            bytes = frame_bytes(&records) + mark_bytes(&records, m.batch);
            log_writer::ensure_room(shared, w, bytes as u64)?;
        }
    }
    shared.counters.writes.fetch_add(1, Ordering::Relaxed);
    shared
        .counters
        .keys_written
        .fetch_add(m.batch.len() as u64, Ordering::Relaxed);
    let staged = encode(shared, w, stage, member, m.batch, records)?;
    stage.batches.push(staged);
    if ranged {
        flush(shared, w, stage, outcomes);
    }
    Ok(())
}

/// Encodes a batch's frame (and sequence mark) into the stage buffer and
/// consumes its sequence numbers.
fn encode<'b>(
    shared: &Shared,
    w: &mut Writer,
    stage: &mut Stage<'b>,
    member: usize,
    batch: &WriteBatch,
    records: PendingRecords<'b>,
) -> Result<StagedBatch<'b>> {
    let first_seq = w.next_seq;
    let mut placed = Placed::default();
    if !records.is_empty() {
        let at = w.active.written();
        placed = log_writer::encode_frame(
            shared,
            w,
            &records,
            first_seq,
            (&mut stage.buffer, at),
            &mut stage.heads,
            stage.track || records.len() > 1,
        )?;
    }
    let last_seq = (!batch.is_empty()).then(|| first_seq + batch.len() as u64 - 1);
    if let Some(last) = last_seq
        && mark_bytes(&records, batch) > 0
    {
        log_writer::encode_sequence_mark(&mut stage.buffer, last);
    }
    w.next_seq += batch.len() as u64;
    Ok(StagedBatch {
        member,
        records,
        placed,
        first_seq,
        last_seq,
    })
}

/// Writes the stage buffer, applies its batches in order, publishes them,
/// and records each staged member's outcome.
fn flush(
    shared: &Shared,
    w: &mut Writer,
    stage: &mut Stage<'_>,
    outcomes: &mut [Option<Result<u64>>],
) {
    stage.heads.clear();
    if stage.batches.is_empty() {
        return;
    }
    write_and_apply(shared, w, stage, outcomes);
    stage.batches.clear();
}

/// [`flush`]'s work on a stage with batches (which it leaves for the
/// caller to clear: they stay where they are, not moved out).
fn write_and_apply(
    shared: &Shared,
    w: &mut Writer,
    stage: &mut Stage<'_>,
    outcomes: &mut [Option<Result<u64>>],
) {
    let batches = &stage.batches;
    if !stage.buffer.is_empty() {
        if let Some(first) = batches.iter().find(|b| !b.records.is_empty()) {
            w.active.note_seq(first.first_seq);
        }
        if let Some(last) = batches.iter().filter_map(|b| b.last_seq).max() {
            w.active.raise_seq_ceiling(last);
        }
        let written = log_writer::append_frames(shared, w, &stage.buffer);
        stage.buffer.clear();
        if let Err(e) = written {
            fail_all(batches, e, outcomes);
            return;
        }
    }
    for b in batches {
        log_writer::apply(shared, &b.records, &b.placed, b.first_seq);
        if b.records.iter().any(|r| r.kind == RecordKind::RangeDelete) {
            // Compaction applies range deletes (see `range_tombstones`).
            shared.request_compaction();
        }
    }
    if let Some(last) = batches.iter().filter_map(|b| b.last_seq).max() {
        shared.visible_seq.store(last, Ordering::Release);
    }
    for b in batches {
        outcomes[b.member] = Some(Ok(w.ticket));
    }
}

/// Gives the write error to the first batch and a refusal naming it to the
/// others.
fn fail_all(batches: &[StagedBatch<'_>], err: Error, outcomes: &mut [Option<Result<u64>>]) {
    let why = err.to_string();
    let mut err = Some(err);
    for b in batches {
        let e = err.take().unwrap_or_else(|| Error::Poisoned(why.clone()));
        outcomes[b.member] = Some(Err(e));
    }
}

/// Whether `m` must see the staged batches in the index: it merges into or
/// watches a key one of them wrote.
fn depends_on_stage(stage: &Stage<'_>, m: &Member<'_>) -> bool {
    if stage.heads.is_empty() {
        return false;
    }
    let staged = |ks: u32, key: &[u8]| stage.heads.contains_key(&(ks, key));
    let merges = m.batch.ops().any(|op| match op {
        BatchOp::Merge { keyspace, key, .. } => staged(keyspace.0, key),
        _ => false,
    });
    merges || m.watched.iter().any(|k| staged(k.keyspace.0, k.key))
}

/// Whether any of `records` is a stacked merge operand.
fn stacks_any(records: &[PendingRecord<'_>]) -> bool {
    records.iter().any(|r| r.merge_state.is_operand())
}

fn has_range_delete(batch: &WriteBatch) -> bool {
    batch
        .ops()
        .any(|op| matches!(op, BatchOp::DeleteRange { .. }))
}

/// Bytes of the batch frame for `records` (none if there are none).
fn frame_bytes(records: &[PendingRecord<'_>]) -> usize {
    if records.is_empty() {
        return 0;
    }
    let body: usize = records
        .iter()
        .map(|r| record::encoded_len(r.key.len(), r.operand.len() + r.value.len()))
        .sum();
    FRAME_HEADER_BYTES + body
}

/// Bytes of the sequence mark the batch needs: one when its last operations
/// logged no record, so the numbers they consumed survive a reopen.
fn mark_bytes(records: &[PendingRecord<'_>], batch: &WriteBatch) -> usize {
    // Log data takes no sequence number: the last numbered record counts.
    let numbered = records.iter().rev().find(|r| r.kind != RecordKind::LogData);
    let needed = numbered.map_or(0, |r| r.op + 1) < batch.len();
    if needed {
        SEQUENCE_MARK_BYTES as usize
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::db::keyspace::KeyspaceId;
    use crate::{Db, MAX_KEY_BYTES, Options, WriteOptions};

    fn put(pairs: &[(&[u8], &[u8])]) -> WriteBatch {
        let mut b = WriteBatch::new();
        for (k, v) in pairs {
            b.put(KeyspaceId(0), k, v);
        }
        b
    }

    /// One group written directly (no threads needed to form it): batches
    /// that overwrite, merge into and watch keys staged before them, one
    /// that fails its size check and one whose watched key changed. Each
    /// keeps its own sequence numbers, the failed ones write nothing, and
    /// the result survives a reopen.
    #[test]
    fn a_group_keeps_each_batch_atomic_and_fails_batches_alone() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            ..Options::default()
        };
        let ks = KeyspaceId(0);
        let append = |_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
            Some([old.unwrap_or_default(), operand].concat())
        };
        {
            let db = Db::open(dir.path(), options.clone()).unwrap();
            db.set_merge_function(ks, Some(Arc::new(append))).unwrap();
            db.put(ks, b"a", b"0", &WriteOptions::default()).unwrap();
            let before = db.snapshot();
            let mut merge_a = WriteBatch::new();
            merge_a.merge(ks, b"a", b"m");
            let mut too_long = put(&[(b"d", b"lost")]);
            too_long.put(ks, &vec![b'k'; MAX_KEY_BYTES + 1], b"x");
            let mut delete_b = WriteBatch::new();
            delete_b.delete(ks, b"b");
            let batches = [
                put(&[(b"a", b"1"), (b"b", b"1")]),
                put(&[(b"a", b"2")]),
                merge_a,
                put(&[(b"e", b"lost")]),
                too_long,
                delete_b,
                WriteBatch::new(),
            ];
            let watch_b = [WatchedKey {
                keyspace: ks,
                key: b"b",
                since_seq: 1,
            }];
            let members: Vec<Member<'_>> = batches
                .iter()
                .enumerate()
                .map(|(i, batch)| Member {
                    batch,
                    watched: if i == 3 { &watch_b } else { &[] },
                })
                .collect();
            let outcomes = write(&db.shared(), &members);
            let failed: Vec<bool> = outcomes.iter().map(Result::is_err).collect();
            assert_eq!(failed, [false, false, false, true, true, false, false]);
            assert!(matches!(outcomes[3], Err(Error::Conflict { .. })));
            assert!(matches!(outcomes[4], Err(Error::InvalidArgument(_))));
            assert_eq!(db.latest_sequence_number(), 1 + 2 + 1 + 1 + 1);
            assert_eq!(before.get(ks, b"a").unwrap().as_deref(), Some(&b"0"[..]));
            check(&db);
            let firsts: Vec<u64> = db
                .batches_since(0)
                .unwrap()
                .map(|b| b.unwrap().seq)
                .collect();
            assert_eq!(firsts, [1, 2, 4, 5, 6]);
        }
        let db = Db::open(dir.path(), options).unwrap();
        db.set_merge_function(ks, Some(Arc::new(append))).unwrap();
        check(&db);
        db.verify().unwrap();
    }

    fn check(db: &Db) {
        let ks = KeyspaceId(0);
        let get = |k: &[u8]| db.get_copied(ks, k).unwrap();
        assert_eq!(get(b"a").as_deref(), Some(&b"2m"[..]));
        assert_eq!(get(b"b"), None);
        assert_eq!(get(b"d"), None);
        assert_eq!(get(b"e"), None);
        assert_eq!(db.latest_sequence_number(), 6);
    }
}
