//! Writing a compaction's output file: frames appended in order, handed to
//! the file in pieces that end on [`HUGE_PAGE_BYTES`] boundaries.
//!
//! Why the pieces: the page cache keeps what one `pwrite` brings in as large
//! folios, up to the size of the write and aligned like it. A write that
//! covers a whole aligned 2 MiB range becomes one 2 MiB folio, which the
//! kernel maps with a single huge-page entry (seen on Linux 6.18 with ext4:
//! 2 MiB aligned writes give `FilePmdMapped` maps, 1 MiB writes none). A
//! compaction output is read at random (point reads, seeks, the next
//! compaction) through its map, so a huge-page entry per 2 MiB instead of a
//! page entry per 4 KiB saves a TLB miss, and under a hypervisor a
//! two-dimensional page walk, on most record reads. The bytes and their
//! order in the file are exactly as before: only the write calls change.
//! Nothing is read from the output before it is sealed.

use crate::error::{Error, Result};
use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind};
use crate::io::transient::{Transient, TransientVec};
use crate::segment::Segment;

/// The size and alignment of the pieces the output is written in: the
/// x86-64 huge page.
pub(super) const HUGE_PAGE_BYTES: u64 = 2 << 20;

/// Frames not yet written, from file offset `start`.
pub(super) struct OutputWriter<'s> {
    segment: &'s Segment,
    start: u64,
    pending: TransientVec<u8>,
    /// Where the frame being built starts in `pending`.
    frame_start: usize,
}

impl<'s> OutputWriter<'s> {
    /// A writer appending to `segment` from offset `at`. It buffers at
    /// most a huge page and a frame: `frame_bytes` is the largest frame.
    pub(super) fn new(segment: &'s Segment, at: u64, frame_bytes: usize) -> Self {
        let room = segment.capacity().saturating_sub(at);
        let buffered = (HUGE_PAGE_BYTES as usize + frame_bytes).min(room as usize);
        OutputWriter {
            segment,
            start: at,
            pending: TransientVec::with_capacity_in(buffered, Transient),
            frame_start: 0,
        }
    }

    /// The segment written.
    pub(super) fn segment(&self) -> &'s Segment {
        self.segment
    }

    /// The file offset the next byte appended lands at.
    pub(super) fn end(&self) -> u64 {
        self.start + self.pending.len() as u64
    }

    /// Starts a frame: its header's bytes are filled in by
    /// [`Self::end_frame`]. Append its body to [`Self::body`].
    pub(super) fn begin_frame(&mut self) {
        self.frame_start = self.pending.len();
        self.pending.extend_from_slice(&[0u8; FRAME_HEADER_BYTES]);
    }

    /// The buffer the current frame's body is appended to.
    pub(super) fn body(&mut self) -> &mut TransientVec<u8> {
        &mut self.pending
    }

    /// Ends the frame begun last, holding `count` records, and writes every
    /// whole huge page buffered so far.
    pub(super) fn end_frame(&mut self, kind: FrameKind, count: u32) -> Result<()> {
        let body_at = self.frame_start + FRAME_HEADER_BYTES;
        let header = FrameHeader::for_body(kind, &self.pending[body_at..], count);
        self.pending[self.frame_start..body_at].copy_from_slice(&header.encode());
        let cut = self.end() / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
        if cut > self.start {
            let n = (cut - self.start) as usize;
            self.write(n)?;
        }
        Ok(())
    }

    /// Writes what is left; returns the end of the written data.
    pub(super) fn finish(mut self) -> Result<u64> {
        let n = self.pending.len();
        self.write(n)?;
        Ok(self.start)
    }

    /// Writes the first `n` pending bytes.
    fn write(&mut self, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.segment
            .write_at(&self.pending[..n], self.start)
            .map_err(|e| Error::io(self.segment.path(), e))?;
        self.pending.drain(..n);
        self.start += n as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
    use crate::io::{FileSystem, StdFileSystem};

    /// Frames of 300 KB to 1.3 MB over 8 MiB: every write but the last
    /// ends on a huge-page boundary, and the file holds each frame whole,
    /// in order, with its header and body as built.
    #[test]
    fn frames_land_whole_and_in_order_written_in_huge_page_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(StdFileSystem);
        let header = SegmentHeader {
            kind: SegmentKind::Compacted,
            id: 7,
            seq_floor: 1,
        };
        let capacity = 9 << 20;
        let segment = Segment::create(&fs, dir.path(), header, capacity, capacity).unwrap();
        let mut out = OutputWriter::new(&segment, SEGMENT_HEADER_BYTES as u64, 1 << 20);
        let mut frames = Vec::new();
        let mut starts = Vec::new();
        while out.end() < 8 << 20 {
            let n = frames.len();
            let body: Vec<u8> = (0..300_000 + n * 97_000)
                .map(|i| (i * 31 + n) as u8)
                .collect();
            let at = out.end();
            out.begin_frame();
            out.body().extend_from_slice(&body);
            out.end_frame(FrameKind::Batch, n as u32).unwrap();
            assert!(
                out.start == SEGMENT_HEADER_BYTES as u64
                    || out.start.is_multiple_of(HUGE_PAGE_BYTES),
                "a write ended at {}",
                out.start
            );
            starts.push(at);
            frames.push(body);
        }
        let end = out.finish().unwrap();
        segment.set_written(end);
        let bytes = segment.bytes();
        for (n, (at, body)) in starts.iter().zip(&frames).enumerate() {
            let at = *at as usize;
            let header = FrameHeader::decode(&bytes[at..at + FRAME_HEADER_BYTES]).unwrap();
            assert_eq!(
                (header.count, header.body_len as usize),
                (n as u32, body.len())
            );
            let body_at = at + FRAME_HEADER_BYTES;
            assert_eq!(
                &bytes[body_at..body_at + body.len()],
                &body[..],
                "frame {n}"
            );
        }
        let last = starts.last().unwrap();
        assert_eq!(
            end,
            last + (FRAME_HEADER_BYTES + frames.last().unwrap().len()) as u64
        );
    }
}
