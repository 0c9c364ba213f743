//! Which segment files recovery opens, and which it removes.
//!
//! With a MANIFEST that lists the live segments, the list is the truth: a
//! listed file that is missing, or whose header is damaged, is corruption;
//! a file not listed is a leftover of an operation that never committed (a
//! log segment created by a rotation that crashed before listing it, a
//! compaction output never installed) or of one that did (a replaced
//! input), and is removed. The one exception: an unlisted log segment newer
//! than every listed one that holds frames would mean writes were accepted
//! into a segment before it was listed, which never happens; it is reported,
//! not removed.
//!
//! Without the list (a database written by format version 1) every segment
//! file is opened, and only a newest file whose header was never completely
//! written is removed.
//!
//! Leftovers are removed only once recovery has succeeded: an open that
//! fails changes nothing in the directory. A read-only open
//! ([`Mode::ReadOnly`]) never removes them and does not judge unlisted
//! files at all: they may be a primary's rotation or compaction in progress.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::frame::FRAME_HEADER_BYTES;
use crate::format::live_segments::LiveSegments;
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
use crate::io::{FileHandle, FileSystem, OpenMode};
use crate::segment::{self, Segment};

use super::Mode;

/// The reason given when a listed segment file is missing.
const LISTED_MISSING: &str = "segment file listed in the MANIFEST is missing";

/// Whether `err` says a segment file listed in the MANIFEST was not found:
/// beside a running primary, its compaction may have removed it after the
/// MANIFEST was read, so a read-only open reads the MANIFEST again.
pub(crate) fn is_vanished_segment(err: &Error) -> bool {
    match err {
        Error::Corruption { reason, .. } => reason == LISTED_MISSING,
        Error::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The segments recovery goes on with.
pub(super) struct Opened {
    /// In id order.
    pub segments: Vec<Arc<Segment>>,
    /// The largest segment id seen in the directory or the list.
    pub max_id: Option<u32>,
    /// Unlisted files to remove once recovery has succeeded (a failed
    /// open changes nothing).
    pub leftovers: Vec<PathBuf>,
}

/// Opens the segments of the database in `dir`.
pub(super) fn open_segments(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    live: Option<&LiveSegments>,
    segment_bytes: u64,
    mode: Mode,
) -> Result<Opened> {
    let names = fs.list_dir(dir).map_err(|e| Error::io(dir, e))?;
    let present: BTreeSet<u32> = names
        .iter()
        .filter_map(|n| segment::parse_file_name(n))
        .collect();
    let listed: Option<BTreeSet<u32>> = live.map(|l| l.ids.iter().copied().collect());
    let max_id = present.iter().chain(listed.iter().flatten()).max().copied();
    let mut segments = Vec::new();
    let mut leftovers = Vec::new();
    match &listed {
        Some(listed) => {
            if let Some(missing) = listed.difference(&present).next() {
                return Err(Error::corruption(
                    dir.join(segment::file_name(*missing)),
                    0,
                    LISTED_MISSING,
                ));
            }
            let newest_listed = listed.last().copied().unwrap_or(0);
            for &id in present.difference(listed) {
                if mode == Mode::Primary {
                    leftovers.push(check_leftover(fs, dir, id, id > newest_listed)?);
                }
            }
            for &id in listed {
                segments.push(open_listed(fs, dir, id, segment_bytes, mode)?);
            }
        }
        None => {
            for &id in &present {
                match read_header(fs, dir, id, mode)? {
                    Ok((header, file)) => {
                        segments.push(map_segment(fs, header, file, segment_bytes)?)
                    }
                    // The newest file with a header that was never completely
                    // written (a crash while creating it) holds no frame.
                    Err(bad) if Some(id) == max_id && bad.never_written => {
                        leftovers.push(bad.path);
                    }
                    Err(bad) => return Err(bad.into_error()),
                }
            }
        }
    }
    Ok(Opened {
        segments,
        max_id,
        leftovers,
    })
}

/// Opens and maps segment `id`, which the MANIFEST lists; a bad header is
/// corruption.
pub(crate) fn open_listed(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    id: u32,
    segment_bytes: u64,
    mode: Mode,
) -> Result<Arc<Segment>> {
    let (header, file) = read_header(fs, dir, id, mode)?.map_err(|c| c.into_error())?;
    map_segment(fs, header, file, segment_bytes)
}

/// A segment header that failed to decode.
struct BadHeader {
    path: PathBuf,
    reason: String,
    /// Short or all zeros: the file was being created.
    never_written: bool,
}

impl BadHeader {
    fn into_error(self) -> Error {
        Error::corruption(self.path, 0, self.reason)
    }
}

type Header = (SegmentHeader, Arc<dyn FileHandle>);

/// Opens segment `id` (for reading only in [`Mode::ReadOnly`]) and decodes
/// its header. I/O errors are errors; a bad header is returned for the
/// caller to judge.
fn read_header(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    id: u32,
    mode: Mode,
) -> Result<std::result::Result<Header, BadHeader>> {
    let path = dir.join(segment::file_name(id));
    let open_mode = match mode {
        Mode::Primary => OpenMode::Existing,
        Mode::ReadOnly => OpenMode::ReadOnly,
    };
    let file = fs.open(&path, open_mode).map_err(|e| Error::io(&path, e))?;
    let mut head = [0u8; SEGMENT_HEADER_BYTES];
    let short = file.read_exact_at(&mut head, 0).is_err();
    let decoded = match short {
        true => Err(format!(
            "file too short for a segment header ({} bytes)",
            file.len().unwrap_or(0)
        )),
        false => SegmentHeader::decode(&head),
    };
    Ok(match decoded {
        Ok(h) if h.id == id => Ok((h, file)),
        Ok(_) => Err(BadHeader {
            path,
            reason: "segment id in header does not match file name".into(),
            never_written: false,
        }),
        Err(reason) => Err(BadHeader {
            path,
            reason,
            never_written: short || head.iter().all(|&b| b == 0),
        }),
    })
}

/// Maps an opened segment; log segments get room to grow (one of them may
/// become the active segment).
fn map_segment(
    fs: &Arc<dyn FileSystem>,
    header: SegmentHeader,
    file: Arc<dyn FileHandle>,
    segment_bytes: u64,
) -> Result<Arc<Segment>> {
    let capacity = match header.kind {
        SegmentKind::Log => segment_bytes,
        SegmentKind::Compacted => 0,
    };
    Ok(Arc::new(Segment::from_open_file(
        fs, header, file, 0, capacity,
    )?))
}

/// Checks that an unlisted segment file may be removed and returns its
/// path. One newer than every listed segment must not hold frames if it is
/// a log segment (see the module comment).
fn check_leftover(fs: &Arc<dyn FileSystem>, dir: &Path, id: u32, newest: bool) -> Result<PathBuf> {
    let path = dir.join(segment::file_name(id));
    if newest
        && let Ok((header, file)) = read_header(fs, dir, id, Mode::Primary)?
        && header.kind == SegmentKind::Log
    {
        let mut first = [0u8; FRAME_HEADER_BYTES];
        let written = file
            .read_exact_at(&mut first, SEGMENT_HEADER_BYTES as u64)
            .is_ok();
        if written && first.iter().any(|&b| b != 0) {
            return Err(Error::corruption(
                &path,
                SEGMENT_HEADER_BYTES as u64,
                "log segment holds frames but is not listed in the MANIFEST",
            ));
        }
    }
    Ok(path)
}

/// Removes the leftovers found by [`open_segments`].
pub(super) fn remove_leftovers(fs: &Arc<dyn FileSystem>, leftovers: &[PathBuf]) -> Result<()> {
    leftovers.iter().try_for_each(|path| remove(fs, path))
}

fn remove(fs: &Arc<dyn FileSystem>, path: &Path) -> Result<()> {
    fs.remove_file(path).map_err(|e| Error::io(path, e))
}
