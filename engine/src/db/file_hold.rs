//! [`FileHold`]: keeps the segment files that exist now on disk, even if
//! compaction replaces them, until the hold is dropped.
//!
//! A replaced segment's file is removed when the last reference to the
//! segment goes (see `Segment`'s `Drop`); a hold is one more reference to
//! every live segment, so backup tools can copy the files a listing named.
//! Compaction keeps running: only the removal of the files waits.

use std::sync::Arc;

use crate::segment::SegmentTable;

/// Keeps the files of the segments live when it was taken from being
/// removed; see the module notes.
#[derive(Debug)]
pub struct FileHold {
    _segments: Arc<SegmentTable>,
}

impl FileHold {
    pub(crate) fn new(segments: Arc<SegmentTable>) -> Self {
        Self {
            _segments: segments,
        }
    }
}
