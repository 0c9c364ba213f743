//! Opening from the index checkpoint (`INDEX`): the indexes are bulk-loaded
//! from the checkpoint's sorted keys, and only what was written after its
//! cut is read: the segment that was active at the cut from the cut on, and
//! every live segment the checkpoint does not list (newer log segments and
//! compaction outputs). Those records are replayed over the loaded indexes
//! in sequence order, each one kept only if it is newer than the entry it
//! meets, so the result is the newest record of every key, as the full scan
//! finds it.
//!
//! Segments the checkpoint covers are not read at open: their records are
//! verified when read (every get checks the record's checksum) and by
//! `Db::verify`. Their written end, dead bytes, smallest sequence number and
//! key span come from the checkpoint.
//!
//! The checkpoint is derived data. Whenever it cannot be used — missing,
//! damaged, from another format version, or describing a segment that is
//! not the file now on disk — recovery falls back to the full scan, which
//! then judges the files as always. An entry that points into a segment
//! that is gone (compaction replaced it after the cut) is dropped: its key's
//! surviving records are in the replaced segment's output, which is
//! replayed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::db::keyspace::{Keyspace, KeyspaceId};
use crate::error::Result;
use crate::format::index_checkpoint::{
    self, Cut, INDEX_FILE, IndexCheckpoint, KeyspaceSection, SegmentInfo,
};
use crate::format::live_segments::LiveSegments;
use crate::format::location::Location;
use crate::format::manifest::Manifest;
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentKind};
use crate::index::{AlexIndex, KeyResolver, LeafForm};
use crate::io::{FileSystem, OpenMode, ReadOnlyMap};
use crate::mvcc::key_order::{KeyspaceOrders, RangeOrder};
use crate::mvcc::range_tombstones::{RangeTombstone, RangeTombstones};
use crate::recovery::checkpoint_mark::CheckpointMark;
use crate::segment::resolver::TableResolver;
use crate::segment::{Segment, SegmentTable};

use super::files::Opened;
use super::{Found, Mode, Recovered, classify, scan_segments_from};

/// Recovers from the checkpoint, or returns `None` if there is none that
/// fits the segments on disk (the caller then scans everything).
pub(super) fn recover(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    manifest: &Manifest,
    live: &LiveSegments,
    opened: &Opened,
    mode: Mode,
    (form, orders): (LeafForm, &KeyspaceOrders),
) -> Result<Option<Recovered>> {
    let Some(bytes) = map_checkpoint(fs, &dir.join(INDEX_FILE)) else {
        return Ok(None);
    };
    let Ok(checkpoint) = index_checkpoint::decode(&bytes) else {
        return Ok(None);
    };
    let Some(split) = split(&opened.segments, &checkpoint) else {
        return Ok(None);
    };
    let cut_info = cut_segment_info(&split.unread, &checkpoint);
    let read_from_cut = cut_info.is_some() && durable_at_cut(live, &checkpoint.cut);
    let (scans, records) = scan_segments_from(&split.unread, |s| match read_from_cut {
        true if s.id() == checkpoint.cut.segment => checkpoint.cut.offset,
        _ => SEGMENT_HEADER_BYTES as u64,
    })?;
    let (_, unsealed) = classify::classify_listed(&split.unread, &scans, live, mode)?;
    // The cut segment must still hold everything below the cut (the
    // checkpoint's entries point there): else the checkpoint describes a
    // longer log than the one on disk.
    let cut_segment = split
        .unread
        .iter()
        .find(|s| s.id() == checkpoint.cut.segment);
    if cut_segment.is_some_and(|s| s.written() < checkpoint.cut.offset) {
        return Ok(None);
    }
    for (segment, info) in &split.covered {
        restore(segment, info);
    }
    if let (Some(info), Some(segment)) = (cut_info, cut_segment) {
        restore_below_cut(segment, info);
    }
    let table = SegmentTable::new(opened.segments.clone());
    let keyspaces = load_keyspaces(manifest, &checkpoint, &table, (form, orders))?;
    let mut last_seq = checkpoint.cut.seq;
    for (s, scan) in split.unread.iter().zip(&scans) {
        last_seq = last_seq.max(s.header().seq_floor.saturating_sub(1));
        last_seq = last_seq.max(scan.sequence_mark);
    }
    let tail = records.into_iter().flatten().collect();
    last_seq = last_seq.max(replay(&keyspaces, &table, tail, checkpoint.cut)?);
    let newest_log = split
        .unread
        .iter()
        .rev()
        .find(|s| s.kind() == SegmentKind::Log);
    Ok(Some(Recovered {
        segments: opened.segments.clone(),
        active: newest_log.filter(|_| unsealed).cloned(),
        keyspaces: keyspaces.into_values().collect(),
        last_seq,
        next_segment_id: opened.max_id.map_or(1, |m| m + 1),
        records_read: scans.iter().map(|s| s.records).sum(),
        checkpoint: Some(CheckpointMark::new(
            checkpoint.cut,
            checkpoint.segments.iter().map(|s| s.id).collect(),
        )),
    }))
}

/// Maps the checkpoint file read-only, if it exists and has no hole (a
/// page in a hole of a full file system could not be read safely).
fn map_checkpoint(fs: &Arc<dyn FileSystem>, path: &Path) -> Option<ReadOnlyMap> {
    let file = fs.open(path, OpenMode::ReadOnly).ok()?;
    let len = file.len().ok()?;
    let whole = file.hole_at_or_after(0).ok()? >= len;
    whole.then(|| file.map_readonly(len).ok()).flatten()
}

/// The live segments, split into those the checkpoint covers and those
/// recovery must read.
struct Split<'c> {
    covered: Vec<(Arc<Segment>, &'c SegmentInfo)>,
    /// In id order; ends with the newest log segment.
    unread: Vec<Arc<Segment>>,
}

/// Splits the live segments, or returns `None` if the checkpoint does not
/// describe them: a listed segment whose header differs or whose file is
/// shorter than its written end, or a newest log segment it claims to cover.
fn split<'c>(segments: &[Arc<Segment>], c: &'c IndexCheckpoint<'_>) -> Option<Split<'c>> {
    let known: HashMap<u32, &SegmentInfo> = c.segments.iter().map(|s| (s.id, s)).collect();
    let mut out = Split {
        covered: Vec::new(),
        unread: Vec::new(),
    };
    for s in segments {
        match known.get(&s.id()) {
            Some(info) if s.id() != c.cut.segment => {
                let header = s.header();
                let same = header.kind as u8 == info.kind && header.seq_floor == info.seq_floor;
                let whole = s.file().len().is_ok_and(|len| len >= info.written);
                if !same || !whole || !same_tail(s, info) {
                    return None;
                }
                out.covered.push((s.clone(), info));
            }
            _ => out.unread.push(s.clone()),
        }
    }
    let newest_log = segments
        .iter()
        .rev()
        .find(|s| s.kind() == SegmentKind::Log)?;
    out.unread
        .iter()
        .any(|s| s.id() == newest_log.id())
        .then_some(out)
}

/// Whether the bytes before the entry's written end are the ones it was
/// cut over (a file of the same name from another history is not). Reads
/// through the descriptor: nothing here is known to be mapped safely yet.
fn same_tail(s: &Segment, info: &SegmentInfo) -> bool {
    let range = index_checkpoint::tail_check_range(info.written);
    let mut tail = vec![0u8; (range.end - range.start) as usize];
    s.file().read_exact_at(&mut tail, range.start).is_ok()
        && crate::format::crc::crc32c(&tail) == info.tail_check
}

/// The checkpoint's entry for the segment that was active at the cut, if
/// the file still holds the bytes it was cut over: what lies below the cut
/// (dead bytes, smallest sequence number, key span) is taken from it, as
/// for a covered segment, whether or not that part is read again.
fn cut_segment_info<'c>(
    unread: &[Arc<Segment>],
    c: &'c IndexCheckpoint<'_>,
) -> Option<&'c SegmentInfo> {
    let segment = unread.iter().find(|s| s.id() == c.cut.segment)?;
    let info = c.segments.iter().find(|s| s.id == c.cut.segment)?;
    let header = segment.header();
    let same = header.kind as u8 == info.kind && header.seq_floor == info.seq_floor;
    (same && info.written == c.cut.offset && same_tail(segment, info)).then_some(info)
}

/// Whether the MANIFEST says every byte below the cut was durable (a clean
/// close records that) while that segment was still the active one: the
/// open then reads it from the cut on. Otherwise (e.g. a checkpoint written
/// after a crash over a log that was never synced, which a power loss may
/// then have holed below the cut, or a watermark that has moved on to a
/// later segment) the whole segment is read, its tail judged as in a full
/// scan, and replay skips the records below the cut.
fn durable_at_cut(live: &LiveSegments, cut: &Cut) -> bool {
    live.watermark
        .is_some_and(|w| w.segment == cut.segment && w.offset >= cut.offset)
}

/// Gives a covered segment what the scan would have found.
fn restore(s: &Segment, info: &SegmentInfo) {
    s.set_written(info.written);
    restore_below_cut(s, info);
}

/// Gives a segment what the scan of its bytes below the cut would have
/// found: their dead bytes, smallest sequence number and key span.
fn restore_below_cut(s: &Segment, info: &SegmentInfo) {
    s.add_dead(info.dead_bytes);
    if info.min_seq != u64::MAX {
        s.note_seq(info.min_seq);
    }
    if let Some((lo, hi)) = &info.span {
        s.note_key(lo.0, &lo.1);
        s.note_key(hi.0, &hi.1);
    }
}

/// Builds each keyspace of the manifest from its checkpoint section (a
/// keyspace created after the cut starts empty). A section whose keyspace
/// was dropped after the cut has its records counted dead.
fn load_keyspaces(
    manifest: &Manifest,
    c: &IndexCheckpoint<'_>,
    table: &SegmentTable,
    (form, orders): (LeafForm, &KeyspaceOrders),
) -> Result<HashMap<u32, Arc<Keyspace>>> {
    let mut sections: HashMap<u32, &KeyspaceSection<'_>> =
        c.keyspaces.iter().map(|k| (k.id, k)).collect();
    let mut out = HashMap::new();
    for (id, name) in &manifest.keyspaces {
        let keyspace = match sections.remove(id) {
            Some(section) => load_keyspace((*id, name, orders.of(*id)), section, table, form),
            None => {
                let order = orders.of(*id);
                Keyspace::new(KeyspaceId(*id), name.clone(), AlexIndex::new(), 0, order)
            }
        };
        out.insert(*id, Arc::new(keyspace));
    }
    for section in sections.values() {
        for i in 0..section.len() {
            let loc = Location(section.location(i));
            if !loc.is_tombstone() && table.get(loc.segment()).is_some() {
                dead(table, loc, record_len(table, loc)?);
            }
        }
    }
    Ok(out)
}

/// One keyspace from its section: entries into live segments only.
fn load_keyspace(
    (id, name, order): (u32, &str, RangeOrder),
    s: &KeyspaceSection<'_>,
    table: &SegmentTable,
    form: LeafForm,
) -> Keyspace {
    let is_live = |i: usize| table.get(Location(s.location(i)).segment()).is_some();
    // Usually every entry is kept: then positions are the section's own.
    let kept: Option<Vec<usize>> = match (0..s.len()).all(is_live) {
        true => None,
        false => Some((0..s.len()).filter(|&i| is_live(i)).collect()),
    };
    let resolver = SectionKeys {
        section: s,
        kept: kept.as_deref(),
    };
    let len = kept.as_ref().map_or(s.len(), Vec::len);
    let location = |p| s.location(resolver.entry(p));
    let index = AlexIndex::bulk_load_positions(len, &resolver, &location, form);
    let live = (0..len as u64)
        .filter(|&p| !Location(s.location(resolver.entry(p))).is_tombstone())
        .count() as u64;
    let keyspace = Keyspace::new(KeyspaceId(id), name.to_string(), index, live, order.clone());
    let tombstones = s
        .tombstones
        .iter()
        .map(|t| {
            let (start, end) = (t.start.clone(), t.end.clone());
            Arc::new(RangeTombstone::new(start, end, t.seq, t.applied))
        })
        .collect();
    keyspace.set_range_tombstones(RangeTombstones::new(order, tombstones));
    keyspace
}

/// Keys of a section's kept entries, by position.
struct SectionKeys<'s, 'a> {
    section: &'s KeyspaceSection<'a>,
    /// The kept entries, if not all of them.
    kept: Option<&'s [usize]>,
}

impl SectionKeys<'_, '_> {
    /// The section entry at `position` among the kept ones.
    fn entry(&self, position: u64) -> usize {
        match self.kept {
            Some(kept) => kept[position as usize],
            None => position as usize,
        }
    }
}

impl KeyResolver for SectionKeys<'_, '_> {
    fn key(&self, position: u64) -> &[u8] {
        self.section.key(self.entry(position))
    }
}

/// Replays the records written after the cut, oldest first. Returns the
/// largest sequence number seen. Range deletes are gathered and published
/// once per keyspace at the end (adding them one by one copied the list
/// each time: quadratic in the range deletes written since the cut).
/// Nothing in the replay reads the list: a point record's fate depends
/// only on the index.
fn replay(
    keyspaces: &HashMap<u32, Arc<Keyspace>>,
    table: &SegmentTable,
    mut records: Vec<(u32, Found<'_>)>,
    cut: Cut,
) -> Result<u64> {
    records.sort_by_key(|(_, f)| f.seq);
    let resolver = TableResolver::new(table);
    let mut last_seq = 0;
    let mut ranges: HashMap<u32, Vec<RangeTombstone>> = HashMap::new();
    for (ks, f) in &records {
        if let Some(s) = table.get(f.loc.segment()) {
            s.note_seq(f.seq);
        }
        last_seq = last_seq.max(f.seq);
        if f.loc.segment() == cut.segment && f.loc.offset() < cut.offset {
            continue;
        }
        match (keyspaces.get(ks), f.range_end) {
            (None, _) => dead(table, f.loc, u64::from(f.len)),
            (Some(_), Some(end)) => {
                // Dead from the start, as when it was written.
                dead(table, f.loc, u64::from(f.len));
                let (start, end) = (f.key.to_vec(), end.to_vec());
                let tombstone = RangeTombstone::new(start, end, f.seq, false);
                ranges.entry(*ks).or_default().push(tombstone);
            }
            (Some(keyspace), None) => replay_point(keyspace, table, &resolver, f)?,
        }
    }
    for (ks, replayed) in ranges {
        if let Some(keyspace) = keyspaces.get(&ks) {
            publish_replayed_ranges(keyspace, replayed);
        }
    }
    Ok(last_seq)
}

/// Adds the range deletes replayed for `keyspace` to its list (those the
/// checkpoint already lists are left out), sorting once.
fn publish_replayed_ranges(keyspace: &Keyspace, replayed: Vec<RangeTombstone>) {
    let current = keyspace.range_tombstones();
    let known: std::collections::HashSet<u64> = current.iter().map(|t| t.seq).collect();
    let list = current
        .iter()
        .cloned()
        .chain(
            replayed
                .into_iter()
                .filter(|t| !known.contains(&t.seq))
                .map(Arc::new),
        )
        .collect();
    keyspace.set_range_tombstones(RangeTombstones::new(keyspace.range_order().clone(), list));
}

/// Replays one point record: it replaces the key's entry unless that entry
/// is newer. A delete with nothing to hide, and a record older than the
/// entry, are dead.
fn replay_point(
    ks: &Keyspace,
    table: &SegmentTable,
    resolver: &TableResolver<'_>,
    f: &Found<'_>,
) -> Result<()> {
    let current = {
        let guard = crossbeam_epoch::pin();
        ks.index.get(f.key, resolver, &guard).map(Location)
    };
    let stale = match current {
        Some(cur) if cur == f.loc => return Ok(()),
        Some(cur) => record_seq(table, cur)? > f.seq,
        None => f.loc.is_tombstone(),
    };
    if stale {
        dead(table, f.loc, u64::from(f.len));
        return Ok(());
    }
    ks.index.upsert(f.key, f.loc.0, resolver);
    let was_live = current.filter(|c| !c.is_tombstone());
    if let Some(old) = was_live {
        dead(table, old, record_len(table, old)?);
    }
    if f.loc.is_tombstone() {
        // Counted dead as when it was written (see `log_writer`).
        dead(table, f.loc, u64::from(f.len));
    }
    ks.adjust_live_keys(was_live.is_some(), !f.loc.is_tombstone());
    Ok(())
}

fn record_seq(table: &SegmentTable, loc: Location) -> Result<u64> {
    read_record(table, loc, |r| r.seq)
}

fn record_len(table: &SegmentTable, loc: Location) -> Result<u64> {
    read_record(table, loc, |r| r.encoded_len as u64)
}

/// Reads (and verifies) the record at `loc`; a location outside the live
/// segments (never given here) reads as `T::default()`.
fn read_record<T: Default>(
    table: &SegmentTable,
    loc: Location,
    what: impl Fn(&crate::format::record::RecordView<'_>) -> T,
) -> Result<T> {
    match table.get(loc.segment()) {
        Some(s) => s.record_at(loc.offset(), true).map(|r| what(&r)),
        None => Ok(T::default()),
    }
}

fn dead(table: &SegmentTable, loc: Location, bytes: u64) {
    if let Some(s) = table.get(loc.segment()) {
        s.add_dead(bytes);
    }
}
