//! Catching a read-only handle up with its primary in place: walk only what
//! the primary appended since the last walk and apply it to the indexes as
//! the writer did, one batch frame at a time.
//!
//! This works while the primary has only appended: the same keyspaces,
//! every segment the reader opened still listed, and any new segment a log
//! segment newer than the reader's newest (a rotation). Then the reader's
//! indexes point where the primary's pointed when it wrote each new record,
//! so the records' version chains line up with them. Anything else (a
//! compaction replaced segments, a keyspace was created or dropped, a file
//! outgrew its map, a rotated segment ends without a seal) asks for a fresh
//! read-only recovery instead ([`Followed::NeedsRecovery`]).
//!
//! Each batch frame's records are applied under the (otherwise unused)
//! writer lock and become visible together when its last sequence number is
//! published, exactly as on the primary, so a reader sees a prefix of whole
//! batches at every moment.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::db::keyspace::{self, KeyspaceId};
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::{RecordKind, RecordView};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentKind};
use crate::recovery::Mode;
use crate::recovery::files::{is_vanished_segment, open_listed};
use crate::segment::Segment;
use crate::segment::file_scan::frames_after_in_file;
use crate::segment::scan::scan_frames_from;
use crate::write::log_writer;
use crate::write::plan::PendingRecord;

/// What an in-place catch-up did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Followed {
    /// The state now holds everything the primary had written.
    InPlace,
    /// The primary did more than append: recover afresh.
    NeedsRecovery,
}

/// Brings the read-only state `shared` up to what the primary has written,
/// in place, if the primary has only appended since (see the module
/// comment).
pub(crate) fn catch_up_in_place(shared: &Shared) -> Result<Followed> {
    let manifest = keyspace::read_manifest(&shared.fs, &shared.dir)?;
    let mut w = shared.lock_writer();
    let (Some(new_live), Some(old_live)) = (&manifest.live, &w.manifest.live) else {
        return Ok(Followed::NeedsRecovery);
    };
    let old_ids: BTreeSet<u32> = old_live.ids.iter().copied().collect();
    let new_ids: BTreeSet<u32> = new_live.ids.iter().copied().collect();
    let active = w.active.clone();
    let appended_only = manifest.keyspaces == w.manifest.keyspaces
        && old_ids.is_subset(&new_ids)
        && active.kind() == SegmentKind::Log
        && new_ids.difference(&old_ids).all(|&id| id > active.id());
    if !appended_only {
        return Ok(Followed::NeedsRecovery);
    }
    let mut chain = vec![active];
    for &id in new_ids.difference(&old_ids) {
        let bytes = shared.options.segment_bytes;
        match open_listed(&shared.fs, &shared.dir, id, bytes, Mode::ReadOnly) {
            Ok(s) if s.kind() == SegmentKind::Log => chain.push(s),
            Ok(_) => return Ok(Followed::NeedsRecovery),
            Err(e) if is_vanished_segment(&e) => return Ok(Followed::NeedsRecovery),
            Err(e) => return Err(e),
        }
    }
    // Published before any index entry can point into them.
    let mut table = shared.segments.load_full();
    for s in &chain[1..] {
        table = Arc::new(table.with(s.clone()));
    }
    shared.publish_segments(table);
    let last = chain.len() - 1;
    for (i, segment) in chain.iter().enumerate() {
        if !follow_segment(shared, segment, i == last)? {
            return Ok(Followed::NeedsRecovery);
        }
    }
    w.active = chain[last].clone();
    w.manifest = manifest;
    Ok(Followed::InPlace)
}

/// Applies the frames appended to `segment` since its written end. A
/// segment that is not the newest must end with its seal. Returns `false`
/// if the segment cannot be followed in place.
fn follow_segment(shared: &Shared, segment: &Segment, newest: bool) -> Result<bool> {
    let io_err = |e| Error::io(segment.path(), e);
    let len = segment.file().len().map_err(io_err)?;
    if len > segment.capacity() {
        return Ok(false);
    }
    segment.note_file_len(len);
    let from = segment.written().max(SEGMENT_HEADER_BYTES as u64);
    // Only the allocated bytes are read through the map (see `file_scan`).
    let mapped = segment
        .file()
        .hole_at_or_after(from)
        .map_err(io_err)?
        .min(len);
    let bytes = &segment.bytes()[..mapped as usize];
    let mut frames: Vec<Vec<(u64, RecordView<'_>)>> = Vec::new();
    let mut frame_end = 0;
    let scan = scan_frames_from(bytes, from as usize, |offset, record| {
        if offset != frame_end || frames.is_empty() {
            frames.push(Vec::new());
        }
        frame_end = offset + record.encoded_len as u64;
        if let Some(frame) = frames.last_mut() {
            frame.push((offset, record));
        }
    });
    // Readable before the indexes point at it, as the writer does it.
    segment.set_written(scan.end);
    for frame in &frames {
        apply_frame(shared, segment, frame);
    }
    if scan.sequence_mark > shared.visible() {
        shared
            .visible_seq
            .store(scan.sequence_mark, Ordering::Release);
    }
    // The primary appends one frame after another, so damage followed by a
    // valid frame is not a frame being written: let recovery judge it.
    if let Some(d) = &scan.damage
        && frames_after_in_file(segment, d.offset + 8)?
            .first_valid
            .is_some()
    {
        return Ok(false);
    }
    Ok(newest || scan.seal.is_some())
}

/// Applies one batch frame's records as the writer did, then publishes its
/// last sequence number.
fn apply_frame(shared: &Shared, segment: &Segment, frame: &[(u64, RecordView<'_>)]) {
    // Log data is never indexed and takes no sequence number.
    let sequenced = || frame.iter().filter(|(_, r)| r.kind != RecordKind::LogData);
    let Some(first_seq) = sequenced().map(|(_, r)| r.seq).min() else {
        return;
    };
    let last_seq = sequenced().map(|(_, r)| r.seq).max().unwrap_or(first_seq);
    let keyspaces = shared.keyspaces.load();
    let mut records = Vec::with_capacity(frame.len());
    let mut placed = log_writer::Placed::default();
    for &(offset, r) in frame {
        if r.kind == RecordKind::LogData {
            // Dead bytes, as recovery counts them.
            segment.add_dead(r.encoded_len as u64);
            continue;
        }
        segment.note_seq(r.seq);
        let Some(ks) = keyspaces.get(KeyspaceId(r.keyspace)) else {
            continue;
        };
        segment.note_key(r.keyspace, r.key);
        // Every kind the writer indexes (no wildcard: a new kind must say
        // whether it is indexed).
        match r.kind {
            RecordKind::Put | RecordKind::Delete | RecordKind::Merge | RecordKind::RangeDelete => {}
            RecordKind::LogData => continue,
        }
        records.push(PendingRecord {
            ks: ks.clone(),
            kind: r.kind,
            merge_state: r.merge_state,
            key: r.key,
            operand: r.operand,
            value: Cow::Borrowed(r.value),
            op: (r.seq - first_seq) as usize,
        });
        placed.locations.push(Location::new(
            segment.id(),
            offset,
            r.kind == RecordKind::Delete,
        ));
        placed.lens.push(r.encoded_len as u64);
    }
    log_writer::apply(shared, &records, &placed, first_seq);
    if last_seq > shared.visible() {
        shared.visible_seq.store(last_seq, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, Options, WriteOptions};

    fn options() -> Options {
        Options {
            segment_bytes: 16 << 10,
            background_compaction: false,
            ..Options::default()
        }
    }

    #[test]
    fn appends_and_rotations_are_followed_in_place_and_a_compaction_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let primary = Db::open(dir.path(), options()).unwrap();
        let ks = primary.keyspace("default").unwrap();
        let put = |i: u32, tag: &str| {
            let key = format!("key{:04}", i % 300);
            primary
                .put(
                    ks,
                    key.as_bytes(),
                    format!("{tag}{i}").as_bytes(),
                    &WriteOptions::default(),
                )
                .unwrap();
        };
        (0..100).for_each(|i| put(i, "a"));
        let reader = Db::open_read_only(dir.path(), options()).unwrap();
        let segments_before = reader.shared().segments.load().len();
        // Appends within the active segment, then enough to rotate it.
        (100..120).for_each(|i| put(i, "b"));
        assert_eq!(
            catch_up_in_place(&reader.shared()).unwrap(),
            Followed::InPlace
        );
        assert_eq!(reader.get_copied(ks, b"key0110").unwrap().unwrap(), b"b110");
        (0..600).for_each(|i| put(i, "c"));
        assert_eq!(
            catch_up_in_place(&reader.shared()).unwrap(),
            Followed::InPlace
        );
        assert!(reader.shared().segments.load().len() > segments_before);
        assert_eq!(reader.get_copied(ks, b"key0299").unwrap().unwrap(), b"c599");
        assert_eq!(
            reader.latest_sequence_number(),
            primary.latest_sequence_number()
        );
        assert_eq!(
            reader.live_keys(ks).unwrap(),
            primary.live_keys(ks).unwrap()
        );
        primary.compact().unwrap();
        assert_eq!(
            catch_up_in_place(&reader.shared()).unwrap(),
            Followed::NeedsRecovery
        );
    }

    #[test]
    fn range_deletes_and_merges_are_followed_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let primary = Db::open(dir.path(), options()).unwrap();
        let ks = primary.keyspace("default").unwrap();
        let none = WriteOptions::default();
        for i in 0..50u32 {
            let key = format!("key{i:02}");
            primary.put(ks, key.as_bytes(), b"v", &none).unwrap();
        }
        let reader = Db::open_read_only(dir.path(), options()).unwrap();
        let before = reader.snapshot();
        let mut batch = crate::WriteBatch::new();
        batch.delete_range(ks, b"key10", b"key20");
        batch.put(ks, b"key15", b"back");
        batch.merge(ks, b"key30", b"+1");
        primary.write(&batch, &none).unwrap();
        assert_eq!(
            catch_up_in_place(&reader.shared()).unwrap(),
            Followed::InPlace
        );
        for i in 0..50u32 {
            let key = format!("key{i:02}");
            // A merge without a merge function reads as an error on both.
            assert_eq!(
                format!("{:?}", reader.get_copied(ks, key.as_bytes())),
                format!("{:?}", primary.get_copied(ks, key.as_bytes())),
                "{key}"
            );
            assert_eq!(
                before.get(ks, key.as_bytes()).unwrap().as_deref(),
                Some(&b"v"[..])
            );
        }
        assert_eq!(
            reader.live_keys(ks).unwrap(),
            primary.live_keys(ks).unwrap()
        );
        assert_eq!(
            reader.latest_sequence_number(),
            primary.latest_sequence_number()
        );
    }
}
