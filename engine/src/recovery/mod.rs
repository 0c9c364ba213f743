//! Opening an existing database: find the segments the database needs,
//! verify every frame, cut a torn tail off the active log segment, finish or
//! discard an interrupted compaction, and rebuild each keyspace's index by
//! bulk load.
//!
//! Rules (see `FORMAT.md`):
//! - With a MANIFEST that lists the live segments, a listed file that is
//!   missing or damaged is corruption; an unlisted one is a leftover and is
//!   removed (see [`files`]). Every listed segment but the newest log
//!   segment must end with a seal frame and have no invalid frame.
//! - The newest log segment may end in a torn or holed tail, zeroed out
//!   through the file descriptor (never truncated, so no map can fault),
//!   but only above its durable watermark; damage or a premature end below
//!   it is corruption (see [`tail`]).
//! - A database written by format version 1 (no list, no watermark) opens
//!   with the older rules: a sealed compaction output replaces the segments
//!   its seal lists; an unsealed one is removed only if everything in it is
//!   still in other segments; damage in the newest log segment followed by a
//!   valid frame is corruption.
//! - For each key, the record with the highest sequence number wins.
//! - No page of a map that lies in a hole of a sparse file is ever read
//!   (see [`crate::segment::file_scan`]).
//! - In [`Mode::ReadOnly`] (see [`read_only`]) recovery changes nothing in
//!   the directory: it removes no leftover, zeroes no tail and marks no
//!   segment obsolete, and it takes the newest log segment's data up to its
//!   last complete valid frame (the primary may be writing the next one).

pub(crate) mod checkpoint_mark;
mod checkpointed;
mod classify;
pub(crate) mod files;
pub(crate) mod index_save;
pub(crate) mod read_only;
mod tail;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::db::keyspace::{Keyspace, KeyspaceId};
use crate::error::Result;
use crate::format::location::Location;
use crate::format::manifest::Manifest;
use crate::format::record::{RecordKind, RecordView};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentKind};
use crate::index::{AlexIndex, LeafForm};
use crate::io::FileSystem;
use crate::mvcc::key_order::KeyspaceOrders;
use crate::mvcc::range_tombstones::{RangeTombstone, RangeTombstones};
use crate::segment::file_scan::scan_file_from;
use crate::segment::resolver::TableResolver;
use crate::segment::scan::ScanOutcome;
use crate::segment::{Segment, SegmentTable};

/// Whether recovery may repair the directory (a primary holding the lock)
/// or must leave every byte of it as it found it (a reader without the lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Remove leftovers, zero a torn tail, finish an interrupted compaction.
    Primary,
    /// Change nothing; a torn tail of the newest log segment is data not
    /// yet written, and files not listed are ignored.
    ReadOnly,
}

/// What recovery rebuilt.
pub(crate) struct Recovered {
    pub segments: Vec<Arc<Segment>>,
    /// The unsealed newest log segment, if there is one.
    pub active: Option<Arc<Segment>>,
    pub keyspaces: Vec<Arc<Keyspace>>,
    pub last_seq: u64,
    pub next_segment_id: u32,
    /// Records read from the segments.
    pub records_read: u64,
    /// The index checkpoint open started from.
    pub checkpoint: Option<crate::recovery::checkpoint_mark::CheckpointMark>,
}

/// One record found by the scan.
struct Found<'a> {
    order: u64,
    key: &'a [u8],
    seq: u64,
    loc: Location,
    len: u32,
    /// For a range delete: the first key kept (`key` is the first deleted).
    range_end: Option<&'a [u8]>,
}

/// Recovers the database in `dir` described by `manifest`.
pub(crate) fn recover(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    manifest: &Manifest,
    segment_bytes: u64,
    mode: Mode,
    (form, orders): (LeafForm, &KeyspaceOrders),
) -> Result<Recovered> {
    let opened = files::open_segments(fs, dir, manifest.live.as_ref(), segment_bytes, mode)?;
    if let Some(live) = &manifest.live
        && let Some(recovered) =
            checkpointed::recover(fs, dir, manifest, live, &opened, mode, (form, orders))?
    {
        if mode == Mode::Primary {
            files::remove_leftovers(fs, &opened.leftovers)?;
        }
        return Ok(recovered);
    }
    let segments = opened.segments;
    // One pass over every segment: verify its frames and remember its records.
    let (scans, mut records) = scan_segments(&segments)?;
    let (live, last_log_unsealed) = match &manifest.live {
        Some(list) => classify::classify_listed(&segments, &scans, list, mode)?,
        None => classify::classify_v1(fs, dir, &segments, &scans, &records, mode)?,
    };
    let table = SegmentTable::new(live.iter().map(|&i| segments[i].clone()).collect());
    let mut by_ks: HashMap<u32, Vec<Found<'_>>> = HashMap::new();
    let known: BTreeSet<u32> = manifest.keyspaces.iter().map(|k| k.0).collect();
    let mut last_seq = 0;
    for &i in &live {
        let segment = &segments[i];
        last_seq = last_seq.max(segment.header().seq_floor.saturating_sub(1));
        last_seq = last_seq.max(scans[i].sequence_mark);
        for (keyspace, f) in std::mem::take(&mut records[i]) {
            segment.note_seq(f.seq);
            last_seq = last_seq.max(f.seq);
            if known.contains(&keyspace) {
                by_ks.entry(keyspace).or_default().push(f);
            } else {
                segment.add_dead(u64::from(f.len));
            }
        }
    }
    let keyspaces = build_keyspaces(manifest, &table, by_ks, (form, orders));
    if mode == Mode::Primary {
        files::remove_leftovers(fs, &opened.leftovers)?;
    }
    let last_log = live
        .iter()
        .rev()
        .map(|&i| &segments[i])
        .find(|s| s.kind() == SegmentKind::Log);
    let active = last_log.filter(|_| last_log_unsealed).cloned();
    Ok(Recovered {
        segments: live.iter().map(|&i| segments[i].clone()).collect(),
        active,
        keyspaces,
        last_seq,
        next_segment_id: opened.max_id.map_or(1, |m| m + 1),
        records_read: scans.iter().map(|s| s.records).sum(),
        checkpoint: None,
    })
}

/// Each segment's walk, and its records with their keyspaces.
type Scanned<'a> = (Vec<ScanOutcome>, Vec<Vec<(u32, Found<'a>)>>);

/// Verifies every frame of each of `segments` and collects its records
/// (noting each record's key in its segment's key span).
fn scan_segments(segments: &[Arc<Segment>]) -> Result<Scanned<'_>> {
    scan_segments_from(segments, |_| SEGMENT_HEADER_BYTES as u64)
}

/// [`scan_segments`], each segment from the frame at offset `from(segment)`.
fn scan_segments_from(
    segments: &[Arc<Segment>],
    from: impl Fn(&Segment) -> u64,
) -> Result<Scanned<'_>> {
    let mut scans = Vec::with_capacity(segments.len());
    let mut records = Vec::with_capacity(segments.len());
    for s in segments {
        let mut found = Vec::new();
        scans.push(scan_file_from(s, from(s), |offset, r: RecordView<'_>| {
            if r.kind == RecordKind::LogData {
                // Never indexed, and takes no sequence number: dead bytes.
                s.add_dead(r.encoded_len as u64);
                return;
            }
            s.note_key(r.keyspace, r.key);
            let loc = Location::new(s.id(), offset, r.kind == RecordKind::Delete);
            found.push((
                r.keyspace,
                Found {
                    order: model_order(r.key),
                    key: r.key,
                    seq: r.seq,
                    loc,
                    len: r.encoded_len as u32,
                    range_end: (r.kind == RecordKind::RangeDelete).then_some(r.value),
                },
            ));
        })?);
        records.push(found);
    }
    Ok((scans, records))
}

/// First 8 key bytes as a big-endian number: sorts like the key's prefix.
fn model_order(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// Picks each key's newest record and bulk-loads every keyspace's index.
/// A key whose newest record a range delete covers, or whose only record is
/// a delete, is left out of the index (its records are dead); the range
/// deletes are published already applied.
fn build_keyspaces(
    manifest: &Manifest,
    table: &SegmentTable,
    mut by_ks: HashMap<u32, Vec<Found<'_>>>,
    (form, orders): (LeafForm, &KeyspaceOrders),
) -> Vec<Arc<Keyspace>> {
    let resolver = TableResolver::new(table);
    let mut out = Vec::new();
    for (id, name) in &manifest.keyspaces {
        let (ranges, mut found): (Vec<Found<'_>>, Vec<Found<'_>>) = by_ks
            .remove(id)
            .unwrap_or_default()
            .into_iter()
            .partition(|f| f.range_end.is_some());
        for f in &ranges {
            // Dead from the start, as when it was written (see `log_writer`).
            if let Some(s) = table.get(f.loc.segment()) {
                s.add_dead(u64::from(f.len));
            }
        }
        let order = orders.of(*id);
        let tombstones = RangeTombstones::new(
            order.clone(),
            ranges
                .iter()
                .map(|f| {
                    let end = f.range_end.unwrap_or_default().to_vec();
                    Arc::new(RangeTombstone::new(f.key.to_vec(), end, f.seq, true))
                })
                .collect(),
        );
        found.sort_unstable_by(|a, b| {
            (a.order, a.key)
                .cmp(&(b.order, b.key))
                .then(b.seq.cmp(&a.seq))
        });
        let mut payloads = Vec::with_capacity(found.len());
        let mut live = 0u64;
        let mut prev_key: Option<&[u8]> = None;
        for (i, f) in found.iter().enumerate() {
            if prev_key == Some(f.key) {
                if let Some(s) = table.get(f.loc.segment()) {
                    s.add_dead(u64::from(f.len));
                }
                continue;
            }
            prev_key = Some(f.key);
            // A delete with no older record of its key hides nothing.
            let alone = found.get(i + 1).is_none_or(|next| next.key != f.key);
            if (f.loc.is_tombstone() && alone) || tombstones.hides(f.key, f.seq, u64::MAX) {
                if let Some(s) = table.get(f.loc.segment()) {
                    s.add_dead(u64::from(f.len));
                }
                continue;
            }
            if f.loc.is_tombstone() {
                // Counted dead as when it was written (see `log_writer`).
                if let Some(s) = table.get(f.loc.segment()) {
                    s.add_dead(u64::from(f.len));
                }
            }
            payloads.push(f.loc.0);
            live += u64::from(!f.loc.is_tombstone());
        }
        let index = AlexIndex::bulk_load_as(&payloads, &resolver, form);
        let keyspace = Keyspace::new(KeyspaceId(*id), name.clone(), index, live, order);
        keyspace.set_range_tombstones(tombstones);
        out.push(Arc::new(keyspace));
    }
    out
}
