//! Writing the index checkpoint (`INDEX`, see `format/index_checkpoint.rs`)
//! at a clean close, so that the next open reads the index instead of every
//! record. Written to `INDEX.tmp` and renamed into place: a process crash
//! leaves the old checkpoint or the new one, never half of one. Neither is
//! synced: after a power loss the new one may be damaged, which its
//! checksum reveals, and open then ignores it.

use crate::io::transient::{TransientVec, transient_vec};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::index_checkpoint::{
    Cut, Encoder, INDEX_FILE, INDEX_TMP_FILE, SegmentInfo, TombstoneInfo, tail_check_range,
};
use crate::format::location::Location;
use crate::io::{FileHandle, OpenMode};
use crate::recovery::checkpoint_mark::CheckpointMark;
use crate::segment::{Segment, SegmentTable};

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
    save_chunked(shared, KEY_ORDER_CHUNK)
}

/// [`save`], taking index entries from the key order `chunk` at a time.
fn save_chunked(shared: &Shared, chunk: usize) -> Result<()> {
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
        write_keyspace(ks, &table, chunk, &mut enc, &mut out)?;
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

/// Encodes one keyspace's section and streams it out, `chunk` entries at a
/// time: memory stays bounded by the chunk, not the index. The section's
/// counts are written last, over the zeros left for them.
fn write_keyspace(
    ks: &Keyspace,
    table: &SegmentTable,
    chunk: usize,
    enc: &mut Encoder,
    out: &mut Output,
) -> Result<()> {
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
    let slot = enc.keyspace(ks.id().0, &tombstones);
    let mut prev = EntrySoFar::default();
    let write_chunk = |locations: &[u64]| -> Result<()> {
        let (key_ends, keys) = fetch_keys(locations, table)?;
        prev.encode(locations, &key_ends, &keys, enc, out)
    };
    ks.visit_payloads_in_order(table, chunk, write_chunk, |at| missing(table, at.0))?;
    enc.pad();
    out.write(&enc.take())?;
    let counts = enc.count(slot, prev.entries, prev.key_bytes);
    out.write_at(counts.at, &counts.bytes)
}

/// Index entries taken from the key order at a time by [`write_keyspace`]
/// (with 8-byte keys about 40 bytes of working memory each).
const KEY_ORDER_CHUNK: usize = 256 << 10;

/// A section's entries encoded so far: their counts and the last one, the
/// base of the next entry's front coding.
#[derive(Default)]
struct EntrySoFar {
    entries: u64,
    key_bytes: u64,
    key: Vec<u8>,
    location: u64,
}

impl EntrySoFar {
    /// Encodes a chunk of entries (locations, cumulative key ends and the
    /// keys), writing out what the encoder buffers.
    fn encode(
        &mut self,
        locations: &[u64],
        key_ends: &[u64],
        keys: &[u8],
        enc: &mut Encoder,
        out: &mut Output,
    ) -> Result<()> {
        let (mut prev_key, mut prev_location): (&[u8], u64) = (&self.key, self.location);
        let mut start = 0;
        for (&location, &end) in locations.iter().zip(key_ends) {
            let key = &keys[start..end as usize];
            enc.entry(prev_key, key, prev_location, location);
            (prev_key, prev_location, start) = (key, location, end as usize);
            if enc.buffered() >= WRITE_CHUNK {
                out.write(&enc.take())?;
            }
        }
        let last = prev_key.to_vec();
        self.key = last;
        self.location = prev_location;
        self.entries += locations.len() as u64;
        self.key_bytes += keys.len() as u64;
        Ok(())
    }
}

/// The keys of the records at `locations` (a chunk of the key order),
/// concatenated in the same order, with their cumulative ends. The records
/// are visited in log order, not in key order, where every visit would be
/// a random read of the map.
fn fetch_keys(
    locations: &[u64],
    table: &SegmentTable,
) -> Result<(TransientVec<u64>, TransientVec<u8>)> {
    // (place in the log, entry): a location without its delete flag sorts
    // by segment, then offset.
    let mut by_place: TransientVec<(u64, u32)> = transient_vec();
    by_place.extend(
        (locations.iter().enumerate()).map(|(i, &p)| (p & !Location::new(0, 0, true).0, i as u32)),
    );
    by_place.sort_unstable();
    // One pass over the log, in its order: each key is copied once from
    // its record into `staged` (reading every record twice, for lengths
    // and then for bytes, made a close at 10M keys take 7 s). Entries come
    // segment by segment: each segment is looked up once.
    let mut staged: TransientVec<u8> = transient_vec();
    let mut lens: TransientVec<u32> = transient_vec();
    lens.resize(locations.len(), 0);
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
    let mut key_ends: TransientVec<u64> = transient_vec();
    key_ends.extend(lens.iter().map(|&len| {
        total += u64::from(len);
        total
    }));
    drop(lens);
    // `staged` holds the keys in the order of `by_place`: put each in its
    // entry's place.
    let mut keys: TransientVec<u8> = transient_vec();
    keys.resize(staged.len(), 0);
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

    /// Writes `bytes` at `at`, over bytes written before.
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        debug_assert!(at + bytes.len() as u64 <= self.at);
        self.file
            .write_all_at(bytes, at)
            .map_err(|e| Error::io(self.file.path(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::index_checkpoint::decode;
    use crate::{Db, Options, WriteBatch, WriteOptions};

    /// The checkpoint of `db` written `chunk` entries at a time.
    fn checkpoint_in_chunks(db: &Db, chunk: usize) -> Vec<u8> {
        let shared = db.shared();
        *shared.checkpoint_mark.lock().unwrap() = None;
        save_chunked(&shared, chunk).unwrap();
        std::fs::read(shared.dir.join(INDEX_FILE)).unwrap()
    }

    #[test]
    fn a_checkpoint_written_in_chunks_is_the_one_written_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let ks = db.keyspace("default").unwrap();
        let other = db.create_keyspace("other").unwrap();
        let mut b = WriteBatch::new();
        for i in 0..2_000u32 {
            // Keys of several lengths, so that front coding shares prefixes
            // across chunk boundaries too.
            let key = format!(
                "key{:0width$}",
                i * 7919 % 2_000,
                width = 4 + (i % 3) as usize
            );
            b.put(ks, key.as_bytes(), &i.to_le_bytes());
            if i % 5 == 0 {
                b.put(other, key.as_bytes(), b"o");
            }
            if i % 11 == 0 {
                b.delete(ks, format!("key{:04}", i / 2).as_bytes());
            }
        }
        b.delete_range(ks, b"key0100", b"key0200");
        db.write(&b, &WriteOptions::default()).unwrap();
        let whole = checkpoint_in_chunks(&db, usize::MAX);
        for chunk in [0, 1, 2, 7, 1_000] {
            assert!(checkpoint_in_chunks(&db, chunk) == whole, "chunk {chunk}");
        }
        let decoded = decode(&whole).unwrap();
        let entries: usize = decoded.keyspaces.iter().map(|s| s.len()).sum();
        let indexed: usize = [ks, other]
            .iter()
            .map(|&k| db.index_stats(k).unwrap().num_keys)
            .sum();
        assert_eq!(entries, indexed);
        assert!(entries > 2_000);
    }
}
