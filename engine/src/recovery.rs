//! Opening an existing database: find the segments, verify every frame,
//! cut a torn tail off the active log segment, finish or discard an
//! interrupted compaction, and rebuild each keyspace's index by bulk load.
//!
//! Rules (see `FORMAT.md`):
//! - Every log segment but the newest must end with a seal frame; any
//!   invalid frame in it is corruption.
//! - In the newest log segment, an invalid frame with no valid frame after
//!   it is a torn tail: it is zeroed out through the file descriptor (never
//!   truncated, so no map can fault). An invalid frame followed by a valid
//!   one is corruption.
//! - A compaction output without its seal is an orphan of a crash: removed.
//!   A sealed one replaces the segments its seal lists: those are removed.
//! - For each key, the record with the highest sequence number wins.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::manifest::Manifest;
use crate::format::record::{RecordKind, RecordView};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
use crate::index::AlexIndex;
use crate::io::{FileSystem, OpenMode};
use crate::keyspace::{Keyspace, KeyspaceId};
use crate::location::Location;
use crate::range_tombstones::{RangeTombstone, RangeTombstones};
use crate::read::TableResolver;
use crate::segment::scan::{ScanOutcome, scan_frames, valid_frame_after};
use crate::segment::{self, Segment, SegmentTable};

/// What recovery rebuilt.
pub(crate) struct Recovered {
    pub segments: Vec<Arc<Segment>>,
    /// The unsealed newest log segment, if there is one.
    pub active: Option<Arc<Segment>>,
    pub keyspaces: Vec<Arc<Keyspace>>,
    pub last_seq: u64,
    pub next_segment_id: u32,
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
) -> Result<Recovered> {
    let (segments, max_id) = open_segments(fs, dir, segment_bytes)?;
    // One pass over every segment: verify its frames and remember its records.
    let mut scans = Vec::with_capacity(segments.len());
    let mut records: Vec<Vec<(u32, Found<'_>)>> = Vec::with_capacity(segments.len());
    for s in &segments {
        let mut found = Vec::new();
        scans.push(scan_frames(s.bytes(), |offset, r: RecordView<'_>| {
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
        }));
        records.push(found);
    }
    let (live, last_log_unsealed) = classify(fs, dir, &segments, &scans)?;
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
    let keyspaces = build_keyspaces(manifest, &table, by_ks);
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
        next_segment_id: max_id.map_or(1, |m| m + 1),
    })
}

/// First 8 key bytes as a big-endian number: sorts like the key's prefix.
fn model_order(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// Opens every segment file and reads its header. A newest file whose
/// header was never completely written (a crash while creating it) is
/// removed; any other bad header is corruption.
fn open_segments(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    segment_bytes: u64,
) -> Result<(Vec<Arc<Segment>>, Option<u32>)> {
    let names = fs.list_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut ids: Vec<u32> = names
        .iter()
        .filter_map(|n| segment::parse_file_name(n))
        .collect();
    ids.sort_unstable();
    let max_id = ids.last().copied();
    let mut out = Vec::with_capacity(ids.len());
    for &id in &ids {
        let path = dir.join(segment::file_name(id));
        let file = fs
            .open(&path, OpenMode::Existing)
            .map_err(|e| Error::io(&path, e))?;
        let mut head = [0u8; SEGMENT_HEADER_BYTES];
        let read = file.read_exact_at(&mut head, 0);
        let short = read.is_err();
        let header = match read
            .map_err(|e| e.to_string())
            .and_then(|_| SegmentHeader::decode(&head))
        {
            Ok(h) if h.id == id => h,
            Ok(_) => {
                return Err(Error::corruption(
                    &path,
                    0,
                    "segment id in header does not match file name",
                ));
            }
            // The newest file with a header that was never completely written
            // (a crash while creating it) holds no frame: remove it.
            Err(_) if Some(id) == max_id && (short || head.iter().all(|&b| b == 0)) => {
                drop(file);
                fs.remove_file(&path).map_err(|e| Error::io(&path, e))?;
                continue;
            }
            Err(reason) => return Err(Error::corruption(&path, 0, reason)),
        };
        // Log segments may become the active one: map room to grow.
        let capacity = match header.kind {
            SegmentKind::Log => segment_bytes,
            SegmentKind::Compacted => 0,
        };
        out.push(Arc::new(Segment::from_open_file(
            fs, header, file, 0, capacity,
        )?));
    }
    Ok((out, max_id))
}

/// Decides which segments are live, removes orphans and replaced ones, and
/// repairs a torn tail. Returns the indexes of the live segments (in id
/// order) and whether the newest log segment is unsealed.
fn classify(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    segments: &[Arc<Segment>],
    scans: &[ScanOutcome],
) -> Result<(Vec<usize>, bool)> {
    let mut replaced = BTreeSet::new();
    let mut keep = Vec::new();
    for (i, (s, scan)) in segments.iter().zip(scans).enumerate() {
        if s.kind() == SegmentKind::Compacted {
            match (&scan.seal, &scan.damage) {
                (Some(seal), _) => replaced.extend(seal.replaced.iter().copied()),
                (None, Some(d)) if valid_frame_after(s.bytes(), d.offset).is_some() => {
                    return Err(Error::corruption(s.path(), d.offset, d.reason.clone()));
                }
                (None, _) => {
                    s.mark_obsolete();
                    continue;
                }
            }
        }
        keep.push(i);
    }
    keep.retain(|&i| {
        let gone = replaced.contains(&segments[i].id());
        if gone {
            segments[i].mark_obsolete();
        }
        !gone
    });
    let last_log = keep
        .iter()
        .rposition(|&i| segments[i].kind() == SegmentKind::Log);
    let mut unsealed = false;
    for (k, &i) in keep.iter().enumerate() {
        let (s, scan) = (&segments[i], &scans[i]);
        if s.kind() == SegmentKind::Log && Some(k) == last_log {
            unsealed = scan.seal.is_none();
            repair_tail(s, scan)?;
        } else if let Some(d) = &scan.damage {
            return Err(Error::corruption(s.path(), d.offset, d.reason.clone()));
        } else if scan.seal.is_none() {
            return Err(Error::corruption(
                s.path(),
                scan.end,
                "sealed segment has no seal frame",
            ));
        }
        s.set_written(scan.end);
    }
    if keep.iter().any(|&i| segments[i].kind() == SegmentKind::Log) || !replaced.is_empty() {
        fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok((keep, unsealed))
}

/// Zeroes a torn tail of the active segment, or reports corruption if valid
/// frames follow the damage.
fn repair_tail(s: &Segment, scan: &ScanOutcome) -> Result<()> {
    let Some(d) = &scan.damage else { return Ok(()) };
    if valid_frame_after(s.bytes(), d.offset + 8).is_some() {
        return Err(Error::corruption(s.path(), d.offset, d.reason.clone()));
    }
    let bytes = s.bytes();
    let start = scan.end as usize;
    let end = bytes.iter().rposition(|&b| b != 0).map_or(start, |p| p + 1);
    if end > start {
        let zeros = vec![0u8; end - start];
        s.write_at(&zeros, scan.end)
            .and_then(|_| s.sync())
            .map_err(|e| Error::io(s.path(), e))?;
    }
    Ok(())
}

/// Picks each key's newest record and bulk-loads every keyspace's index.
/// A key whose newest record a range delete covers, or whose only record is
/// a delete, is left out of the index (its records are dead); the range
/// deletes are published already applied.
fn build_keyspaces(
    manifest: &Manifest,
    table: &SegmentTable,
    mut by_ks: HashMap<u32, Vec<Found<'_>>>,
) -> Vec<Arc<Keyspace>> {
    let resolver = TableResolver::new(table);
    let mut out = Vec::new();
    for (id, name) in &manifest.keyspaces {
        let (ranges, mut found): (Vec<Found<'_>>, Vec<Found<'_>>) = by_ks
            .remove(id)
            .unwrap_or_default()
            .into_iter()
            .partition(|f| f.range_end.is_some());
        let tombstones = RangeTombstones::new(
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
        let index = AlexIndex::bulk_load(&payloads, &resolver);
        let keyspace = Keyspace::new(KeyspaceId(*id), name.clone(), index, live);
        keyspace.set_range_tombstones(tombstones);
        out.push(Arc::new(keyspace));
    }
    out
}
