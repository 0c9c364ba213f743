//! Writing the index checkpoint (`INDEX`, see `format/index_checkpoint.rs`)
//! at a clean close, so that the next open reads the index instead of every
//! record. Written to `INDEX.tmp` and renamed into place: a process crash
//! leaves the old checkpoint or the new one, never half of one. Neither is
//! synced: after a power loss the new one may be damaged, which its
//! checksum reveals, and open then ignores it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use crate::error::{Error, Result};
use crate::format::index_checkpoint::{
    Cut, Encoder, INDEX_FILE, INDEX_TMP_FILE, SegmentInfo, TombstoneInfo, tail_check_range,
};
use crate::io::{FileHandle, OpenMode};
use crate::keyspace::Keyspace;
use crate::location::Location;
use crate::segment::{Segment, SegmentTable};
use crate::shared::Shared;

/// Encoded bytes buffered before they are written out.
const WRITE_CHUNK: usize = 4 << 20;

/// Open reads fewer records than this without writing a checkpoint
/// afterwards (see [`save_after_open`]).
const OPEN_READS_WORTH_A_CHECKPOINT: u64 = 1 << 16;

/// A database with less data than this gets a new checkpoint at every
/// clean close (it costs little); a larger one only once a sixteenth of its
/// data was written after the checkpoint on disk (see [`still_fresh`]).
const ALWAYS_SAVE_BELOW_BYTES: u64 = 64 << 20;
/// The share of the data, written after the checkpoint's cut, that makes a
/// new checkpoint worth writing: 1 / this.
const STALE_SHARE: u64 = 16;

/// What a checkpoint was cut at: equal marks mean nothing changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CheckpointMark {
    cut: Cut,
    segments: Vec<u32>,
}

impl CheckpointMark {
    /// The mark of a checkpoint with this cut over these segments.
    pub(crate) fn new(cut: Cut, segments: Vec<u32>) -> Self {
        CheckpointMark { cut, segments }
    }
}

/// After an open that had to read many records (no usable checkpoint, or
/// much written since it, as after a crash), writes a checkpoint at once,
/// before any writer runs: a crash before the next clean close then does
/// not make the next open read them all again. A failure only leaves the
/// older checkpoint (or none) in place.
pub(crate) fn save_after_open(shared: &Shared) {
    let read = shared.counters.records_read_at_open.load(Ordering::Relaxed);
    if read >= OPEN_READS_WORTH_A_CHECKPOINT {
        let _ = save(shared);
    }
}

/// Whether the checkpoint `saved` is fresh enough to keep: the next open
/// reads what was written after its cut, and writing a new one costs a walk
/// of every index; on a large database it is rewritten only once that tail
/// is a sixteenth of the data, so the cost is amortized over the writes.
fn still_fresh(saved: &CheckpointMark, table: &SegmentTable) -> bool {
    let total: u64 = table.iter().map(|s| s.data_bytes()).sum();
    let since: u64 = table
        .iter()
        .map(|s| match s.id() == saved.cut.segment {
            true => s.written().saturating_sub(saved.cut.offset),
            false if saved.segments.contains(&s.id()) => 0,
            false => s.data_bytes(),
        })
        .sum();
    total >= ALWAYS_SAVE_BELOW_BYTES && since * STALE_SHARE < total
}

/// Removes the checkpoint on disk once compaction has replaced most of the
/// segments it lists: its entries into those segments are dropped at open
/// anyway (their records are read from the outputs), so it would only cost
/// disk space, up to a quarter of the data for small values. The next clean
/// close writes a current one. A read-only handle never removes it.
pub(crate) fn forget_if_stale(shared: &Shared) {
    if shared.read_only {
        return;
    }
    let mut saved = shared
        .checkpoint_mark
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let Some(mark) = saved.as_ref() else {
        return;
    };
    let table = shared.segments.load();
    let still_live = mark
        .segments
        .iter()
        .filter(|&&id| table.get(id).is_some())
        .count();
    if still_live * 2 >= mark.segments.len() {
        return;
    }
    if remove_if_present(shared, &shared.dir.join(INDEX_FILE)).is_ok() {
        *saved = None;
    }
}

/// Writes the checkpoint of the whole database, unless the one on disk is
/// current or still fresh (see [`still_fresh`]). Holds the writer lock, so
/// the cut is exact (it runs at open before any writer, and at close when
/// no writer is left).
pub(crate) fn save(shared: &Shared) -> Result<()> {
    let w = shared.lock_writer();
    shared.check_poison()?;
    let cut = Cut {
        seq: w.next_seq - 1,
        segment: w.active.id(),
        offset: w.active.written(),
    };
    let table = shared.segments.load_full();
    let mark = CheckpointMark::new(cut, table.iter().map(|s| s.id()).collect());
    let mut saved = shared
        .checkpoint_mark
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if saved
        .as_ref()
        .is_some_and(|m| *m == mark || still_fresh(m, &table))
    {
        return Ok(());
    }
    let relocated = relocated_bytes(shared);
    let infos: Vec<SegmentInfo> = table
        .iter()
        .map(|s| segment_info(s, relocated.get(&s.id()).copied().unwrap_or(0)))
        .collect();
    let keyspaces = shared.keyspaces.load_full();
    let dir = &shared.dir;
    let tmp = dir.join(INDEX_TMP_FILE);
    remove_if_present(shared, &tmp)?;
    let file = shared
        .fs
        .open(&tmp, OpenMode::CreateNew)
        .map_err(|e| Error::io(&tmp, e))?;
    let mut out = Output { file, at: 0 };
    let mut enc = Encoder::new(cut, &infos, keyspaces.iter().count() as u32);
    for ks in keyspaces.iter() {
        write_keyspace(ks, &table, &mut enc, &mut out)?;
    }
    out.write(&enc.finish())?;
    drop(out);
    // Not synced: a power loss that leaves it damaged only makes the next
    // open ignore it (its checksum covers every byte).
    let path = dir.join(INDEX_FILE);
    shared
        .fs
        .rename(&tmp, &path)
        .map_err(|e| Error::io(&path, e))?;
    *saved = Some(mark);
    drop(w);
    Ok(())
}

/// Bytes of the old versions compaction moved for snapshots, per segment
/// holding the copies. They are live only while a snapshot may need them:
/// no snapshot outlives the process, so the next open finds them dead (a
/// full scan counts them so too).
fn relocated_bytes(shared: &Shared) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    for (_, r) in shared.relocations.load().iter() {
        if !r.to.is_none() {
            *out.entry(r.to.segment()).or_default() += r.bytes;
        }
    }
    out
}

/// What the checkpoint records of one segment; `relocated` are the bytes of
/// its copies that only snapshots of this process need.
fn segment_info(s: &Segment, relocated: u64) -> SegmentInfo {
    let header = s.header();
    SegmentInfo {
        id: s.id(),
        kind: header.kind as u8,
        seq_floor: header.seq_floor,
        written: s.written(),
        dead_bytes: s.dead_bytes() + relocated,
        min_seq: s.min_seq(),
        tail_check: {
            let range = tail_check_range(s.written());
            crate::format::crc::crc32c(&s.bytes()[range.start as usize..range.end as usize])
        },
        span: s.key_bounds(),
    }
}

/// Encodes one keyspace's section and streams it out.
fn write_keyspace(
    ks: &Keyspace,
    table: &SegmentTable,
    enc: &mut Encoder,
    out: &mut Output,
) -> Result<()> {
    let (locations, key_ends, keys) = collect(ks, table)?;
    let tombstones: Vec<TombstoneInfo> = ks
        .range_tombstones()
        .iter()
        .map(|t| TombstoneInfo {
            start: t.start.clone(),
            end: t.end.clone(),
            seq: t.seq,
            applied: t.is_applied(),
        })
        .collect();
    enc.keyspace(
        ks.id().0,
        locations.len() as u64,
        keys.len() as u64,
        &tombstones,
    );
    let (mut prev_key, mut prev_location): (&[u8], u64) = (&[], 0);
    let mut start = 0;
    for (&location, &end) in locations.iter().zip(&key_ends) {
        let key = &keys[start..end as usize];
        enc.entry(prev_key, key, prev_location, location);
        (prev_key, prev_location, start) = (key, location, end as usize);
        if enc.buffered() >= WRITE_CHUNK {
            out.write(&enc.take())?;
        }
    }
    enc.pad();
    out.write(&enc.take())?;
    Ok(())
}

type Collected = (Vec<u64>, Vec<u64>, Vec<u8>);

/// Every index entry of `ks` in key order: locations, cumulative key ends
/// and the keys themselves.
fn collect(ks: &Keyspace, table: &SegmentTable) -> Result<Collected> {
    let locations = ks
        .payloads_in_order(table)
        .map_err(|at| missing(table, at.0))?;
    let (key_ends, keys) = fetch_keys(&locations, table)?;
    Ok((locations, key_ends, keys))
}

/// The keys of the records at `locations`, concatenated in the same order,
/// with their cumulative ends. The records are visited in log order (two
/// sequential passes: lengths, then bytes), not in key order, where every
/// visit would be a random read of the map.
fn fetch_keys(locations: &[u64], table: &SegmentTable) -> Result<(Vec<u64>, Vec<u8>)> {
    // (place in the log, entry): a location without its delete flag sorts
    // by segment, then offset.
    let mut by_place: Vec<(u64, u32)> = locations
        .iter()
        .enumerate()
        .map(|(i, &p)| (p & !Location::new(0, 0, true).0, i as u32))
        .collect();
    by_place.sort_unstable();
    // One pass over the log, in its order: each key is copied once from
    // its record into `staged` (reading every record twice, for lengths
    // and then for bytes, made a close at 10M keys take 7 s). Entries come
    // segment by segment: each segment is looked up once.
    let mut staged: Vec<u8> = Vec::new();
    let mut lens = vec![0u32; locations.len()];
    let mut segment: Option<&Arc<Segment>> = None;
    for &(_, i) in &by_place {
        let loc = Location(locations[i as usize]);
        let current = match segment {
            Some(s) if s.id() == loc.segment() => s,
            _ => table
                .get(loc.segment())
                .ok_or_else(|| missing(table, loc.0))?,
        };
        segment = Some(current);
        let key = current.record_at(loc.offset(), false)?.key;
        lens[i as usize] = key.len() as u32;
        staged.extend_from_slice(key);
    }
    let mut total = 0u64;
    let key_ends: Vec<u64> = lens
        .iter()
        .map(|&len| {
            total += u64::from(len);
            total
        })
        .collect();
    drop(lens);
    // `staged` holds the keys in the order of `by_place`: put each in its
    // entry's place.
    let mut keys = vec![0u8; staged.len()];
    let mut from = 0;
    for &(_, i) in &by_place {
        let end = key_ends[i as usize] as usize;
        let start = match i {
            0 => 0,
            _ => key_ends[i as usize - 1] as usize,
        };
        keys[start..end].copy_from_slice(&staged[from..from + end - start]);
        from += end - start;
    }
    Ok((key_ends, keys))
}

/// The error for an index entry that points at no record.
fn missing(table: &SegmentTable, payload: u64) -> Error {
    let at = Location(payload);
    let file = table
        .get(at.segment())
        .map_or_else(Default::default, |s| s.path().to_path_buf());
    Error::corruption(file, at.offset(), "an index entry points at no record")
}

fn remove_if_present(shared: &Shared, path: &Path) -> Result<()> {
    match shared.fs.remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// The file being written, appended to in order.
struct Output {
    file: Arc<dyn FileHandle>,
    at: u64,
}

impl Output {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all_at(bytes, self.at)
            .map_err(|e| Error::io(self.file.path(), e))?;
        self.at += bytes.len() as u64;
        Ok(())
    }
}
