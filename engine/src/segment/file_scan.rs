//! Walking a whole segment file at recovery without reading a hole through
//! its map.
//!
//! A segment file grows sparsely ahead of its appends, so everything past
//! the written data is a hole. On tmpfs a read fault on a hole of a shared
//! map allocates a page, and on a full file system that allocation kills
//! the process with SIGBUS. Recovery therefore reads through the map only
//! the allocated prefix of the file (up to its first hole, found with
//! `SEEK_HOLE`) and examines anything after it through the descriptor, where
//! a hole reads as zeros without allocating.

use std::io;

use crate::error::{Error, Result};
use crate::format::record::RecordView;
use crate::io::FileHandle;

use super::Segment;
use super::scan::{Damage, FramesAfter, ScanOutcome, frames_after, scan_frames_from};
use crate::format::segment_header::SEGMENT_HEADER_BYTES;

/// Bytes read through the descriptor at a time.
const CHUNK: usize = 64 << 10;

/// Walks `segment` like [`super::scan::scan_frames`], calling `on_record` for every
/// record of every valid frame, without touching a hole through the map.
pub fn scan_file<'a>(
    segment: &'a Segment,
    on_record: impl FnMut(u64, RecordView<'a>),
) -> Result<ScanOutcome> {
    scan_file_from(segment, SEGMENT_HEADER_BYTES as u64, on_record)
}

/// [`scan_file`] from the frame that starts at offset `from` (a frame
/// boundary whose preceding bytes the caller knows), or from the first
/// frame if the file's written prefix does not reach `from`.
pub fn scan_file_from<'a>(
    segment: &'a Segment,
    from: u64,
    on_record: impl FnMut(u64, RecordView<'a>),
) -> Result<ScanOutcome> {
    let bytes = segment.bytes();
    let len = bytes.len() as u64;
    let io_err = |e| Error::io(segment.path(), e);
    let mapped = segment.file().hole_at_or_after(0).map_err(io_err)?.min(len);
    let from = match from <= mapped {
        true => from,
        false => SEGMENT_HEADER_BYTES as u64,
    };
    let mut out = scan_frames_from(&bytes[..mapped as usize], from as usize, on_record);
    if out.seal.is_none() && out.damage.is_none() {
        let from = out.end.max(mapped);
        if first_nonzero(segment.file(), from, len)
            .map_err(io_err)?
            .is_some()
        {
            out.damage = Some(Damage {
                offset: out.end,
                reason: "non-zero bytes after the last frame".into(),
            });
        }
    }
    Ok(out)
}

/// The valid frames of `segment` at 8-aligned offsets at or after `from`,
/// read through the descriptor.
pub fn frames_after_in_file(segment: &Segment, from: u64) -> Result<FramesAfter> {
    let from = from.next_multiple_of(8);
    let len = segment.bytes().len() as u64;
    if from >= len {
        return Ok(FramesAfter::default());
    }
    let tail =
        read_skipping_holes(segment.file(), from, len).map_err(|e| Error::io(segment.path(), e))?;
    Ok(frames_after(&tail, 0, from))
}

/// Overwrites every non-zero byte of `segment` at or after `from` with
/// zeros through the descriptor (holes stay holes) and syncs the file.
pub fn zero_after(segment: &Segment, from: u64) -> Result<()> {
    let file = segment.file();
    let len = segment.bytes().len() as u64;
    let zero = |at: u64| -> io::Result<bool> {
        let mut chunk = vec![0u8; CHUNK.min((len - at) as usize)];
        file.read_exact_at(&mut chunk, at)?;
        let dirty = chunk.iter().any(|&b| b != 0);
        if dirty {
            chunk.fill(0);
            file.write_all_at(&chunk, at)?;
        }
        Ok(dirty)
    };
    let mut wrote = false;
    let mut at = from;
    while let Some(found) =
        first_nonzero(file, at, len).map_err(|e| Error::io(segment.path(), e))?
    {
        wrote |= zero(found).map_err(|e| Error::io(segment.path(), e))?;
        at = found + CHUNK.min((len - found) as usize) as u64;
    }
    if wrote {
        segment.sync().map_err(|e| Error::io(segment.path(), e))?;
    }
    Ok(())
}

/// Offset of the first non-zero byte of `file` in `from..to`, reading only
/// its allocated extents.
fn first_nonzero(file: &dyn FileHandle, from: u64, to: u64) -> io::Result<Option<u64>> {
    let mut at = from;
    while let Some(start) = file.data_at_or_after(at)?.filter(|&s| s < to) {
        let stop = file.hole_at_or_after(start)?.clamp(start + 1, to);
        let mut pos = start;
        let mut buf = vec![0u8; CHUNK];
        while pos < stop {
            let n = CHUNK.min((stop - pos) as usize);
            file.read_exact_at(&mut buf[..n], pos)?;
            if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
                return Ok(Some(pos + i as u64));
            }
            pos += n as u64;
        }
        at = stop;
    }
    Ok(None)
}

/// Bytes `from..to` of `file`, holes as zeros, reading only allocated
/// extents.
fn read_skipping_holes(file: &dyn FileHandle, from: u64, to: u64) -> io::Result<Vec<u8>> {
    let mut out = vec![0u8; (to - from) as usize];
    let mut at = from;
    while let Some(start) = file.data_at_or_after(at)?.filter(|&s| s < to) {
        let stop = file.hole_at_or_after(start)?.clamp(start + 1, to);
        let range = (start - from) as usize..(stop - from) as usize;
        file.read_exact_at(&mut out[range], start)?;
        at = stop;
    }
    Ok(out)
}
