//! The `INDEX` file: a checkpoint of every keyspace's index, so that open
//! reads O(index) instead of every byte of every segment (see `FORMAT.md`,
//! "Index checkpoint"). It is derived data: a missing, damaged or
//! mismatched checkpoint only makes open fall back to the full scan.
//!
//! ```text
//! header (48 bytes)
//!   0   8  magic "ALXDBIDX"
//!   8   4  format version (4; 3 is read too)
//!  12   4  number s of segment entries
//!  16   8  cut sequence number: every record after the cut has a higher one
//!  24   4  cut segment id: the log segment that was active at the cut
//!  28   4  number k of keyspace sections
//!  32   8  cut offset: that segment's records below it are reflected
//!  40   8  zero
//! s segment entries (60 bytes + keys, padded to 8)
//!   0   4  segment id          4  1 kind   5  3 zero
//!   8   8  header seq floor   16  8 written end   24  8 dead bytes
//!  32   8  smallest record sequence number (u64::MAX: none)
//!  40   4  tail check: CRC-32C of the 64 bytes before the written end
//!  44   4  low keyspace (u32::MAX: no key span)   48  4 low key length a
//!  52   4  high keyspace                           56  4 high key length b
//!  60   a+b  low key, high key
//! k keyspace sections
//!   0   4  keyspace id         4  4 number r of range tombstones
//!   8   8  number n of entries 16  8 key bytes K
//!  24   r range tombstones: start length (4), end length (4), seq (8),
//!       applied (1), 7 zero, start, end, padded to 8
//!       version 4: n entries in key order, each: shared prefix length
//!       with the previous key, suffix length (LEB128 varints), suffix
//!       bytes, location minus the previous one (zigzag LEB128 varint,
//!       wrapping; the first against 0); padded to 8
//!       version 3: n locations (8 each), n key ends (8 each, cumulative),
//!       K key bytes, padded to 8
//!       either way keys strictly ascend: a reader refuses a section
//!       whose keys are out of order or repeated
//! end−4  4  CRC-32C of all preceding bytes
//! ```

use crate::io::transient::{TransientVec, transient_vec};
use std::borrow::Cow;

use super::{align8, read_u32, read_u64};

/// Name of the checkpoint file in the database directory.
pub const INDEX_FILE: &str = "INDEX";
/// Name the checkpoint is written under before it is renamed into place.
pub const INDEX_TMP_FILE: &str = "INDEX.tmp";

const MAGIC: &[u8; 8] = b"ALXDBIDX";
const VERSION: u32 = 4;
/// The version before front coding, still read (so that the first open
/// after an upgrade needs no full scan).
const FIXED_WIDTH_VERSION: u32 = 3;
const HEADER_BYTES: usize = 48;
const SEGMENT_FIXED_BYTES: usize = 60;
const KEYSPACE_FIXED_BYTES: usize = 24;
const TOMBSTONE_FIXED_BYTES: usize = 24;
const NO_SPAN: u32 = u32::MAX;

/// Where the checkpoint was cut: records of `segment` below `offset`, and
/// every record of every segment it lists, are reflected in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The last sequence number written before the cut.
    pub seq: u64,
    /// The log segment that was active.
    pub segment: u32,
    /// Its written end at the cut.
    pub offset: u64,
}

/// A key with its keyspace (the bounds of a segment's key span).
pub type SpanKey = (u32, Vec<u8>);

/// What the checkpoint knows of one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Segment id.
    pub id: u32,
    /// Segment kind byte (as in the segment header).
    pub kind: u8,
    /// The header's sequence floor (a check that it is the same file).
    pub seq_floor: u64,
    /// End of its data.
    pub written: u64,
    /// Bytes of records no reader can reach.
    pub dead_bytes: u64,
    /// Smallest record sequence number (`u64::MAX`: none).
    pub min_seq: u64,
    /// CRC-32C of the (up to) 64 bytes before the written end: ties the
    /// entry to the file's content, not only to its name.
    pub tail_check: u32,
    /// Smallest and largest `(keyspace, key)` it holds.
    pub span: Option<(SpanKey, SpanKey)>,
}

/// The byte range [`SegmentInfo::tail_check`] covers: up to 64 bytes
/// before `written`, never the 64-byte segment header.
pub fn tail_check_range(written: u64) -> std::ops::Range<u64> {
    written.saturating_sub(64).max(64.min(written))..written
}

/// A range tombstone as the checkpoint holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TombstoneInfo {
    /// First key deleted.
    pub start: Vec<u8>,
    /// First key kept.
    pub end: Vec<u8>,
    /// Its sequence number.
    pub seq: u64,
    /// Whether compaction had applied it.
    pub applied: bool,
}

/// One keyspace's section: its entries as fixed-width tables (borrowed
/// from a version 3 file, decoded from a version 4 one).
#[derive(Clone, Debug)]
pub struct KeyspaceSection<'a> {
    /// Keyspace id.
    pub id: u32,
    /// Its range tombstones.
    pub tombstones: Vec<TombstoneInfo>,
    /// Little-endian `u64` locations.
    locations: Cow<'a, [u8]>,
    /// Where each key ends in `keys`.
    key_ends: KeyEnds<'a>,
    keys: Cow<'a, [u8]>,
}

/// Where a section's keys end in its key bytes.
#[derive(Clone, Debug)]
enum KeyEnds<'a> {
    /// Little-endian `u64` cumulative ends, one per entry.
    Listed(Cow<'a, [u8]>),
    /// Every key is this long (no table: with 8-byte keys the table would
    /// take as much memory as the keys).
    Fixed(usize),
}

impl KeyEnds<'_> {
    /// The end of key `i`.
    fn end(&self, i: usize) -> usize {
        match self {
            KeyEnds::Listed(ends) => read_u64(ends, i * 8) as usize,
            KeyEnds::Fixed(width) => (i + 1) * width,
        }
    }
}

/// Builds a front-coded section's [`KeyEnds`]: no table while every key
/// has the first one's length.
#[derive(Default)]
struct KeyEndsBuilder {
    /// The common length of the keys so far, if they have one.
    width: Option<usize>,
    /// Keys so far.
    count: usize,
    /// The table, once two lengths differ.
    listed: Vec<u8>,
}

impl KeyEndsBuilder {
    /// Records a key of `len` bytes ending at `end`.
    fn push(&mut self, len: usize, end: usize) {
        match self.width {
            None if self.count == 0 => self.width = Some(len),
            Some(width) if width != len => {
                self.listed.reserve(8 * (self.count + 1));
                for i in 1..=self.count {
                    self.listed
                        .extend_from_slice(&((i * width) as u64).to_le_bytes());
                }
                self.width = None;
            }
            _ => {}
        }
        if self.width.is_none() {
            self.listed.extend_from_slice(&(end as u64).to_le_bytes());
        }
        self.count += 1;
    }

    fn finish(self) -> KeyEnds<'static> {
        match self.width {
            Some(width) => KeyEnds::Fixed(width),
            None => KeyEnds::Listed(self.listed.into()),
        }
    }
}

impl KeyspaceSection<'_> {
    /// Number of index entries.
    pub fn len(&self) -> usize {
        self.locations.len() / 8
    }

    /// Whether the keyspace has no entries.
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// Location payload of entry `i`.
    pub fn location(&self, i: usize) -> u64 {
        read_u64(&self.locations, i * 8)
    }

    /// Key of entry `i`.
    pub fn key(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.key_ends.end(i - 1),
        };
        &self.keys[start..self.key_ends.end(i)]
    }
}

/// A decoded checkpoint.
#[derive(Debug)]
pub struct IndexCheckpoint<'a> {
    /// Where it was cut.
    pub cut: Cut,
    /// The segments that were live at the cut.
    pub segments: Vec<SegmentInfo>,
    /// Every keyspace's index.
    pub keyspaces: Vec<KeyspaceSection<'a>>,
}

/// Bytes of a keyspace section's counts: entries (8), key bytes (8).
const COUNTS_BYTES: usize = 16;

/// Where a keyspace section's counts go, from [`Encoder::keyspace`].
#[derive(Debug)]
#[must_use = "a section's counts must be filled in with `Encoder::count`"]
pub struct CountsSlot {
    /// File offset of the counts.
    at: usize,
    /// Checksum of every byte before them.
    crc_before: u32,
}

/// A keyspace section's counts and their file offset, from
/// [`Encoder::count`].
#[derive(Debug)]
pub struct CountsPatch {
    /// File offset to write them at.
    pub at: u64,
    /// The counts, encoded.
    pub bytes: [u8; COUNTS_BYTES],
}

/// Writes a checkpoint in order: header, segments, then each keyspace's
/// tombstones and front-coded entries ([`Encoder::entry`]), its counts
/// filled in afterwards ([`Encoder::count`]). The caller streams the parts
/// out with [`Encoder::take`] so that a large index never sits in memory.
pub struct Encoder {
    /// Mapped on its own once large (`io::transient`), so that writing a
    /// checkpoint leaves the process's allocator as it was.
    buf: TransientVec<u8>,
    /// Bytes encoded so far, taken or not (padding is to the file offset).
    len: usize,
    /// Checksum of the bytes since the last counts left open (or of all).
    crc: u32,
}

impl Encoder {
    /// Starts a checkpoint with its header and segment entries.
    pub fn new(cut: Cut, segments: &[SegmentInfo], keyspaces: u32) -> Self {
        let mut e = Encoder {
            buf: transient_vec(),
            len: 0,
            crc: 0,
        };
        e.put(MAGIC);
        e.u32(VERSION);
        e.u32(segments.len() as u32);
        e.u64(cut.seq);
        e.u32(cut.segment);
        e.u32(keyspaces);
        e.u64(cut.offset);
        e.u64(0);
        for s in segments {
            e.segment(s);
        }
        e
    }

    fn segment(&mut self, s: &SegmentInfo) {
        self.u32(s.id);
        self.put(&[s.kind, 0, 0, 0]);
        self.u64(s.seq_floor);
        self.u64(s.written);
        self.u64(s.dead_bytes);
        self.u64(s.min_seq);
        self.u32(s.tail_check);
        let empty = ((NO_SPAN, Vec::new()), (NO_SPAN, Vec::new()));
        let (lo, hi) = s.span.as_ref().unwrap_or(&empty);
        self.u32(lo.0);
        self.u32(lo.1.len() as u32);
        self.u32(hi.0);
        self.u32(hi.1.len() as u32);
        self.put(&lo.1);
        self.put(&hi.1);
        self.pad();
    }

    /// Starts a keyspace section with its range tombstones. Its counts
    /// (entries and key bytes) are not known yet: they are left as zeros
    /// outside the checksum, and [`Self::count`] fills them in once the
    /// section's entries are encoded, so that a writer can stream entries
    /// without holding them all.
    pub fn keyspace(&mut self, id: u32, tombstones: &[TombstoneInfo]) -> CountsSlot {
        self.u32(id);
        self.u32(tombstones.len() as u32);
        let slot = CountsSlot {
            at: self.len,
            crc_before: self.crc,
        };
        self.buf.extend_from_slice(&[0; COUNTS_BYTES]);
        self.len += COUNTS_BYTES;
        self.crc = 0;
        for t in tombstones {
            self.u32(t.start.len() as u32);
            self.u32(t.end.len() as u32);
            self.u64(t.seq);
            self.put(&[u8::from(t.applied), 0, 0, 0, 0, 0, 0, 0]);
            self.put(&t.start);
            self.put(&t.end);
            self.pad();
        }
        slot
    }

    /// Ends the counting of the section `slot` started: `entries` entries
    /// with `keys` key bytes in all. Splices the counts into the checksum
    /// and returns them with their file offset: the caller writes them
    /// there (over the zeros) once the bytes before them are written.
    /// Called once per section, before the next one starts.
    pub fn count(&mut self, slot: CountsSlot, entries: u64, keys: u64) -> CountsPatch {
        let mut bytes = [0u8; COUNTS_BYTES];
        bytes[..8].copy_from_slice(&entries.to_le_bytes());
        bytes[8..].copy_from_slice(&keys.to_le_bytes());
        let after = self.len - slot.at - COUNTS_BYTES;
        let through_counts =
            crc32c::crc32c_combine(slot.crc_before, crc32c::crc32c(&bytes), COUNTS_BYTES);
        self.crc = crc32c::crc32c_combine(through_counts, self.crc, after);
        CountsPatch {
            at: slot.at as u64,
            bytes,
        }
    }

    /// Appends one entry of a keyspace section: `key` front-coded against
    /// the entry before it (`prev_key`, empty for the first) and
    /// `location` as its difference from the one before (`prev_location`,
    /// 0 for the first).
    pub fn entry(&mut self, prev_key: &[u8], key: &[u8], prev_location: u64, location: u64) {
        let shared = prev_key.iter().zip(key).take_while(|(a, b)| a == b).count();
        self.varint(shared as u64);
        self.varint((key.len() - shared) as u64);
        self.put(&key[shared..]);
        let delta = location.wrapping_sub(prev_location) as i64;
        self.varint(((delta << 1) ^ (delta >> 63)) as u64);
    }

    fn varint(&mut self, mut v: u64) {
        let mut buf = [0u8; 10];
        let mut n = 0;
        while v >= 0x80 {
            buf[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        buf[n] = v as u8;
        self.put(&buf[..=n]);
    }

    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    /// Appends raw bytes (keys).
    pub fn put(&mut self, bytes: &[u8]) {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.buf.extend_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Pads with zeros to a multiple of 8 (after a keyspace's keys).
    pub fn pad(&mut self) {
        let n = align8(self.len) - self.len;
        self.put(&[0u8; 8][..n]);
    }

    /// Bytes buffered so far.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Takes the bytes buffered so far (they are part of the checksum).
    pub fn take(&mut self) -> TransientVec<u8> {
        std::mem::replace(&mut self.buf, transient_vec())
    }

    /// Appends the checksum and takes the last bytes.
    pub fn finish(mut self) -> TransientVec<u8> {
        let crc = self.crc;
        self.buf.extend_from_slice(&crc.to_le_bytes());
        self.buf
    }
}

/// Decodes a whole checkpoint file. Fails with a reason on anything that is
/// not a complete, undamaged checkpoint of this format version.
pub fn decode(bytes: &[u8]) -> Result<IndexCheckpoint<'_>, String> {
    let body_len = bytes
        .len()
        .checked_sub(4)
        .ok_or("file too short for a checkpoint")?;
    let (body, crc) = bytes.split_at(body_len);
    if crate::format::crc::crc32c(body) != read_u32(crc, 0) {
        return Err("checksum mismatch".into());
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(8)? != MAGIC {
        return Err("not an index checkpoint".into());
    }
    let version = r.u32()?;
    if version != VERSION && version != FIXED_WIDTH_VERSION {
        return Err("written by another format version".into());
    }
    let segment_count = r.u32()?;
    let seq = r.u64()?;
    let segment = r.u32()?;
    let keyspace_count = r.u32()?;
    let offset = r.u64()?;
    r.u64()?;
    debug_assert_eq!(r.at, HEADER_BYTES);
    let cut = Cut {
        seq,
        segment,
        offset,
    };
    let segments = (0..segment_count)
        .map(|_| r.segment())
        .collect::<Result<_, _>>()?;
    let keyspaces = (0..keyspace_count)
        .map(|_| r.keyspace(version))
        .collect::<Result<_, _>>()?;
    if r.at != body.len() {
        return Err("bytes after the last keyspace section".into());
    }
    Ok(IndexCheckpoint {
        cut,
        segments,
        keyspaces,
    })
}

/// A bounds-checked cursor over the checkpoint's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(read_u32(self.take(4)?, 0))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(read_u64(self.take(8)?, 0))
    }

    fn len(&mut self, count: u64, each: usize) -> Result<usize, String> {
        usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(each))
            .ok_or_else(|| format!("impossible count at byte {}", self.at))
    }

    fn pad(&mut self) -> Result<(), String> {
        let n = align8(self.at) - self.at;
        self.take(n).map(|_| ())
    }

    fn segment(&mut self) -> Result<SegmentInfo, String> {
        let start = self.at;
        let id = self.u32()?;
        let kind = self.take(4)?[0];
        let seq_floor = self.u64()?;
        let written = self.u64()?;
        let dead_bytes = self.u64()?;
        let min_seq = self.u64()?;
        let tail_check = self.u32()?;
        let lo_ks = self.u32()?;
        let lo_len = self.u32()? as usize;
        let hi_ks = self.u32()?;
        let hi_len = self.u32()? as usize;
        debug_assert_eq!(self.at - start, SEGMENT_FIXED_BYTES);
        let lo = self.take(lo_len)?.to_vec();
        let hi = self.take(hi_len)?.to_vec();
        self.pad()?;
        let span = (lo_ks != NO_SPAN).then_some(((lo_ks, lo), (hi_ks, hi)));
        Ok(SegmentInfo {
            id,
            kind,
            seq_floor,
            written,
            dead_bytes,
            min_seq,
            tail_check,
            span,
        })
    }

    fn tombstone(&mut self) -> Result<TombstoneInfo, String> {
        let start = self.at;
        let start_len = self.u32()? as usize;
        let end_len = self.u32()? as usize;
        let seq = self.u64()?;
        let applied = self.take(8)?[0] != 0;
        debug_assert_eq!(self.at - start, TOMBSTONE_FIXED_BYTES);
        let start = self.take(start_len)?.to_vec();
        let end = self.take(end_len)?.to_vec();
        self.pad()?;
        Ok(TombstoneInfo {
            start,
            end,
            seq,
            applied,
        })
    }

    fn keyspace(&mut self, version: u32) -> Result<KeyspaceSection<'a>, String> {
        let start = self.at;
        let id = self.u32()?;
        let tombstone_count = self.u32()?;
        let entries = self.u64()?;
        let key_bytes = self.u64()?;
        debug_assert_eq!(self.at - start, KEYSPACE_FIXED_BYTES);
        let tombstones = (0..tombstone_count)
            .map(|_| self.tombstone())
            .collect::<Result<_, _>>()?;
        let (locations, key_ends, keys) = match version {
            FIXED_WIDTH_VERSION => self.fixed_width(entries, key_bytes)?,
            _ => self.front_coded(entries, key_bytes)?,
        };
        self.pad()?;
        let section = KeyspaceSection {
            id,
            tombstones,
            locations,
            key_ends,
            keys,
        };
        check_key_ends(&section)?;
        if version == FIXED_WIDTH_VERSION {
            // Front-coded sections are checked as they are decoded.
            check_ascending(&section, start)?;
        }
        Ok(section)
    }
}

type Tables<'a> = (Cow<'a, [u8]>, KeyEnds<'a>, Cow<'a, [u8]>);

impl<'a> Reader<'a> {
    /// A version 3 section's tables, borrowed.
    fn fixed_width(&mut self, entries: u64, key_bytes: u64) -> Result<Tables<'a>, String> {
        let table = self.len(entries, 8)?;
        let locations = self.take(table)?;
        let key_ends = self.take(table)?;
        let key_len = self.len(key_bytes, 1)?;
        let keys = self.take(key_len)?;
        Ok((
            locations.into(),
            KeyEnds::Listed(key_ends.into()),
            keys.into(),
        ))
    }

    /// A version 4 section's entries, decoded into the same tables.
    fn front_coded(&mut self, entries: u64, key_bytes: u64) -> Result<Tables<'a>, String> {
        // Every entry takes at least three bytes: no count the file cannot
        // hold makes it allocate.
        let n = usize::try_from(entries)
            .ok()
            .filter(|&n| n <= (self.bytes.len() - self.at) / 3)
            .ok_or_else(|| format!("impossible entry count at byte {}", self.at))?;
        let total = usize::try_from(key_bytes).map_err(|_| "impossible key bytes")?;
        let mut locations = Vec::with_capacity(8 * n);
        let mut key_ends = KeyEndsBuilder::default();
        let mut keys: Vec<u8> = Vec::with_capacity(total.min(16 * n));
        let (mut prev, mut location) = (0..0, 0u64);
        // Decoded from a local slice: this loop runs once per index entry
        // at every open (10M entries: about a tenth of the open).
        let b = &self.bytes[self.at..];
        let mut at = 0;
        let truncated = |at: usize| format!("truncated at byte {}", self.at + at);
        for i in 0..n {
            let shared = fast_varint(b, &mut at).ok_or_else(|| truncated(at))? as usize;
            let suffix = fast_varint(b, &mut at).ok_or_else(|| truncated(at))?;
            if shared > prev.end - prev.start {
                return Err(format!(
                    "a key shares more than its predecessor at byte {}",
                    self.at + at
                ));
            }
            let suffix = usize::try_from(suffix)
                .ok()
                .and_then(|len| b.get(at..at.checked_add(len)?))
                .ok_or_else(|| truncated(at))?;
            at += suffix.len();
            // The key shares `shared` bytes with its predecessor, so the
            // two compare as the suffix and the rest of the predecessor do
            // (usually at their first byte).
            if i > 0 && suffix <= &keys[prev.start + shared..prev.end] {
                return Err(unsorted(self.at + at));
            }
            let start = keys.len();
            keys.extend_from_within(prev.start..prev.start + shared);
            keys.extend_from_slice(suffix);
            if keys.len() > total {
                return Err(format!(
                    "keys longer than the section says at byte {}",
                    self.at + at
                ));
            }
            let zigzag = fast_varint(b, &mut at).ok_or_else(|| truncated(at))?;
            let delta = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
            location = location.wrapping_add(delta as u64);
            locations.extend_from_slice(&location.to_le_bytes());
            key_ends.push(keys.len() - start, keys.len());
            prev = start..keys.len();
        }
        self.at += at;
        Ok((locations.into(), key_ends.finish(), keys.into()))
    }
}

/// The LEB128 varint at `*at` in `b`, advancing `*at`; `None` if it runs
/// past the end or over 64 bits.
#[inline]
fn fast_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let first = *b.get(*at)?;
    *at += 1;
    if first < 0x80 {
        return Some(u64::from(first));
    }
    let mut v = u64::from(first & 0x7f);
    for shift in (7..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Why a section whose keys do not strictly ascend is refused: the index
/// is bulk-loaded from the entries in file order, and out of order (or
/// twice) they would build an index that misses keys or holds one twice.
fn unsorted(at: usize) -> String {
    format!("keys not in strictly ascending order at byte {at}")
}

/// A version 3 section's keys must strictly ascend (see [`unsorted`]).
/// Run after [`check_key_ends`], so every key can be read.
fn check_ascending(s: &KeyspaceSection<'_>, at: usize) -> Result<(), String> {
    match (1..s.len()).all(|i| s.key(i - 1) < s.key(i)) {
        true => Ok(()),
        false => Err(format!("keyspace {}: {}", s.id, unsorted(at))),
    }
}

/// Key ends must rise and stay within the key bytes, so that
/// [`KeyspaceSection::key`] never slices out of bounds.
fn check_key_ends(s: &KeyspaceSection<'_>) -> Result<(), String> {
    let mut prev = 0;
    if let KeyEnds::Listed(_) = s.key_ends {
        for i in 0..s.len() {
            let end = s.key_ends.end(i);
            if end < prev || end > s.keys.len() {
                return Err(format!("keyspace {}: key end {i} out of order", s.id));
            }
            prev = end;
        }
    } else if !s.is_empty() {
        prev = s.key_ends.end(s.len() - 1);
    }
    match prev == s.keys.len() {
        true => Ok(()),
        false => Err(format!("keyspace {}: key bytes left over", s.id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let cut = Cut {
            seq: 41,
            segment: 3,
            offset: 4096,
        };
        let segments = vec![SegmentInfo {
            id: 3,
            kind: 1,
            seq_floor: 1,
            written: 4096,
            dead_bytes: 80,
            min_seq: 1,
            tail_check: 7,
            span: Some(((0, b"a".to_vec()), (0, b"cc".to_vec()))),
        }];
        let mut e = Encoder::new(cut, &segments, 1);
        let tombstones = vec![TombstoneInfo {
            start: b"b".to_vec(),
            end: b"bb".to_vec(),
            seq: 7,
            applied: false,
        }];
        let slot = e.keyspace(0, &tombstones);
        e.entry(b"", b"a", 0, 100);
        e.entry(b"a", b"cc", 100, 200);
        let mut out = e.take().to_vec();
        e.pad();
        out.extend(e.take());
        let counts = e.count(slot, 2, 3);
        out.extend(e.finish());
        fill_in(&mut out, &counts);
        out
    }

    /// Writes `counts` where they belong, as a writer does once the bytes
    /// before them are out.
    fn fill_in(out: &mut [u8], counts: &CountsPatch) {
        let at = counts.at as usize;
        out[at..at + counts.bytes.len()].copy_from_slice(&counts.bytes);
    }

    #[test]
    fn a_checkpoint_round_trips() {
        let bytes = sample();
        let c = decode(&bytes).unwrap();
        assert_eq!(c.cut.seq, 41);
        assert_eq!(c.cut.offset, 4096);
        assert_eq!(c.segments[0].dead_bytes, 80);
        assert_eq!(c.segments[0].span.as_ref().unwrap().1.1, b"cc");
        let ks = &c.keyspaces[0];
        assert_eq!(ks.len(), 2);
        assert_eq!((ks.key(0), ks.location(0)), (&b"a"[..], 100));
        assert_eq!((ks.key(1), ks.location(1)), (&b"cc"[..], 200));
        assert_eq!(ks.tombstones[0].end, b"bb");
    }

    /// The same checkpoint in version 3's fixed-width layout.
    fn sample_v3() -> Vec<u8> {
        let cut = Cut {
            seq: 41,
            segment: 3,
            offset: 4096,
        };
        let mut e = Encoder::new(cut, &[], 1);
        let slot = e.keyspace(0, &[]);
        for v in [100u64, 200, 1, 3] {
            e.put(&v.to_le_bytes());
        }
        e.put(b"acc");
        finish_v3(e, slot, 2, 3)
    }

    /// Ends a checkpoint written in version 3's layout: the section's
    /// counts filled in, the version stamped, the checksum recomputed.
    fn finish_v3(mut e: Encoder, slot: CountsSlot, entries: u64, key_bytes: u64) -> Vec<u8> {
        e.pad();
        let mut out = e.take().to_vec();
        let counts = e.count(slot, entries, key_bytes);
        out.extend(e.finish());
        fill_in(&mut out, &counts);
        out[8..12].copy_from_slice(&FIXED_WIDTH_VERSION.to_le_bytes());
        let body = out.len() - 4;
        let crc = crate::format::crc::crc32c(&out[..body]);
        out[body..].copy_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn a_version_3_checkpoint_is_still_read() {
        let bytes = sample_v3();
        let c = decode(&bytes).unwrap();
        let ks = &c.keyspaces[0];
        assert_eq!((ks.key(0), ks.location(0)), (&b"a"[..], 100));
        assert_eq!((ks.key(1), ks.location(1)), (&b"cc"[..], 200));
    }

    #[test]
    fn front_coding_shares_prefixes_and_round_trips_any_locations() {
        let keys: Vec<Vec<u8>> = vec![
            b"user:profile:0001".to_vec(),
            b"user:profile:0002".to_vec(),
            b"user:profile:00020".to_vec(),
            b"user:q".to_vec(),
            vec![0xff; 300],
        ];
        let locations = [u64::MAX, 0, 1 << 63, 12345, 12344];
        let mut e = Encoder::new(
            Cut {
                seq: 1,
                segment: 1,
                offset: 64,
            },
            &[],
            1,
        );
        let total: usize = keys.iter().map(Vec::len).sum();
        let slot = e.keyspace(9, &[]);
        let (mut pk, mut pl): (&[u8], u64) = (&[], 0);
        for (k, &l) in keys.iter().zip(&locations) {
            e.entry(pk, k, pl, l);
            (pk, pl) = (k, l);
        }
        e.pad();
        let mut out = e.take().to_vec();
        let counts = e.count(slot, keys.len() as u64, total as u64);
        out.extend(e.finish());
        fill_in(&mut out, &counts);
        assert!(out.len() < 48 + 24 + total + 5 * 12, "{} bytes", out.len());
        let c = decode(&out).unwrap();
        let ks = &c.keyspaces[0];
        for (i, (k, &l)) in keys.iter().zip(&locations).enumerate() {
            assert_eq!((ks.key(i), ks.location(i)), (&k[..], l));
        }
    }

    #[test]
    fn counts_filled_in_after_streaming_match_counts_known_up_front() {
        // Two sections, each streamed out in pieces before its counts are
        // known: the file must be the one whose counts were never zero.
        let mut e = Encoder::new(
            Cut {
                seq: 5,
                segment: 2,
                offset: 64,
            },
            &[],
            2,
        );
        let mut out = Vec::new();
        let mut patches = Vec::new();
        for (id, keys) in [(1u32, [&b"k1"[..], b"k2"]), (4, [b"x", b"xyz"])] {
            let slot = e.keyspace(id, &[]);
            out.extend(e.take());
            e.entry(b"", keys[0], 0, 8);
            out.extend(e.take());
            e.entry(keys[0], keys[1], 8, 16);
            e.pad();
            out.extend(e.take());
            let total = keys.iter().map(|k| k.len() as u64).sum();
            patches.push(e.count(slot, 2, total));
        }
        out.extend(e.finish());
        assert!(decode(&out).is_err(), "counts still zero must not decode");
        for p in &patches {
            fill_in(&mut out, p);
        }
        let c = decode(&out).unwrap();
        assert_eq!(c.keyspaces[1].id, 4);
        assert_eq!(c.keyspaces[1].key(1), b"xyz");
        let body = out.len() - 4;
        let crc = crate::format::crc::crc32c(&out[..body]);
        assert_eq!(out[body..], crc.to_le_bytes());
    }

    /// A version 4 checkpoint of one keyspace with `keys` in this order
    /// and a valid checksum, as a writer that lost the order would write.
    fn with_keys(keys: &[&[u8]]) -> Vec<u8> {
        let cut = Cut {
            seq: 1,
            segment: 1,
            offset: 64,
        };
        let mut e = Encoder::new(cut, &[], 1);
        let slot = e.keyspace(0, &[]);
        let mut prev: &[u8] = &[];
        for (i, &k) in keys.iter().enumerate() {
            e.entry(prev, k, 8 * i as u64, 8 * (i as u64 + 1));
            prev = k;
        }
        e.pad();
        let mut out = e.take().to_vec();
        let total = keys.iter().map(|k| k.len() as u64).sum();
        let counts = e.count(slot, keys.len() as u64, total);
        out.extend(e.finish());
        fill_in(&mut out, &counts);
        out
    }

    /// The same in version 3's layout.
    fn with_keys_v3(keys: &[&[u8]]) -> Vec<u8> {
        let cut = Cut {
            seq: 1,
            segment: 1,
            offset: 64,
        };
        let mut e = Encoder::new(cut, &[], 1);
        let slot = e.keyspace(0, &[]);
        for i in 0..keys.len() {
            e.put(&(8 * (i as u64 + 1)).to_le_bytes());
        }
        let mut end = 0;
        for k in keys {
            end += k.len() as u64;
            e.put(&end.to_le_bytes());
        }
        for k in keys {
            e.put(k);
        }
        finish_v3(e, slot, keys.len() as u64, end)
    }

    /// The index is bulk-loaded from a section in file order: keys out of
    /// order or twice, under a valid checksum, are a damaged checkpoint
    /// (the open then scans the segments), not a wrong index.
    #[test]
    fn keys_not_strictly_ascending_are_refused_under_a_valid_checksum() {
        let sorted: [&[&[u8]]; 4] = [
            &[b"a", b"b", b"c"],
            &[b"", b"a", b"a\0", b"ab", b"b"],
            &[b"user:1", b"user:10", b"user:2"],
            &[b"only"],
        ];
        for keys in sorted {
            for bytes in [with_keys(keys), with_keys_v3(keys)] {
                let c = decode(&bytes).unwrap_or_else(|e| panic!("{keys:?}: {e}"));
                let ks = &c.keyspaces[0];
                assert_eq!(ks.len(), keys.len());
                for (i, k) in keys.iter().enumerate() {
                    assert_eq!(ks.key(i), *k);
                }
            }
        }
        let unsorted: [&[&[u8]]; 8] = [
            &[b"b", b"a"],
            &[b"a", b"a"],
            &[b"", b""],
            &[b"ab", b"a"],
            &[b"a", b"c", b"b"],
            &[b"a", b"b", b"b", b"c"],
            &[b"user:10", b"user:1"],
            &[b"a", b"", b"b"],
        ];
        for keys in unsorted {
            for (version, bytes) in [(4, with_keys(keys)), (3, with_keys_v3(keys))] {
                let err = decode(&bytes).expect_err(&format!("version {version}: {keys:?}"));
                assert!(err.contains("ascending"), "{err}");
            }
        }
    }

    #[test]
    fn every_damaged_byte_and_every_truncation_is_refused() {
        let bytes = sample();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_err(), "flip at {i}");
            assert!(decode(&bytes[..i]).is_err(), "cut at {i}");
        }
    }
}
