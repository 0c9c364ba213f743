//! What the database knows to be on stable storage, and where it writes
//! that down (see `FORMAT.md`, "Knowing what was durable"):
//!
//! - the MANIFEST lists every segment the database needs; it is rewritten
//!   (atomically) when a log segment is created and when a compaction is
//!   installed, which is the compaction's commit point;
//! - each fdatasync of the active log segment is preceded by a watermark
//!   frame naming the offset the *previous* successful fdatasync covered
//!   (a frame cannot vouch for the sync it is part of: a power loss during
//!   that sync may leave it on disk while earlier pages are lost);
//! - a clean close syncs the active segment and then records its end as
//!   the MANIFEST's watermark, as does every open after recovery.
//!
//! Recovery treats damage or truncation below a watermark as corruption;
//! only damage above every watermark can be a torn or holed tail.

use std::path::Path;
use std::sync::Arc;

use crate::db::keyspace::write_manifest;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::frame::{FRAME_HEADER_BYTES, FrameKind};
use crate::format::live_segments::{LiveSegments, Watermark};
use crate::format::manifest::Manifest;
use crate::io::FileSystem;
use crate::segment::Segment;
use crate::write::log_writer::{SEAL_RESERVE, append_control_frame};
use crate::write::writer::Writer;

/// Records the state an open left behind: the segments it kept and the
/// active segment's end as its watermark (after syncing it). Writes the
/// MANIFEST only if that changes it.
pub(crate) fn record_open(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    manifest: &mut Manifest,
    segments: &[Arc<Segment>],
    active: &Segment,
) -> Result<()> {
    let mut ids: Vec<u32> = segments.iter().map(|s| s.id()).collect();
    ids.sort_unstable();
    let live = LiveSegments {
        ids,
        watermark: Some(Watermark {
            segment: active.id(),
            offset: active.written(),
        }),
    };
    if manifest.live.as_ref() == Some(&live) {
        return Ok(());
    }
    active.sync().map_err(|e| Error::io(active.path(), e))?;
    let mut updated = manifest.clone();
    updated.live = Some(live);
    write_manifest(fs, dir, &updated)?;
    *manifest = updated;
    Ok(())
}

/// Writes a MANIFEST that changes visible state (a keyspace created or
/// dropped) after syncing the active segment: the change is durable once
/// written, so every write acknowledged before it must be durable too, or a
/// power loss could keep the change and lose earlier writes (a hole in the
/// history). A failed sync poisons the handle.
pub(crate) fn write_manifest_after_log(
    shared: &Shared,
    w: &Writer,
    manifest: &Manifest,
) -> Result<()> {
    if let Err(e) = w.active.sync() {
        return Err(shared.poison_with(Error::io(w.active.path(), e)));
    }
    write_manifest(&shared.fs, &shared.dir, manifest)
}

/// Lists a newly created log segment in the MANIFEST. Nothing may be
/// appended to the segment before this returns: an unlisted log segment is
/// a leftover that recovery removes.
pub(crate) fn list_new_segment(shared: &Shared, w: &mut Writer, id: u32) -> Result<()> {
    let mut updated = w.manifest.clone();
    let live = updated.live.get_or_insert_with(LiveSegments::default);
    live.ids.push(id);
    live.ids.sort_unstable();
    live.watermark = None;
    write_manifest(&shared.fs, &shared.dir, &updated)?;
    w.manifest = updated;
    w.watermark_logged = 0;
    Ok(())
}

/// Commits a compaction: the MANIFEST lists `output` instead of `inputs`.
/// On failure the handle is poisoned and nothing may be removed: whether
/// the new MANIFEST reached the disk is unknown until the next open.
pub(crate) fn list_compaction(
    shared: &Shared,
    w: &mut Writer,
    inputs: &[u32],
    output: Option<u32>,
) -> Result<()> {
    let mut updated = w.manifest.clone();
    let live = updated.live.get_or_insert_with(LiveSegments::default);
    live.ids.retain(|id| !inputs.contains(id));
    live.ids.extend(output);
    live.ids.sort_unstable();
    write_manifest(&shared.fs, &shared.dir, &updated).map_err(|e| shared.poison_with(e))?;
    w.manifest = updated;
    Ok(())
}

/// Before an fdatasync of the active segment: appends a watermark frame
/// naming `durable`, the end of what the previous successful fdatasync of
/// this segment covered, unless a watermark already says as much.
pub(crate) fn log_watermark(shared: &Shared, w: &mut Writer, durable: Option<Watermark>) {
    let Some(d) = durable.filter(|d| d.segment == w.active.id()) else {
        return;
    };
    // No room without a rotation: the frame would land in the next segment
    // and name an offset of this one. The seal that comes with the
    // rotation makes this segment's bytes durable anyway.
    let frame_end = w.active.written() + (FRAME_HEADER_BYTES + 8) as u64 + SEAL_RESERVE;
    if d.offset <= w.watermark_logged || frame_end > w.active.capacity() {
        return;
    }
    // A failed append poisons the handle; the sync that follows reports it.
    if append_control_frame(shared, w, FrameKind::Watermark, &d.offset.to_le_bytes()).is_ok() {
        w.watermark_logged = d.offset;
    }
}

/// A clean close: syncs the active segment and records its end as the
/// MANIFEST's watermark, so that a later truncation or damage of it is
/// reported as corruption. Skipped on a poisoned handle (the next open
/// then treats the close as a crash).
pub(crate) fn close_cleanly(shared: &Shared) -> Result<()> {
    let mut w = shared.lock_writer();
    shared.check_poison()?;
    let active = w.active.clone();
    active.sync().map_err(|e| Error::io(active.path(), e))?;
    let mut updated = w.manifest.clone();
    let live = updated.live.get_or_insert_with(LiveSegments::default);
    let mark = Watermark {
        segment: active.id(),
        offset: active.written(),
    };
    if live.watermark == Some(mark) {
        return Ok(());
    }
    live.watermark = Some(mark);
    write_manifest(&shared.fs, &shared.dir, &updated)?;
    w.manifest = updated;
    Ok(())
}
