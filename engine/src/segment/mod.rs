//! Segment files: append-only, pre-sized, memory-mapped read-only.
//!
//! A segment's map is created once, at the segment's full capacity; the
//! file itself grows in [`GROW_CHUNK`] steps (`set_len`, sparse) ahead of
//! the appends, which go through the file descriptor. Readers see appended
//! bytes through the shared map and only ever touch bytes below the file's
//! current length, so no access can fault past the end of the file; the map
//! never has to be remapped and the file is never shrunk while mapped. When
//! full, a log segment is sealed with a seal frame and a new one is started.

pub mod file_scan;
pub mod key_directory;
pub mod key_filter;
pub mod key_span;
pub(crate) mod map_advice;
mod rebuildable;
pub(crate) mod resolver;
pub mod scan;
pub mod summary;
pub mod table;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::format::compressed_value::ValueDictionary;
use crate::format::frame::{FRAME_HEADER_BYTES, FrameHeader, FrameKind};
use crate::format::location::MAX_SEGMENT_BYTES;
use crate::format::record::{
    RECORD_HEADER_BYTES, RecordView, SHORT_RECORD_HEADER_BYTES, ValueEncoding,
};
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentHeader, SegmentKind};
use crate::io::{FileHandle, FileSystem, OpenMode, ReadOnlyMap};
use crate::options::MAX_VALUE_BYTES;

use self::key_directory::KeyDirectory;
use self::key_filter::KeyFilter;
use self::key_span::KeySpan;
use self::rebuildable::Rebuildable;

pub use table::SegmentTable;

/// The file grows ahead of appends in steps of this many bytes.
pub const GROW_CHUNK: u64 = 4 << 20;

/// File name of segment `id`.
pub fn file_name(id: u32) -> String {
    format!("{id:010}.seg")
}

/// Parses a segment file name back into its id.
pub fn parse_file_name(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".seg")?;
    if stem.len() != 10 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}

/// Appended bytes handed to the kernel's writeback at a time.
const WRITEBACK_BYTES: u64 = 1 << 20;

/// How much of a record [`Segment::will_read_record`] asks for from its
/// start: its header and key, and a value of up to about 2 KB (a larger
/// record's rest is read when it is touched). Measured on a seek + 10 over
/// 1,000-byte values in a quarter of the data's memory: 1, 2 and 4 KiB
/// took the same time within noise; 4 KiB read 53 KB a seek, 2 KiB 42 KB.
const RECORD_READ_AHEAD: u64 = 2048;

/// One segment file and its read-only map.
#[derive(Debug)]
pub struct Segment {
    header: SegmentHeader,
    path: PathBuf,
    file: Arc<dyn FileHandle>,
    fs: Arc<dyn FileSystem>,
    map: ReadOnlyMap,
    /// End of the bytes written so far (the next frame goes here).
    written: AtomicU64,
    /// Current length of the file (only grows); bytes below it are mapped.
    file_len: AtomicU64,
    /// Bytes of records no longer reachable by any reader.
    dead_bytes: AtomicU64,
    /// Smallest sequence number of any record in the segment.
    min_seq: AtomicU64,
    /// No record in the segment has a larger sequence number (see
    /// [`Self::seq_ceiling`]).
    seq_ceiling: AtomicU64,
    /// Smallest and largest key of any record in the segment.
    key_span: Mutex<KeySpan>,
    /// The segment's keys, built on first use once it is sealed (and again
    /// after the memory budget dropped it).
    key_filter: Rebuildable<KeyFilter>,
    /// The segment's keyed records in key order, built on first use once it
    /// is sealed (and again after the memory budget dropped it).
    key_directory: Rebuildable<KeyDirectory>,
    /// Set when compaction has replaced this segment: the file is removed
    /// when the last reference to it is dropped.
    obsolete: AtomicBool,
    /// Bytes below this have been handed to the kernel's writeback.
    writeback_from: AtomicU64,
    /// How the map was advised last (see [`map_advice`]).
    advice: AtomicU8,
    /// The value dictionary of a sealed compaction output with compressed
    /// values, read from its first frame on first use (the text of the
    /// damage if that frame does not decode).
    dictionary: OnceLock<std::result::Result<Option<Arc<ValueDictionary>>, String>>,
}

/// How a segment's map is advised (see [`map_advice`]); stored as a `u8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum MapAdvice {
    /// Not advised yet: the kernel's defaults.
    Default = 0,
    /// Huge pages: the segments fit in memory.
    HugePages = 1,
    /// Random access: the segments are larger than memory.
    Random = 2,
}

impl Segment {
    /// Creates a new, empty segment that can hold `capacity` bytes, with a
    /// file of `initial_len` bytes to start with, and maps it.
    pub fn create(
        fs: &Arc<dyn FileSystem>,
        dir: &Path,
        header: SegmentHeader,
        capacity: u64,
        initial_len: u64,
    ) -> Result<Segment> {
        let path = dir.join(file_name(header.id));
        let file = fs
            .open(&path, OpenMode::CreateNew)
            .map_err(|e| Error::io(&path, e))?;
        // A segment holds at least its header, whatever size was asked for.
        let capacity = capacity.max(SEGMENT_HEADER_BYTES as u64);
        let initial_len = initial_len.clamp(SEGMENT_HEADER_BYTES as u64, capacity);
        let setup = || -> io::Result<ReadOnlyMap> {
            file.write_all_at(&header.encode(), 0)?;
            file.set_len(initial_len)?;
            file.sync_data()?;
            file.map_readonly(capacity)
        };
        let map = match setup() {
            Ok(map) => map,
            Err(e) => {
                // Nothing refers to the new file yet: leave no partial
                // segment behind (on a full disk, least of all).
                drop(file);
                let _ = fs.remove_file(&path);
                return Err(Error::io(&path, e));
            }
        };
        let written = SEGMENT_HEADER_BYTES as u64;
        let fs = fs.clone();
        Ok(Self::from_parts(
            header,
            path,
            file,
            fs,
            map,
            written,
            initial_len,
        ))
    }

    /// Maps an existing segment whose valid data ends at `written`, with
    /// room to grow to at least `capacity` bytes.
    pub(crate) fn from_open_file(
        fs: &Arc<dyn FileSystem>,
        header: SegmentHeader,
        file: Arc<dyn FileHandle>,
        written: u64,
        capacity: u64,
    ) -> Result<Segment> {
        let path = file.path().to_path_buf();
        let len = file.len().map_err(|e| Error::io(&path, e))?;
        if len > MAX_SEGMENT_BYTES {
            // No segment this engine writes is this long: an index entry
            // could not point into its end.
            return Err(Error::corruption(
                &path,
                MAX_SEGMENT_BYTES,
                format!("{len} bytes, over the {MAX_SEGMENT_BYTES}-byte segment limit"),
            ));
        }
        let map = file
            .map_readonly(len.max(capacity))
            .map_err(|e| Error::io(&path, e))?;
        let fs = fs.clone();
        Ok(Self::from_parts(header, path, file, fs, map, written, len))
    }

    fn from_parts(
        header: SegmentHeader,
        path: PathBuf,
        file: Arc<dyn FileHandle>,
        fs: Arc<dyn FileSystem>,
        map: ReadOnlyMap,
        written: u64,
        file_len: u64,
    ) -> Segment {
        Segment {
            header,
            path,
            file,
            fs,
            map,
            written: AtomicU64::new(written),
            file_len: AtomicU64::new(file_len),
            dead_bytes: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            seq_ceiling: AtomicU64::new(0),
            key_span: Mutex::new(KeySpan::default()),
            key_filter: Rebuildable::default(),
            key_directory: Rebuildable::default(),
            obsolete: AtomicBool::new(false),
            writeback_from: AtomicU64::new(0),
            advice: AtomicU8::new(MapAdvice::Default as u8),
            dictionary: OnceLock::new(),
        }
    }

    /// The segment id.
    pub fn id(&self) -> u32 {
        self.header.id
    }

    /// Log segment or compaction output.
    pub fn kind(&self) -> SegmentKind {
        self.header.kind
    }

    /// The segment's header.
    pub fn header(&self) -> SegmentHeader {
        self.header
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, for reads that must not go through the map.
    pub(crate) fn file(&self) -> &dyn FileHandle {
        &*self.file
    }

    /// Size of the map (the file's capacity).
    pub fn capacity(&self) -> u64 {
        self.map.len() as u64
    }

    /// Every byte of the file (the map may extend further, but bytes past
    /// the end of the file are never exposed: touching them would fault).
    /// Bytes past [`Self::written`] may lie in a hole of the sparse file:
    /// recovery reads those through the descriptor (see [`file_scan`]).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        let len = (self.file_len.load(Ordering::Acquire) as usize).min(self.map.len());
        &self.map[..len]
    }

    /// Advises the map as `advice` says (see [`map_advice`]), unless it
    /// was advised so already.
    pub(crate) fn advise(&self, advice: MapAdvice) {
        if self.advice.swap(advice as u8, Ordering::Relaxed) == advice as u8 {
            return;
        }
        match advice {
            MapAdvice::HugePages => self.map.advise_huge_pages(),
            MapAdvice::Random => self.map.advise_random(),
            MapAdvice::Default => {}
        }
    }

    /// Whether the map is advised random access (the segments are larger
    /// than memory).
    pub(crate) fn read_at_random(&self) -> bool {
        self.advice.load(Ordering::Relaxed) == MapAdvice::Random as u8
    }

    /// Tells the kernel that `len` bytes at `offset` are about to be read
    /// in order, where the map is advised random access and so reads
    /// nothing ahead by itself (see [`map_advice`]). Cheap otherwise.
    pub(crate) fn will_read(&self, offset: u64, len: u64) {
        if self.read_at_random() {
            let offset = usize::try_from(offset).unwrap_or(usize::MAX);
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            self.map.will_need(offset, len);
        }
    }

    /// Where the map is advised random access, asks the kernel to start
    /// reading the page holding the record at `offset` and the page after
    /// it if the record's first [`RECORD_READ_AHEAD`] bytes reach into it,
    /// without waiting: records a reader visits next, requested together,
    /// are read in parallel instead of one page fault after another. Cheap
    /// otherwise (see [`Self::will_read`]).
    pub(crate) fn will_read_record(&self, offset: u64) {
        let page = offset - offset % 4096;
        self.will_read(page, offset - page + RECORD_READ_AHEAD);
    }

    /// Grows the file (in [`GROW_CHUNK`] steps, up to the capacity) so that
    /// it is at least `end` bytes long. The map already covers it.
    pub(crate) fn ensure_len(&self, end: u64) -> io::Result<()> {
        let current = self.file_len.load(Ordering::Acquire);
        if end <= current {
            return Ok(());
        }
        if end > self.capacity() {
            return Err(io::Error::other("write past the segment's capacity"));
        }
        let new_len = end.next_multiple_of(GROW_CHUNK).min(self.capacity());
        self.file.set_len(new_len)?;
        self.file_len.store(new_len, Ordering::Release);
        Ok(())
    }

    /// Cuts the file of a segment being written that no other thread can
    /// reach yet (a compaction output before it is published: nothing but
    /// its writer holds it, and nothing reads past the written end) to
    /// `len` bytes, if it is longer: an output created at a capacity its
    /// compressed records did not fill does not keep a sparse tail.
    pub(crate) fn cut_unpublished_to(&self, len: u64) -> io::Result<()> {
        let current = self.file_len.load(Ordering::Acquire);
        if len >= current || len < self.written() {
            return Ok(());
        }
        self.file.set_len(len)?;
        self.file_len.store(len, Ordering::Release);
        Ok(())
    }

    /// Records that the file is now `len` bytes long (a primary grew it):
    /// bytes up to there, within the map, become readable. Never shrinks.
    pub(crate) fn note_file_len(&self, len: u64) {
        self.file_len
            .fetch_max(len.min(self.map.len() as u64), Ordering::AcqRel);
    }

    /// End of the written data.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// The written data: every byte of it was written through the
    /// descriptor, so none lies in a hole.
    pub fn written_bytes(&self) -> &[u8] {
        let bytes = self.bytes();
        &bytes[..(self.written() as usize).min(bytes.len())]
    }

    pub(crate) fn set_written(&self, end: u64) {
        self.written.store(end, Ordering::Release);
    }

    /// Bytes of records that no reader can reach any more.
    pub fn dead_bytes(&self) -> u64 {
        self.dead_bytes.load(Ordering::Relaxed)
    }

    /// Records `n` more bytes as dead.
    pub(crate) fn add_dead(&self, n: u64) {
        self.dead_bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// Smallest sequence number stored in the segment (`u64::MAX` if none).
    pub fn min_seq(&self) -> u64 {
        self.min_seq.load(Ordering::Relaxed)
    }

    /// Records that the segment holds a record with sequence number `seq`.
    pub(crate) fn note_seq(&self, seq: u64) {
        self.min_seq.fetch_min(seq, Ordering::Relaxed);
        self.raise_seq_ceiling(seq);
    }

    /// A bound no record's sequence number in the segment exceeds. The log
    /// writer raises it for a group of batches before it points the index
    /// at their records, so a reader that found a record through the index
    /// (with `Acquire`) finds it at or above the record's. Recovered
    /// segments get the last sequence number at open: a bound, not the
    /// largest.
    pub fn seq_ceiling(&self) -> u64 {
        self.seq_ceiling.load(Ordering::Relaxed)
    }

    /// Raises [`Self::seq_ceiling`] to at least `seq`.
    pub(crate) fn raise_seq_ceiling(&self, seq: u64) {
        self.seq_ceiling.fetch_max(seq, Ordering::Relaxed);
    }

    /// The smallest and largest `(keyspace, key)` of its records, if any.
    pub fn key_bounds(&self) -> Option<(key_span::SpanKey, key_span::SpanKey)> {
        let span = self.key_span.lock().unwrap_or_else(PoisonError::into_inner);
        span.bounds().cloned()
    }

    /// Whether a record of `keyspace` with a key in `[start, end)` may be
    /// in the segment.
    pub fn may_hold_keys(&self, keyspace: u32, start: &[u8], end: &[u8]) -> bool {
        self.key_span
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .may_hold(keyspace, start, end)
    }

    /// Whether the segment, which must be sealed (it no longer changes),
    /// may hold a record of `key` in `keyspace`. The first call walks the
    /// segment to build its key filter.
    pub fn sealed_may_hold_key(&self, keyspace: u32, key: &[u8]) -> bool {
        if !self.may_hold_keys(keyspace, key, &[key, &[0]].concat()) {
            return false;
        }
        self.key_filter
            .get_or_build(|| {
                let mut keys = Vec::new();
                scan::scan_frames(self.written_bytes(), |_, r| {
                    keys.push((r.keyspace, r.key));
                });
                KeyFilter::build(keys.len(), keys.into_iter())
            })
            .may_contain(keyspace, key)
    }

    /// Whether the segment, which must be sealed (it no longer changes),
    /// holds a record of `keyspace` with a key in `[start, end)` and a
    /// sequence number below `seq`: exactly, not "may" (see
    /// [`key_directory`]). The first call that gets past the key span and
    /// the smallest sequence number walks the segment to build its key
    /// directory.
    pub fn sealed_holds_older_in(&self, keyspace: u32, start: &[u8], end: &[u8], seq: u64) -> bool {
        if self.min_seq() >= seq || !self.may_hold_keys(keyspace, start, end) {
            return false;
        }
        let written = self.written_bytes();
        self.key_directory
            .get_or_build(|| KeyDirectory::build(written))
            .holds_older_in(written, keyspace, start, end, seq)
    }

    /// Whether a record of `keyspace` may be in the segment.
    pub fn may_hold_keyspace(&self, keyspace: u32) -> bool {
        self.key_span
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .may_hold_keyspace(keyspace)
    }

    /// Whether the segment, which must be sealed, holds a record of
    /// `keyspace` with a sequence number below `seq` whose key `covered`
    /// accepts: the question of [`Self::sealed_holds_older_in`] for a range
    /// in an order other than the bytes' (see [`crate::mvcc::key_order`]),
    /// which asks about every such record of the keyspace.
    pub fn sealed_holds_older_where(
        &self,
        keyspace: u32,
        seq: u64,
        covered: &dyn Fn(&[u8]) -> bool,
    ) -> bool {
        if self.min_seq() >= seq || !self.may_hold_keyspace(keyspace) {
            return false;
        }
        let written = self.written_bytes();
        self.key_directory
            .get_or_build(|| KeyDirectory::build(written))
            .holds_older_where(written, keyspace, seq, covered)
    }

    /// Heap bytes of the key filter and key directory built for the
    /// segment, if any.
    pub fn rebuildable_bytes(&self) -> usize {
        self.key_filter.bytes(KeyFilter::heap_bytes)
            + self.key_directory.bytes(KeyDirectory::heap_bytes)
    }

    /// Drops the segment's key filter and key directory (the next use
    /// builds them again); returns the heap bytes they held.
    pub fn drop_rebuildable(&self) -> usize {
        let bytes = self.rebuildable_bytes();
        self.key_filter.drop_built();
        self.key_directory.drop_built();
        bytes
    }

    pub(crate) fn note_key(&self, keyspace: u32, key: &[u8]) {
        self.key_span
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .note(keyspace, key);
    }

    /// Bytes of data (records and frames) written after the header.
    pub fn data_bytes(&self) -> u64 {
        self.written().saturating_sub(SEGMENT_HEADER_BYTES as u64)
    }

    /// Hints the CPU to start loading the record at `offset` into its
    /// caches (see [`crate::io::prefetch`]); does nothing past the map.
    #[inline]
    pub(crate) fn prefetch_record(&self, offset: u64) {
        let bytes = self.bytes();
        if let Ok(offset) = usize::try_from(offset)
            && offset < bytes.len()
        {
            crate::io::prefetch::prefetch_range(bytes, offset);
        }
    }

    /// Parses the record at `offset`, checking bounds and (optionally) its
    /// checksum. Damage is a [`Error::Corruption`] naming this file.
    #[inline(always)]
    pub fn record_at(&self, offset: u64, verify: bool) -> Result<RecordView<'_>> {
        self.record_within(self.written_bytes(), offset, verify)
    }

    /// [`Self::record_at`] within `written`, what [`Self::written_bytes`]
    /// returned earlier (a reader resolving many records of the segment
    /// loads its bounds once; records it was pointed to lie below them).
    #[inline(always)]
    pub(crate) fn record_within<'a>(
        &self,
        written: &'a [u8],
        offset: u64,
        verify: bool,
    ) -> Result<RecordView<'a>> {
        let bytes = usize::try_from(offset)
            .ok()
            .and_then(|o| written.get(o..))
            .filter(|b| !b.is_empty());
        let Some(bytes) = bytes else {
            return Err(self.damaged(offset, "record offset past the end of the data".into()));
        };
        let record = match RecordView::parse(bytes) {
            Ok(record) => record,
            Err(damage) => return Err(self.damaged(offset, damage.to_string())),
        };
        if verify && !record.checksum_ok() {
            return Err(self.damaged(offset, "record checksum mismatch".into()));
        }
        Ok(record)
    }

    /// The error for damage found at `offset`: out of the read path's way,
    /// so that [`Self::record_at`] stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn damaged(&self, offset: u64, reason: String) -> Error {
        Error::corruption(&self.path, offset, reason)
    }

    /// The value of `record`, a record read from this segment's map: the
    /// value field itself, or (for a compressed value, see FORMAT.md,
    /// "Compressed values") the value decoded with the segment's
    /// dictionary. Damage is a [`Error::Corruption`] naming this file and
    /// the record's offset.
    #[inline]
    pub fn value_of<'a>(&self, record: &RecordView<'a>) -> Result<Cow<'a, [u8]>> {
        match record.value_encoding {
            ValueEncoding::Plain => Ok(Cow::Borrowed(record.value)),
            ValueEncoding::Compressed => self.decompressed(record).map(Cow::Owned),
        }
    }

    /// The offset of `record` (read from this segment's map) in the file.
    fn offset_of(&self, record: &RecordView<'_>) -> u64 {
        let base = self.bytes().as_ptr() as usize;
        let header = match record.short {
            true => SHORT_RECORD_HEADER_BYTES,
            false => RECORD_HEADER_BYTES,
        };
        (record.key.as_ptr() as usize).saturating_sub(base + header) as u64
    }

    /// Appends the value of `record`, a compressed value read from this
    /// segment's map, decoded, to `out` (left as it was on an error).
    pub(crate) fn decode_onto(&self, record: &RecordView<'_>, out: &mut Vec<u8>) -> Result<()> {
        let dictionary = self.dictionary_for(record)?;
        dictionary
            .decompress_onto(record.value, MAX_VALUE_BYTES, out)
            .map_err(|why| self.damaged(self.offset_of(record), why))
    }

    /// The dictionary to decode `record`'s compressed value with.
    fn dictionary_for(&self, record: &RecordView<'_>) -> Result<Arc<ValueDictionary>> {
        match self.dictionary() {
            Ok(Some(dictionary)) => Ok(dictionary),
            Ok(None) => {
                let why = "a compressed value in a segment without a value dictionary";
                Err(self.damaged(self.offset_of(record), why.into()))
            }
            Err(why) => Err(self.damaged(SEGMENT_HEADER_BYTES as u64, why)),
        }
    }

    #[cold]
    #[inline(never)]
    fn decompressed(&self, record: &RecordView<'_>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.decode_onto(record, &mut out)?;
        Ok(out)
    }

    /// The segment's value dictionary, if its first frame is one (read
    /// once; see [`FrameKind::ValueDictionary`]).
    pub(crate) fn dictionary(&self) -> std::result::Result<Option<Arc<ValueDictionary>>, String> {
        self.dictionary
            .get_or_init(|| read_dictionary(self.written_bytes()))
            .clone()
    }

    /// The key of the record at `offset`, read from its header alone (see
    /// [`RecordView::key_of`]); `None` if it lies past the written data.
    #[inline]
    pub fn key_at(&self, offset: u64) -> Option<&[u8]> {
        let written = self.written_bytes();
        RecordView::key_of(written.get(usize::try_from(offset).ok()?..)?)
    }

    /// Appends `bytes` at `offset` through the file descriptor, growing the
    /// file first if needed.
    pub(crate) fn write_at(&self, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.ensure_len(offset + bytes.len() as u64)?;
        self.file.write_all_at(bytes, offset)?;
        self.start_writeback_below(offset + bytes.len() as u64);
        Ok(())
    }

    /// Once [`WRITEBACK_BYTES`] have been appended since the last time,
    /// has the writeback thread ask the kernel to start writing them back
    /// (see `io::writeback`), so that the write does not wait for it.
    /// Advisory: a failure here shows up, if it matters, at the next sync.
    fn start_writeback_below(&self, end: u64) {
        let from = self.writeback_from.load(Ordering::Relaxed);
        if end >= from + WRITEBACK_BYTES
            && self
                .writeback_from
                .compare_exchange(from, end, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            crate::io::writeback::start_in_background(self.file.clone(), from, end - from);
        }
    }

    /// Flushes the segment's data to stable storage.
    pub(crate) fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Marks the segment as replaced: its file is removed once the last
    /// reference (a reader, a snapshot's value guard) lets go of it.
    pub(crate) fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }
}

/// The value dictionary in the first frame of `written` (a segment's
/// written bytes), if that frame is one.
fn read_dictionary(written: &[u8]) -> std::result::Result<Option<Arc<ValueDictionary>>, String> {
    let at = SEGMENT_HEADER_BYTES;
    let Some(Ok(header)) = written.get(at..).map(FrameHeader::decode) else {
        return Ok(None);
    };
    if header.kind != FrameKind::ValueDictionary {
        return Ok(None);
    }
    let body = written
        .get(at + FRAME_HEADER_BYTES..at + header.frame_len())
        .ok_or("value dictionary frame runs past the written data")?;
    if crate::format::crc::crc32c(body) != header.body_crc {
        return Err("value dictionary frame checksum mismatch".into());
    }
    ValueDictionary::decode_body(body).map(|d| Some(Arc::new(d)))
}

impl Drop for Segment {
    fn drop(&mut self) {
        if self.obsolete.load(Ordering::Acquire) {
            // Unmapped first: Windows refuses to remove a mapped file.
            self.map = ReadOnlyMap::empty();
            // A failure leaves a file that the next open removes, because the
            // compaction output that replaced it lists it in its seal.
            let _ = self.fs.remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip() {
        assert_eq!(file_name(12), "0000000012.seg");
        assert_eq!(parse_file_name("0000000012.seg"), Some(12));
        assert_eq!(parse_file_name("12.seg"), None);
        assert_eq!(parse_file_name("MANIFEST"), None);
    }
}
