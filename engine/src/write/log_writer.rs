//! The write path's steps: encode a batch as one frame, append frames to the
//! active log segment through the file descriptor, apply a batch to the
//! indexes; segment rotation and sealing; fdatasync. `write/queue.rs` groups
//! concurrent writers and `write/group.rs` drives these steps for a group.
//!
//! Writers are serialized by the writer lock. Syncs are shared: each waits
//! on the sync lock, and whoever gets it flushes everything written so far,
//! so writers that arrive together pay for one flush (group commit).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossbeam_epoch::{self as epoch, Guard};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind, SealBody};
use crate::format::location::{Location, MAX_SEGMENT_BYTES};
use crate::format::record::{self, RecordFields, RecordKind};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
use crate::index::{KeyResolver, LOOKUP_BATCH};
use crate::mvcc::range_tombstones::RangeTombstone;
use crate::segment::resolver::TableResolver;
use crate::segment::{GROW_CHUNK, Segment, SegmentTable};
use crate::write::plan::PendingRecord;
use crate::write::writer::Writer;

/// Room kept free at the end of a log segment for its seal frame.
pub(crate) const SEAL_RESERVE: u64 = 64;

/// Seals the active segment and starts a new one if `frame_len` does not fit.
pub(crate) fn ensure_room(shared: &Shared, w: &mut Writer, frame_len: u64) -> Result<()> {
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
    crate::write::durable::list_new_segment(shared, w, segment.id())
        .map_err(|e| shared.poison_with(e))?;
    let segment = Arc::new(segment);
    let table: SegmentTable = shared.segments.load().with(segment.clone());
    crate::segment::map_advice::advise_if_fits(&table);
    shared.publish_segments(Arc::new(table));
    w.active = segment;
    shared.request_compaction();
    Ok(())
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
    append_frames(shared, w, &frame)
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

/// Where each record of a batch went: its location and its encoded size.
#[derive(Debug, Default)]
pub(crate) struct Placed {
    pub locations: SmallVec<[Location; 4]>,
    pub lens: SmallVec<[u64; 4]>,
}

/// The newest record of each key staged in a write group but not yet in
/// the index, so a later record of the key links to it as its previous
/// version.
pub(crate) type StagedHeads<'b> = FxHashMap<(u32, &'b [u8]), Location>;

/// Appends the frame for `records` (sequence numbers from `first_seq`) to
/// `out`, whose first byte will land at offset `out_at` of the active
/// segment, and returns where each record went. `heads` is consulted before
/// the index for each key's previous version, and updated when `track`.
pub(crate) fn encode_frame<'b>(
    shared: &Shared,
    w: &Writer,
    records: &[PendingRecord<'b>],
    first_seq: u64,
    (out, out_at): (&mut Vec<u8>, u64),
    heads: &mut StagedHeads<'b>,
    track: bool,
) -> Result<Placed> {
    let count = u32::try_from(records.len())
        .map_err(|_| Error::InvalidArgument("batch has too many operations".into()))?;
    let segment_id = w.active.id();
    let frame_at = out.len();
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    let guard = epoch::pin();
    out.resize(frame_at + FRAME_HEADER_BYTES, 0);
    let mut placed = Placed::default();
    let mut lookups = HeadLookups::default();
    for (i, r) in records.iter().enumerate() {
        if i % LOOKUP_BATCH == 0 {
            let ahead = &records[i..records.len().min(i + LOOKUP_BATCH)];
            lookups.look_up(ahead, &resolver, &guard);
        }
        let key: &'b [u8] = r.key;
        let staged = match heads.is_empty() {
            true => None,
            false => heads.get(&(r.ks.id().0, key)),
        };
        let prev = match staged {
            _ if is_unindexed(r.kind) => Location::NONE,
            Some(loc) => *loc,
            None => lookups.heads[i % LOOKUP_BATCH].map_or(Location::NONE, Location),
        };
        if r.kind != RecordKind::LogData {
            w.active.note_key(r.ks.id().0, key);
        }
        let start = out.len();
        let loc = Location::new(
            segment_id,
            out_at + start as u64,
            r.kind == RecordKind::Delete,
        );
        // Each batch operation consumes one sequence number; the deletes a
        // range delete expands to share its number.
        record::encode_into(
            &RecordFields {
                kind: r.kind,
                merge_state: r.merge_state,
                keyspace: r.ks.id().0,
                seq: first_seq + r.op as u64,
                prev,
                key,
                operand: r.operand,
                value: &r.value,
            },
            out,
        );
        if track && !is_unindexed(r.kind) {
            heads.insert((r.ks.id().0, key), loc);
        }
        placed.locations.push(loc);
        placed.lens.push((out.len() - start) as u64);
    }
    let header = FrameHeader::for_body(
        FrameKind::Batch,
        &out[frame_at + FRAME_HEADER_BYTES..],
        count,
    );
    out[frame_at..frame_at + FRAME_HEADER_BYTES].copy_from_slice(&header.encode());
    Ok(placed)
}

/// The index's entries for the keys of a few records about to be encoded.
#[derive(Default)]
struct HeadLookups<'r> {
    /// The keys of one run of records in one keyspace.
    keys: SmallVec<[&'r [u8]; LOOKUP_BATCH]>,
    /// The payload the index holds for each record's key, if any.
    heads: SmallVec<[Option<u64>; LOOKUP_BATCH]>,
}

impl<'r> HeadLookups<'r> {
    /// Looks up the key of each of `records` (at most [`LOOKUP_BATCH`]):
    /// the lookups of each run of records in one keyspace go down the index
    /// together, so that their cache misses overlap (see
    /// [`crate::index::AlexIndex::get_candidates`]); each candidate is then
    /// confirmed against its record's key.
    fn look_up(
        &mut self,
        records: &'r [PendingRecord<'_>],
        resolver: &TableResolver,
        guard: &Guard,
    ) {
        self.heads.clear();
        for run in records.chunk_by(|a, b| Arc::ptr_eq(&a.ks, &b.ks)) {
            if let [one] = run {
                // Nothing to overlap with: the plain lookup is cheaper.
                self.heads.push(one.ks.index.get(one.key, resolver, guard));
                continue;
            }
            self.keys.clear();
            self.keys.extend(run.iter().map(|r| r.key));
            let from = self.heads.len();
            run[0]
                .ks
                .index
                .get_candidates(&self.keys, resolver, guard, &mut self.heads);
            for (head, key) in self.heads[from..].iter_mut().zip(&self.keys) {
                *head = head.filter(|&payload| resolver.key(payload) == *key);
            }
        }
    }
}

/// Whether records of `kind` stay out of the key's version chain: a range
/// delete (kept in the keyspace's range tombstones) and log data (never
/// read by key).
fn is_unindexed(kind: RecordKind) -> bool {
    matches!(kind, RecordKind::RangeDelete | RecordKind::LogData)
}

/// Appends a sequence-mark frame (the batch's last operations logged no
/// record) to `out`.
pub(crate) fn encode_sequence_mark(out: &mut Vec<u8>, last_seq: u64) {
    let body = last_seq.to_le_bytes();
    let header = FrameHeader::for_body(FrameKind::SequenceMark, &body, 0);
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&body);
}

/// Bytes of a sequence-mark frame.
pub(crate) const SEQUENCE_MARK_BYTES: u64 = FRAME_HEADER_BYTES as u64 + 8;

/// Writes `bytes` (whole frames) at the end of the active segment.
pub(crate) fn append_frames(shared: &Shared, w: &mut Writer, bytes: &[u8]) -> Result<()> {
    let at = w.active.written();
    if let Err(e) = w.active.write_at(bytes, at) {
        return Err(shared.poison_with(Error::io(w.active.path(), e)));
    }
    w.active.set_written(at + bytes.len() as u64);
    w.ticket += bytes.len() as u64;
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
    placed: &Placed,
    first_seq: u64,
) {
    let mut start = 0;
    for (i, r) in records.iter().enumerate() {
        if r.kind == RecordKind::RangeDelete {
            apply_points(
                shared,
                &records[start..i],
                &placed.locations[start..i],
                &placed.lens[start..i],
            );
            // A range delete counts as dead from the start, as a point
            // delete does (see `apply_points`).
            shared
                .segments
                .load()
                .add_dead_at(placed.locations[i], placed.lens[i]);
            r.ks.add_range_tombstone(RangeTombstone::new(
                r.key.to_vec(),
                r.value.to_vec(),
                first_seq + r.op as u64,
                false,
            ));
            start = i + 1;
        }
    }
    apply_points(
        shared,
        &records[start..],
        &placed.locations[start..],
        &placed.lens[start..],
    );
}

/// [`apply`] for a run of point records.
///
/// Dead bytes are counted exactly: a replaced version's size is read from
/// its record, whose key the index has just compared (so the read costs
/// next to nothing). An estimate (the size of the record replacing it) was
/// tried and measured no faster; it also outlived restarts through the
/// index checkpoint, and a segment of large values replaced by small ones
/// was then never counted dead enough to be compacted (the kill -9 soak's
/// directory kept such segments for ever).
fn apply_points(
    shared: &Shared,
    records: &[PendingRecord<'_>],
    locations: &[Location],
    lens: &[u64],
) {
    if records.is_empty() {
        return;
    }
    let table = shared.segments.load();
    let resolver = TableResolver::new(&table);
    // A delete's own bytes are counted dead when it is written: it is
    // dropped as soon as nothing older survives, so segments that hold
    // mostly deletes are the ones compaction should pick. (A delete it must
    // keep is counted dead again in the output, as recovery's scan counts
    // every delete.)
    for ((r, &at), &len) in records.iter().zip(locations).zip(lens) {
        // Log data is never indexed: dead from the start.
        if matches!(r.kind, RecordKind::Delete | RecordKind::LogData) {
            table.add_dead_at(at, len);
        }
    }
    // Inline up to a few keyspaces and records: a small write allocates
    // nothing here.
    let mut keyspaces: SmallVec<[u32; 4]> = records.iter().map(|r| r.ks.id().0).collect();
    keyspaces.sort_unstable();
    keyspaces.dedup();
    for ks in keyspaces {
        let members: SmallVec<[usize; 8]> = (0..records.len())
            .filter(|&i| records[i].ks.id().0 == ks && records[i].kind != RecordKind::LogData)
            .collect();
        let Some(&first) = members.first() else {
            continue;
        };
        let index = &records[first].ks.index;
        // Many writes to one keyspace: one copy-on-write per touched index node.
        let olds: SmallVec<[Option<u64>; 8]> = match members.as_slice() {
            [one] => {
                smallvec::smallvec![index.upsert(records[*one].key, locations[*one].0, &resolver)]
            }
            _ => {
                let entries: Vec<(&[u8], u64)> = members
                    .iter()
                    .map(|&i| (&*records[i].key, locations[i].0))
                    .collect();
                SmallVec::from_vec(index.upsert_batch(&entries, &resolver))
            }
        };
        if index.take_rebuild_signal() {
            shared.request_compaction();
        }
        for (&i, old) in members.iter().zip(olds) {
            let old = old.map(Location);
            let r = &records[i];
            r.ks.adjust_live_keys(
                old.is_some_and(|o| !o.is_tombstone()),
                r.kind != RecordKind::Delete,
            );
            // A replaced delete was counted dead when it was written.
            if let Some(old) = old.filter(|o| !o.is_tombstone()) {
                table.account_dead(old);
            }
        }
    }
}

/// Blocks until everything up to `ticket` is on stable storage, sharing the
/// flush with every writer waiting at the same time.
pub(crate) fn sync_up_to(shared: &Shared, ticket: u64) -> Result<()> {
    // A handle that failed refuses this even if everything it acknowledged
    // was synced: a caller who syncs to confirm durability must see it.
    shared.check_poison()?;
    let mut state = shared.sync.lock().unwrap_or_else(|e| e.into_inner());
    if state.synced_ticket >= ticket {
        return Ok(());
    }
    let (latest, active, end) = {
        let mut w = shared.lock_writer();
        crate::write::durable::log_watermark(shared, &mut w, state.durable);
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
