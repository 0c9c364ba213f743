//! The write path: encode a batch as one frame, append it to the active log
//! segment through the file descriptor, apply it to the indexes, then
//! publish its last sequence number so readers see the batch all at once.
//!
//! Writers are serialized by the writer lock. Sync writers then share
//! fdatasyncs: each waits on the sync lock, and whoever gets it flushes
//! everything written so far, so writers that arrive together pay for one
//! flush (group commit).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_epoch as epoch;

use crate::batch::WriteBatch;
use crate::batch_plan::{self, PendingRecord};
use crate::error::{Error, Result};
use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind, SealBody};
use crate::format::record::{self, RecordFields, RecordKind};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
use crate::location::{Location, MAX_SEGMENT_BYTES};
use crate::range_tombstones::RangeTombstone;
use crate::read::TableResolver;
use crate::segment::{GROW_CHUNK, Segment, SegmentTable};
use crate::shared::Shared;
use crate::write_conflicts::{self, WatchedKey};

/// Room kept free at the end of a log segment for its seal frame.
pub(crate) const SEAL_RESERVE: u64 = 64;

/// The writer's state, guarded by the writer lock.
#[derive(Debug)]
pub(crate) struct Writer {
    /// The segment appended to.
    pub active: Arc<Segment>,
    /// Sequence number of the next record.
    pub next_seq: u64,
    /// Total bytes appended since open; orders writes for group commit.
    pub ticket: u64,
    /// The manifest's contents (keyspaces, live segments).
    pub manifest: crate::format::manifest::Manifest,
    /// The largest offset a watermark frame in the active segment names.
    pub watermark_logged: u64,
    /// Reused encoding buffer.
    frame: Vec<u8>,
}

/// Group-commit state: everything up to this ticket is on stable storage.
#[derive(Debug, Default)]
pub(crate) struct SyncState {
    pub synced_ticket: u64,
    /// What the last successful fdatasync of a log segment covered.
    pub durable: Option<crate::format::live_segments::Watermark>,
}

impl Writer {
    pub fn new(
        active: Arc<Segment>,
        next_seq: u64,
        manifest: crate::format::manifest::Manifest,
    ) -> Self {
        Writer {
            active,
            next_seq,
            ticket: 0,
            manifest,
            watermark_logged: 0,
            frame: Vec::new(),
        }
    }
}

/// Writes `batch` atomically; returns the ticket to sync up to.
pub(crate) fn write(shared: &Shared, batch: &WriteBatch) -> Result<u64> {
    write_unless_changed(shared, batch, &[])
}

/// Writes `batch` atomically unless a `watched` key was written after its
/// `since_seq` (checked under the writer lock, so no write slips between
/// the check and this one); returns the ticket to sync up to.
pub(crate) fn write_unless_changed(
    shared: &Shared,
    batch: &WriteBatch,
    watched: &[WatchedKey<'_>],
) -> Result<u64> {
    batch.validate()?;
    let mut w = shared.lock_writer();
    shared.check_poison()?;
    write_conflicts::check(shared, watched)?;
    shared.counters.writes.fetch_add(1, Ordering::Relaxed);
    shared
        .counters
        .keys_written
        .fetch_add(batch.len() as u64, Ordering::Relaxed);
    let keyspaces = shared.keyspaces.load();
    let records = batch_plan::expand(shared, &keyspaces, batch)?;
    if records.is_empty() {
        // Nothing to log (e.g. range deletes of empty ranges); the operations
        // still consume their sequence numbers, as in RocksDB.
        if !batch.is_empty() {
            let last_seq = w.next_seq + batch.len() as u64 - 1;
            append_sequence_mark(shared, &mut w, last_seq)?;
            w.next_seq = last_seq + 1;
            shared.visible_seq.store(last_seq, Ordering::Release);
        }
        return Ok(w.ticket);
    }
    let body_len: usize = records
        .iter()
        .map(|r| record::encoded_len(r.key.len(), r.operand.len() + r.value.len()))
        .sum();
    let frame_len = (FRAME_HEADER_BYTES + body_len) as u64;
    ensure_room(shared, &mut w, frame_len)?;
    let first_seq = w.next_seq;
    let locations = encode(shared, &mut w, &records)?;
    w.next_seq += batch.len() as u64;
    append_frame(shared, &mut w, records.len(), first_seq)?;
    apply(shared, &records, &locations, first_seq);
    let last_seq = w.next_seq - 1;
    let numbered_records = records.iter().rev().find(|r| r.kind != RecordKind::LogData);
    if numbered_records.map_or(0, |r| r.op + 1) < batch.len() {
        append_sequence_mark(shared, &mut w, last_seq)?;
    }
    shared.visible_seq.store(last_seq, Ordering::Release);
    if records.iter().any(|r| r.kind == RecordKind::RangeDelete) {
        // Compaction applies range deletes (see `range_tombstones`).
        shared.request_compaction();
    }
    Ok(w.ticket)
}

/// Seals the active segment and starts a new one if `frame_len` does not fit.
fn ensure_room(shared: &Shared, w: &mut Writer, frame_len: u64) -> Result<()> {
    let written = w.active.written();
    if written + frame_len + SEAL_RESERVE <= w.active.capacity() {
        return Ok(());
    }
    let needed = SEGMENT_HEADER_BYTES as u64 + frame_len + SEAL_RESERVE;
    if needed >= MAX_SEGMENT_BYTES {
        return Err(Error::InvalidArgument(format!(
            "a batch of {frame_len} bytes cannot fit in one segment"
        )));
    }
    rotate(shared, w, needed.max(shared.options.segment_bytes))
}

/// Seals the active log segment (seal frame, fdatasync) and creates the next
/// one. Any failure poisons the handle.
pub(crate) fn rotate(shared: &Shared, w: &mut Writer, capacity: u64) -> Result<()> {
    seal(&w.active, &SealBody::default()).map_err(|e| shared.poison_with(e))?;
    let header = SegmentHeader {
        kind: SegmentKind::Log,
        id: shared.next_segment_id.fetch_add(1, Ordering::SeqCst),
        seq_floor: w.next_seq,
    };
    let segment = Segment::create(&shared.fs, &shared.dir, header, capacity, GROW_CHUNK)
        .and_then(|s| {
            shared
                .fs
                .sync_dir(&shared.dir)
                .map_err(|e| Error::io(&shared.dir, e))?;
            Ok(s)
        })
        .map_err(|e| shared.poison_with(e))?;
    crate::durable::list_new_segment(shared, w, segment.id()).map_err(|e| shared.poison_with(e))?;
    let segment = Arc::new(segment);
    let table: SegmentTable = shared.segments.load().with(segment.clone());
    shared.segments.store(Arc::new(table));
    w.active = segment;
    shared.request_compaction();
    Ok(())
}

/// Logs that the sequence numbers up to `last_seq` are used, for a batch
/// whose last operations wrote no record.
fn append_sequence_mark(shared: &Shared, w: &mut Writer, last_seq: u64) -> Result<()> {
    append_control_frame(shared, w, FrameKind::SequenceMark, &last_seq.to_le_bytes())
}

/// Appends a frame that carries no records (a sequence mark, a watermark).
pub(crate) fn append_control_frame(
    shared: &Shared,
    w: &mut Writer,
    kind: FrameKind,
    body: &[u8],
) -> Result<()> {
    let header = FrameHeader::for_body(kind, body, 0);
    let mut frame = header.encode().to_vec();
    frame.extend_from_slice(body);
    ensure_room(shared, w, frame.len() as u64)?;
    let at = w.active.written();
    if let Err(e) = w.active.write_at(&frame, at) {
        return Err(shared.poison_with(Error::io(w.active.path(), e)));
    }
    w.active.set_written(at + frame.len() as u64);
    w.ticket += frame.len() as u64;
    Ok(())
}

/// Writes a seal frame at the end of `segment` and flushes it.
pub(crate) fn seal(segment: &Segment, body: &SealBody) -> Result<()> {
    let bytes = body.encode();
    let header = FrameHeader::for_body(FrameKind::Seal, &bytes, 0);
    let mut frame = header.encode().to_vec();
    frame.extend_from_slice(&bytes);
    let at = segment.written();
    segment
        .write_at(&frame, at)
        .and_then(|_| segment.sync())
        .map_err(|e| Error::io(segment.path(), e))?;
    segment.set_written(at + frame.len() as u64);
    Ok(())
}

/// Encodes the records into the writer's frame buffer (after room for the
/// frame header) and returns each record's location.
fn encode(shared: &Shared, w: &mut Writer, records: &[PendingRecord<'_>]) -> Result<Vec<Location>> {
    let segment_id = w.active.id();
    let frame_start = w.active.written();
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    let guard = epoch::pin();
    let mut same_batch: HashMap<(u32, &[u8]), Location> = HashMap::new();
    let mut frame = std::mem::take(&mut w.frame);
    frame.clear();
    frame.resize(FRAME_HEADER_BYTES, 0);
    let mut locations = Vec::with_capacity(records.len());
    for r in records {
        let key: &[u8] = &r.key;
        let prev = match same_batch.get(&(r.ks.id().0, key)) {
            _ if is_unindexed(r.kind) => Location::NONE,
            Some(loc) => *loc,
            None => {
                r.ks.index
                    .get(key, &resolver, &guard)
                    .map_or(Location::NONE, Location)
            }
        };
        if r.kind != RecordKind::LogData {
            w.active.note_key(r.ks.id().0, key);
        }
        let offset = frame_start + frame.len() as u64;
        let loc = Location::new(segment_id, offset, r.kind == RecordKind::Delete);
        // Each batch operation consumes one sequence number; the deletes a
        // range delete expands to share its number.
        let seq = w.next_seq + r.op as u64;
        record::encode_into(
            &RecordFields {
                kind: r.kind,
                merge_state: r.merge_state,
                keyspace: r.ks.id().0,
                seq,
                prev,
                key,
                operand: r.operand,
                value: &r.value,
            },
            &mut frame,
        );
        if records.len() > 1 && !is_unindexed(r.kind) {
            same_batch.insert((r.ks.id().0, key), loc);
        }
        locations.push(loc);
    }
    w.frame = frame;
    Ok(locations)
}

/// Whether records of `kind` stay out of the key's version chain: a range
/// delete (kept in the keyspace's range tombstones) and log data (never
/// read by key).
fn is_unindexed(kind: RecordKind) -> bool {
    matches!(kind, RecordKind::RangeDelete | RecordKind::LogData)
}

/// Fills in the frame header and appends the frame to the active segment.
fn append_frame(shared: &Shared, w: &mut Writer, count: usize, first_seq: u64) -> Result<()> {
    let count = u32::try_from(count)
        .map_err(|_| Error::InvalidArgument("batch has too many operations".into()))?;
    let header = FrameHeader::for_body(FrameKind::Batch, &w.frame[FRAME_HEADER_BYTES..], count);
    w.frame[..FRAME_HEADER_BYTES].copy_from_slice(&header.encode());
    let at = w.active.written();
    if let Err(e) = w.active.write_at(&w.frame, at) {
        return Err(shared.poison_with(Error::io(w.active.path(), e)));
    }
    w.active.note_seq(first_seq);
    w.active.set_written(at + w.frame.len() as u64);
    w.ticket += w.frame.len() as u64;
    Ok(())
}

/// Points the indexes at the new records, accounts the versions they
/// replace as dead bytes, and publishes range deletes. Records are applied
/// in runs split at range deletes, so each range delete is published after
/// the batch's earlier writes and before its later ones (their sequence
/// numbers already order them; the runs keep each index update simple).
pub(crate) fn apply(
    shared: &Shared,
    records: &[PendingRecord<'_>],
    locations: &[Location],
    first_seq: u64,
) {
    let mut start = 0;
    for (i, r) in records.iter().enumerate() {
        if r.kind == RecordKind::RangeDelete {
            apply_points(shared, &records[start..i], &locations[start..i]);
            r.ks.add_range_tombstone(RangeTombstone::new(
                r.key.to_vec(),
                r.value.to_vec(),
                first_seq + r.op as u64,
                false,
            ));
            start = i + 1;
        }
    }
    apply_points(shared, &records[start..], &locations[start..]);
}

/// [`apply`] for a run of point records.
fn apply_points(shared: &Shared, records: &[PendingRecord<'_>], locations: &[Location]) {
    if records.is_empty() {
        return;
    }
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    // A delete's own bytes are counted dead when it is written: it is
    // dropped as soon as nothing older survives, so segments that hold
    // mostly deletes are the ones compaction should pick. (A delete it must
    // keep is copied and no longer counted; the estimate errs towards
    // compacting.)
    for (r, &at) in records.iter().zip(locations) {
        // Log data is never indexed: dead from the start.
        if matches!(r.kind, RecordKind::Delete | RecordKind::LogData) {
            account_dead(&table, at);
        }
    }
    let mut keyspaces: Vec<u32> = records.iter().map(|r| r.ks.id().0).collect();
    keyspaces.sort_unstable();
    keyspaces.dedup();
    for ks in keyspaces {
        let members: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].ks.id().0 == ks && records[i].kind != RecordKind::LogData)
            .collect();
        let Some(&first) = members.first() else {
            continue;
        };
        let index = &records[first].ks.index;
        // Many writes to one keyspace: one copy-on-write per touched index node.
        let olds: Vec<Option<u64>> = match members.as_slice() {
            [one] => vec![index.upsert(&records[*one].key, locations[*one].0, &resolver)],
            _ => {
                let entries: Vec<(&[u8], u64)> = members
                    .iter()
                    .map(|&i| (&*records[i].key, locations[i].0))
                    .collect();
                index.upsert_batch(&entries, &resolver)
            }
        };
        for (&i, old) in members.iter().zip(olds) {
            let old = old.map(Location);
            let r = &records[i];
            r.ks.adjust_live_keys(
                old.is_some_and(|o| !o.is_tombstone()),
                r.kind != RecordKind::Delete,
            );
            // A replaced delete was counted dead when it was written.
            if let Some(old) = old.filter(|o| !o.is_tombstone()) {
                account_dead(&table, old);
            }
        }
    }
}

/// Adds the size of the record at `loc` to its segment's dead bytes.
pub(crate) fn account_dead(table: &SegmentTable, loc: Location) {
    if let Some(segment) = table.get(loc.segment())
        && let Ok(record) = segment.record_at(loc.offset(), false)
    {
        segment.add_dead(record.encoded_len as u64);
    }
}

/// Blocks until everything up to `ticket` is on stable storage, sharing the
/// flush with every writer waiting at the same time.
pub(crate) fn sync_up_to(shared: &Shared, ticket: u64) -> Result<()> {
    let mut state = shared.sync.lock().unwrap_or_else(|e| e.into_inner());
    if state.synced_ticket >= ticket {
        return Ok(());
    }
    shared.check_poison()?;
    let (latest, active, end) = {
        let mut w = shared.lock_writer();
        crate::durable::log_watermark(shared, &mut w, state.durable);
        (w.ticket, w.active.clone(), w.active.written())
    };
    shared.check_poison()?;
    if let Err(e) = active.sync() {
        return Err(shared.poison_with(Error::io(active.path(), e)));
    }
    state.synced_ticket = latest;
    state.durable = Some(crate::format::live_segments::Watermark {
        segment: active.id(),
        offset: end,
    });
    Ok(())
}
