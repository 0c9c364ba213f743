//! Ordered iteration over a keyspace at a snapshot.
//!
//! A [`Cursor`] is owned: it holds an `Arc` of the database and a
//! registered snapshot, so it can be stored anywhere and sent across
//! threads. It never holds an epoch guard between calls: it fetches entries
//! from the index in small chunks, each under its own short pin, restarting
//! from the last key it saw. Every cursor is an implicit snapshot: writes
//! made after its creation are invisible to it.

mod spare;

use std::collections::VecDeque;
use std::ops::{Bound, Range};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::ValueEncoding;
use crate::format::segment_header::SegmentKind;
use crate::index::{KeyResolver, ScanDirection};
use crate::mvcc::snapshot_guard::SnapshotGuard;
use crate::mvcc::{Attempt, Retry, through_loaded_table};
use crate::read::{LazyRelocations, Version, value_seen, visible_from, visible_version};
use crate::segment::resolver::TableResolver;
use crate::segment::{Segment, SegmentTable};

/// Entries fetched from the index by the first refill after a seek; each
/// further refill doubles, up to [`MAX_CHUNK`]. Short scans (seek + a few
/// nexts) resolve few records; long scans amortize the index traversals.
const FIRST_CHUNK: usize = 12;
/// Largest refill.
const MAX_CHUNK: usize = 512;
/// Largest buffers handed on to the next cursor: those of a seek and a
/// few refills; a long scan's are freed.
const SPARE_MOST: usize = 4 * FIRST_CHUNK;

thread_local! {
    /// Buffers of this thread's dropped cursors, for its next ones.
    static SPARE: spare::Spare<Buffered> = const { spare::Spare::new() };
}

/// Records of a refill hinted to the CPU at once (about what it can fetch
/// in parallel; later ones would be evicted before they are read).
const PREFETCHED: usize = 16;

/// One key-value pair, borrowed in place from a mapped segment the cursor
/// holds: valid until the cursor moves.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    key: &'a [u8],
    value: &'a [u8],
}

impl<'a> Entry<'a> {
    /// The key.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The value.
    pub fn value(&self) -> &'a [u8] {
        self.value
    }
}

/// A buffered entry: byte ranges in one of the cursor's pinned segments.
/// Plain offsets, so buffering an entry touches no reference count (an
/// `Arc` per entry cost two locked instructions per entry). A value stored
/// compressed is decoded into the cursor's [`Cursor::decoded`] buffer, and
/// its range is in there.
#[derive(Clone, Copy, Debug)]
struct Buffered {
    /// Index into [`Cursor::pins`].
    pin: usize,
    key: (usize, usize),
    value: (usize, usize),
    /// Whether `value` is a range of [`Cursor::decoded`].
    decoded: bool,
}

impl Buffered {
    /// An entry whose value is read in place from `segment`'s map.
    fn mapped(pin: usize, segment: &Segment, key: &[u8], value: &[u8]) -> Self {
        let base = segment.bytes().as_ptr() as usize;
        let (k, v) = (key.as_ptr() as usize - base, value.as_ptr() as usize - base);
        Buffered {
            pin,
            key: (k, k + key.len()),
            value: (v, v + value.len()),
            decoded: false,
        }
    }

    /// An entry whose value was decoded into [`Cursor::decoded`] at
    /// `value`.
    fn decoded(pin: usize, segment: &Segment, key: &[u8], value: Range<usize>) -> Self {
        let k = key.as_ptr() as usize - segment.bytes().as_ptr() as usize;
        Buffered {
            pin,
            key: (k, k + key.len()),
            value: (value.start, value.end),
            decoded: true,
        }
    }
}

/// Bounds on the keys a cursor visits: `lower` inclusive, `upper` exclusive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// Smallest key visited, if any.
    pub lower: Option<Vec<u8>>,
    /// First key not visited, if any.
    pub upper: Option<Vec<u8>>,
}

impl KeyRange {
    fn contains(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }
}

/// A positioned, bidirectional iterator over one keyspace at a snapshot.
#[derive(Debug)]
pub struct Cursor {
    snapshot: SnapshotGuard,
    ks: Arc<Keyspace>,
    range: KeyRange,
    /// The segments the buffered entries (and the current one) lie in,
    /// each once; replaced by every refill (inline up to 4: a chunk's
    /// records lie in a few segments).
    pins: SmallVec<[Arc<Segment>; 4]>,
    current: Option<Buffered>,
    ahead: VecDeque<Buffered>,
    direction: ScanDirection,
    /// Key of the last index entry fetched in `direction`, visible or not
    /// (empty with `fetched` false: nothing fetched since the last seek).
    /// Inline up to 32 bytes, so that most cursors allocate nothing for it.
    fetched_up_to: SmallVec<[u8; 32]>,
    fetched: bool,
    /// The index payloads of a refill (kept for its capacity).
    payloads: Vec<u64>,
    exhausted: bool,
    error: Option<Error>,
    /// Entries the next refill fetches.
    chunk: usize,
    /// How far the kernel was asked to read ahead in each segment, by
    /// segment id (see [`read_ahead`]); emptied by a seek or a turn.
    read_ahead_to: Vec<(u32, u64)>,
    /// The values of the buffered entries (and the current one) that were
    /// stored compressed, decoded; emptied by every refill, as `pins`.
    decoded: Vec<u8>,
}

impl Cursor {
    #[inline]
    pub(crate) fn new(snapshot: SnapshotGuard, ks: Arc<Keyspace>, range: KeyRange) -> Self {
        let buffers = SPARE.try_with(spare::Spare::take).unwrap_or_default();
        Cursor {
            snapshot,
            ks,
            range,
            pins: SmallVec::new(),
            current: None,
            ahead: buffers.ahead,
            direction: ScanDirection::Forward,
            fetched_up_to: SmallVec::new(),
            fetched: false,
            payloads: buffers.payloads,
            exhausted: true,
            error: None,
            chunk: FIRST_CHUNK,
            read_ahead_to: Vec::new(),
            decoded: Vec::new(),
        }
    }

    /// The sequence number this cursor reads at.
    pub fn seq(&self) -> u64 {
        self.snapshot.seq()
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.current.is_some()
    }

    /// The current entry.
    #[inline]
    pub fn entry(&self) -> Option<Entry<'_>> {
        let b = self.current?;
        let bytes = self.pins[b.pin].bytes();
        Some(Entry {
            key: &bytes[b.key.0..b.key.1],
            value: self.value_of(b),
        })
    }

    /// The current entry's key (what [`Self::entry`] gives, without the
    /// value's bounds).
    #[inline]
    pub fn key(&self) -> Option<&[u8]> {
        let b = self.current?;
        Some(&self.pins[b.pin].bytes()[b.key.0..b.key.1])
    }

    /// The current entry's value (what [`Self::entry`] gives, without the
    /// key's bounds).
    #[inline]
    pub fn value(&self) -> Option<&[u8]> {
        let b = self.current?;
        Some(self.value_of(b))
    }

    /// The value of the buffered entry `b`.
    #[inline]
    fn value_of(&self, b: Buffered) -> &[u8] {
        match b.decoded {
            false => &self.pins[b.pin].bytes()[b.value.0..b.value.1],
            true => &self.decoded[b.value.0..b.value.1],
        }
    }

    /// The error that stopped the cursor, if any (it is then not valid).
    pub fn status(&self) -> Result<(), &Error> {
        self.error.as_ref().map_or(Ok(()), Err)
    }

    /// Positions at the first key of the range.
    pub fn seek_to_first(&mut self) {
        match self.range.lower.clone() {
            Some(lower) => self.start(Bound::Included(&lower), ScanDirection::Forward),
            None => self.start(Bound::Unbounded, ScanDirection::Forward),
        }
    }

    /// Positions at the last key of the range.
    pub fn seek_to_last(&mut self) {
        match self.range.upper.clone() {
            Some(upper) => self.start(Bound::Excluded(&upper), ScanDirection::Reverse),
            None => self.start(Bound::Unbounded, ScanDirection::Reverse),
        }
    }

    /// Positions at the first key ≥ `key` (within the range).
    pub fn seek(&mut self, key: &[u8]) {
        match &self.range.lower {
            Some(lower) if lower.as_slice() > key => {
                let lower = lower.clone();
                self.start(Bound::Included(&lower), ScanDirection::Forward);
            }
            _ => self.start(Bound::Included(key), ScanDirection::Forward),
        }
    }

    /// Positions at the last key ≤ `key` (within the range).
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        match &self.range.upper {
            Some(upper) if upper.as_slice() <= key => {
                let upper = upper.clone();
                self.start(Bound::Excluded(&upper), ScanDirection::Reverse);
            }
            _ => self.start(Bound::Included(key), ScanDirection::Reverse),
        }
    }

    /// Moves to the next key; does nothing if not valid.
    #[inline]
    pub fn forward(&mut self) {
        self.step(ScanDirection::Forward);
    }

    /// Moves to the previous key; does nothing if not valid.
    #[inline]
    pub fn backward(&mut self) {
        self.step(ScanDirection::Reverse);
    }

    /// One step in `direction`. The common case (the same direction, an
    /// entry already buffered) is a pop, inlined into the caller; the rest
    /// is [`Self::step_slow`].
    #[inline]
    fn step(&mut self, direction: ScanDirection) {
        if self.current.is_some()
            && self.direction == direction
            && let Some(next) = self.ahead.pop_front()
        {
            self.current = Some(next);
            return;
        }
        self.step_slow(direction);
    }

    fn step_slow(&mut self, direction: ScanDirection) {
        let Some(current) = self.current.take() else {
            return;
        };
        if self.direction != direction {
            let bytes = self.pins[current.pin].bytes();
            let key = &bytes[current.key.0..current.key.1];
            self.fetched_up_to.clear();
            self.fetched_up_to.extend_from_slice(key);
            self.fetched = true;
            self.direction = direction;
            self.ahead.clear();
            self.exhausted = false;
            self.chunk = FIRST_CHUNK;
            self.read_ahead_to.clear();
        }
        self.advance();
    }

    fn start(&mut self, from: Bound<&[u8]>, direction: ScanDirection) {
        self.current = None;
        self.ahead.clear();
        self.error = None;
        self.direction = direction;
        self.exhausted = false;
        self.fetched = false;
        self.chunk = FIRST_CHUNK;
        self.read_ahead_to.clear();
        if let Err(e) = self.refill(from) {
            self.fail(e);
            return;
        }
        self.advance();
    }

    /// Makes the next buffered entry current, refilling as needed.
    fn advance(&mut self) {
        loop {
            if let Some(e) = self.ahead.pop_front() {
                self.current = Some(e);
                return;
            }
            if self.exhausted || !self.fetched {
                return;
            }
            // The refill records its own last key in `fetched_up_to`; the
            // previous one bounds it meanwhile.
            let from = std::mem::take(&mut self.fetched_up_to);
            self.fetched = false;
            let refilled = self.refill(Bound::Excluded(&from[..]));
            if !self.fetched {
                self.fetched_up_to = from;
                self.fetched = true;
            }
            if let Err(e) = refilled {
                self.fail(e);
                return;
            }
        }
    }

    fn fail(&mut self, e: Error) {
        self.current = None;
        self.ahead.clear();
        self.exhausted = true;
        self.error = Some(e);
    }

    /// Fetches the next chunk of index entries from `from` and buffers the
    /// versions visible at the snapshot. Sets `fetched_up_to` (and
    /// `fetched`) to the last index key it saw, if any. Called with nothing
    /// current or buffered, so it may replace the pinned segments.
    fn refill(&mut self, from: Bound<&[u8]>) -> Result<()> {
        let shared = self.snapshot.shared().clone();
        let mut payloads = std::mem::take(&mut self.payloads);
        let outcome = self.refill_with(&shared, from, &mut payloads);
        payloads.clear();
        self.payloads = payloads;
        outcome
    }

    fn refill_with(
        &mut self,
        shared: &Shared,
        from: Bound<&[u8]>,
        payloads: &mut Vec<u64>,
    ) -> Result<()> {
        let seq = self.seq();
        let verify = shared.options.verify_checksums;
        let refilled = through_loaded_table(&shared.segments, Retry::Patiently, |table, guard| {
            self.pins.clear();
            self.decoded.clear();
            self.ahead.clear();
            self.ahead.reserve(self.chunk);
            payloads.clear();
            payloads.reserve(self.chunk);
            let relocations = LazyRelocations::new(shared);
            let resolver = TableResolver::new(&table);
            let chunk = self.chunk;
            self.ks
                .index
                .collect(from, self.direction, chunk, &resolver, guard, payloads);
            if resolver.missed() {
                return Ok(Attempt::Again);
            }
            if from == Bound::Unbounded {
                // From a key, the index hinted these records as it found
                // the start (see `index::scan`); from an end, nothing did.
                prefetch_records(&table, payloads);
            }
            match chunk == FIRST_CHUNK {
                // A seek and a few steps, as far as anyone knows yet.
                true => fetch_records(&table, payloads),
                false => read_ahead(&table, payloads, self.direction, &mut self.read_ahead_to),
            }
            let tombstones = self.ks.range_tombstones_if_any();
            let (mut heads, mut ahead_in) = (LastSegment::new(&table), LastSegment::new(&table));
            let mut retry = false;
            let mut out_of_range = false;
            let mut last_key = None;
            for (i, &p) in payloads.iter().enumerate() {
                if let Some(&ahead) = payloads.get(i + PREFETCHED) {
                    let ahead = Location(ahead);
                    if let Some((segment, _)) = ahead_in.get(ahead.segment()) {
                        segment.prefetch_record(ahead.offset());
                    }
                }
                let loc = Location(p);
                // The head is read once, for its key and (mostly) as the
                // version seen; one compaction moved is found the long way.
                let head = match heads.get(loc.segment()) {
                    Some((segment, written)) => Some((
                        segment,
                        segment.record_within(written, loc.offset(), verify)?,
                    )),
                    None => None,
                };
                let key = head.map_or_else(|| resolver.key(p), |(_, record)| record.key);
                if self.past_range(key) {
                    out_of_range = true;
                    break;
                }
                last_key = Some(key);
                // Most heads are the version seen: their parts are taken
                // as they are, without going through a `Version`.
                let seen = match head {
                    Some((segment, record)) if record.seq <= seq && record.holds_value() => {
                        Some((segment, record))
                    }
                    _ => {
                        let version = match head {
                            Some(head) => visible_from(&table, &relocations, head, seq, verify)?,
                            None => visible_version(&table, &relocations, loc, None, seq, verify)?,
                        };
                        match version {
                            Version::Put(segment, r) => Some((segment, r)),
                            Version::Absent => None,
                            Version::Retry => {
                                retry = true;
                                break;
                            }
                        }
                    }
                };
                if let Some((segment, record)) = seen
                    && self.range.contains(record.key)
                    && !tombstones
                        .as_ref()
                        .is_some_and(|t| t.hides(record.key, record.seq, seq))
                {
                    let pin = pin_of(&mut self.pins, segment);
                    let entry = match record.value_encoding {
                        _ if record.merge_state.is_operand() => {
                            let value = value_seen(&self.ks, segment, &record, verify)?;
                            let start = self.decoded.len();
                            self.decoded.extend_from_slice(&value);
                            Buffered::decoded(pin, segment, record.key, start..self.decoded.len())
                        }
                        ValueEncoding::Plain => {
                            Buffered::mapped(pin, segment, record.key, record.value)
                        }
                        ValueEncoding::Compressed => {
                            let start = self.decoded.len();
                            segment.decode_onto(&record, &mut self.decoded)?;
                            let at = start..self.decoded.len();
                            Buffered::decoded(pin, segment, record.key, at)
                        }
                    };
                    self.ahead.push_back(entry);
                }
            }
            if retry {
                return Ok(Attempt::Again);
            }
            self.exhausted = out_of_range || payloads.len() < chunk;
            self.chunk = (chunk * 2).min(MAX_CHUNK);
            match last_key {
                Some(key) => {
                    self.fetched_up_to.clear();
                    self.fetched_up_to.extend_from_slice(key);
                    self.fetched = true;
                }
                None => self.exhausted = true,
            }
            Ok(Attempt::Done(()))
        })?;
        if refilled.is_some() {
            return Ok(());
        }
        self.ahead.clear();
        Err(Error::TryAgain(format!(
            "iteration over keyspace {:?} kept racing compaction; was it dropped?",
            self.ks.name()
        )))
    }

    /// Whether `key` lies beyond the range in the current direction.
    fn past_range(&self, key: &[u8]) -> bool {
        match self.direction {
            ScanDirection::Forward => self.range.upper.as_deref().is_some_and(|u| key >= u),
            ScanDirection::Reverse => self.range.lower.as_deref().is_some_and(|l| key < l),
        }
    }
}

/// Hints the CPU to load the records of `payloads` (in log order they lie
/// far apart: fetching them together overlaps their cache misses).
/// The refill loop keeps hinting [`PREFETCHED`] records ahead of the one it
/// reads.
fn prefetch_records(table: &SegmentTable, payloads: &[u64]) {
    for &p in payloads.iter().take(PREFETCHED) {
        prefetch_record(table, p);
    }
}

/// Where segment maps are advised random access (a database larger than
/// memory, see `segment::map_advice`), asks the kernel to read ahead of a
/// cursor in each key-ordered segment it walks: where two or more of a
/// chunk's records lie in one such segment, the cursor is reading that run
/// in order, so once it nears what was asked for there (`asked`, per
/// segment), the next window is asked for, in the direction of the walk:
/// eight times the chunk's span in that segment, between 64 KiB and 1 MiB,
/// one large read instead of a fault per page. A record alone in its
/// segment (key-ordered runs overlap in key range, so neighbouring keys
/// often lie in different runs: a seek and a few steps) and the records of
/// log-ordered segments (which scatter) get their own pages asked for, all
/// of the chunk's at once, so they are read in parallel. For data in
/// memory this costs one load.
fn read_ahead(
    table: &SegmentTable,
    payloads: &[u64],
    direction: ScanDirection,
    asked: &mut Vec<(u32, u64)>,
) {
    if !table.read_at_random() {
        return;
    }
    // Per segment: the lowest and highest offset of the chunk's records in
    // it, and how many there are (key-ordered runs interleave in a chunk).
    let mut spans: SmallVec<[(u32, u64, u64, usize); 16]> = SmallVec::new();
    for &p in payloads {
        let loc = Location(p);
        let (id, offset) = (loc.segment(), loc.offset());
        match spans.iter_mut().find(|s| s.0 == id) {
            Some(s) => *s = (id, s.1.min(offset), s.2.max(offset), s.3 + 1),
            None => spans.push((id, offset, offset, 1)),
        }
    }
    for &(segment_id, low, high, records) in &spans {
        let Some(segment) = table.get(segment_id) else {
            continue;
        };
        if records < 2 || segment.kind() != SegmentKind::Compacted {
            fetch_apart(segment, payloads, segment_id);
            continue;
        }
        let span = high - low + PAGE;
        let window = (8 * span).clamp(READ_AHEAD_MIN, READ_AHEAD_MAX);
        let entry = match asked.iter().position(|&(id, _)| id == segment_id) {
            Some(i) => &mut asked[i].1,
            None => {
                let start = match direction {
                    ScanDirection::Forward => low,
                    ScanDirection::Reverse => high + PAGE,
                };
                asked.push((segment_id, start));
                &mut asked.last_mut().expect("pushed").1
            }
        };
        match direction {
            ScanDirection::Forward if high + span >= *entry => {
                let from = (*entry).max(low);
                segment.will_read(from, window);
                *entry = from + window;
            }
            ScanDirection::Reverse if low < *entry + span => {
                let to = (*entry).min(high + PAGE);
                let from = to.saturating_sub(window);
                segment.will_read(from, to - from);
                *entry = from;
            }
            _ => {}
        }
    }
}

/// Where segment maps are advised random access, asks for the page of
/// every record of a cursor's first chunk after a seek (or a start) at once,
/// and nothing more: most cursors take a few entries and go. Windows ahead
/// start with the second chunk ([`read_ahead`]), once the cursor is
/// scanning. (A seek + 10 over a database of eight runs read 225 KB with
/// windows from the first chunk.)
fn fetch_records(table: &SegmentTable, payloads: &[u64]) {
    if !table.read_at_random() {
        return;
    }
    for &p in payloads {
        let loc = Location(p);
        if let Some(segment) = table.get(loc.segment()) {
            segment.will_read_record(loc.offset());
        }
    }
}

/// Asks for the page of each record of `payloads` in `segment` at once
/// (see [`crate::segment::Segment::will_read_record`]): records that lie
/// apart (alone in their run, or in a log-ordered segment) are then read
/// in parallel, not one page fault after another. A seek + 10 over
/// overlapping runs reads a record in most of them.
fn fetch_apart(segment: &Segment, payloads: &[u64], segment_id: u32) {
    for &p in payloads {
        let loc = Location(p);
        if loc.segment() == segment_id {
            segment.will_read_record(loc.offset());
        }
    }
}

/// The page size assumed for read-ahead requests.
const PAGE: u64 = 4096;
/// The smallest read-ahead window a cursor asks for in a segment.
const READ_AHEAD_MIN: u64 = 64 << 10;
/// The largest read-ahead window a cursor asks for in a segment.
const READ_AHEAD_MAX: u64 = 1 << 20;

/// A refill's view of its segment table that remembers the last segment it
/// found, with its written bytes: a chunk's records mostly lie in the
/// segment of the one before, so most lookups are a compare instead of a
/// search and two loads of the segment's bounds.
struct LastSegment<'t> {
    table: &'t SegmentTable,
    last: Option<(&'t Arc<Segment>, &'t [u8])>,
}

impl<'t> LastSegment<'t> {
    fn new(table: &'t SegmentTable) -> Self {
        LastSegment { table, last: None }
    }

    /// The live segment with this id and its written bytes, if the table
    /// has it.
    #[inline]
    fn get(&mut self, id: u32) -> Option<(&'t Arc<Segment>, &'t [u8])> {
        if let Some(last) = self.last.filter(|(s, _)| s.id() == id) {
            return Some(last);
        }
        let found = self.table.get(id).map(|s| (s, s.written_bytes()));
        self.last = found.or(self.last);
        found
    }
}

fn prefetch_record(table: &SegmentTable, payload: u64) {
    let loc = Location(payload);
    if let Some(segment) = table.get(loc.segment()) {
        segment.prefetch_record(loc.offset());
    }
}

/// The index of `segment` in `pins`, added if missing. A chunk's records
/// lie in few segments, most often the one of the record before.
fn pin_of(pins: &mut SmallVec<[Arc<Segment>; 4]>, segment: &Arc<Segment>) -> usize {
    match pins.iter().rposition(|s| Arc::ptr_eq(s, segment)) {
        Some(i) => i,
        None => {
            pins.push(segment.clone());
            pins.len() - 1
        }
    }
}

impl Drop for Cursor {
    /// Hands the buffers to the thread's next cursor (see `spare`).
    fn drop(&mut self) {
        let buffers = spare::Buffers {
            ahead: std::mem::take(&mut self.ahead),
            payloads: std::mem::take(&mut self.payloads),
        };
        let _ = SPARE.try_with(|spare| spare.give_back(buffers, SPARE_MOST));
    }
}

impl Iterator for Cursor {
    type Item = Result<(Box<[u8]>, Box<[u8]>)>;

    /// Yields the current entry as owned bytes and moves on in the cursor's
    /// direction. Position the cursor first (`seek_to_first`, `seek`, ...).
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        let entry = self.entry()?;
        let item = (entry.key().into(), entry.value().into());
        let direction = self.direction;
        self.step(direction);
        Some(Ok(item))
    }
}

#[cfg(test)]
mod tests {
    use crate::db::keyspace::KeyspaceId;
    use crate::{Db, KeyRange, Options, WriteOptions};

    /// `n` keys, written in the order `order` gives, into many small log
    /// segments.
    fn small_segments_db(dir: &std::path::Path, n: u64, order: impl Fn(u64) -> u64) -> Db {
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            key_order_run_bytes: 0,
            ..Options::default()
        };
        let db = Db::open(dir, options).unwrap();
        for i in 0..n {
            let k = order(i).to_be_bytes();
            db.put(
                KeyspaceId(0),
                &k,
                &i.to_be_bytes(),
                &WriteOptions::default(),
            )
            .unwrap();
        }
        db
    }

    /// A cursor pins the segments of its current chunk only, each once:
    /// a full scan over keys written in order (a chunk of at most 512
    /// entries lies in two or three 16 KiB segments) never holds more, and
    /// sees every key once, in order.
    #[test]
    fn a_scan_pins_only_the_segments_of_its_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let n = 6_000u64;
        let db = small_segments_db(dir.path(), n, |i| i);
        let segments = db.stats().segments as usize;
        assert!(segments > 20, "{segments} segments");
        let mut cursor = db.cursor(KeyspaceId(0), KeyRange::default()).unwrap();
        cursor.seek_to_first();
        let mut seen = 0u64;
        let mut most_pinned = 0;
        while let Some(entry) = cursor.entry() {
            assert_eq!(entry.key(), seen.to_be_bytes());
            seen += 1;
            most_pinned = most_pinned.max(cursor.pins.len());
            cursor.forward();
        }
        assert_eq!(seen, n);
        let distinct = cursor
            .pins
            .iter()
            .map(|s| s.id())
            .collect::<std::collections::HashSet<_>>();
        assert_eq!(distinct.len(), cursor.pins.len(), "a segment pinned twice");
        assert!(
            most_pinned < segments,
            "{most_pinned} of {segments} segments pinned at once"
        );
    }

    /// Turning around in the middle of a chunk, and right after a refill,
    /// continues from the current key in the other direction.
    #[test]
    fn turning_around_continues_from_the_current_key() {
        let dir = tempfile::tempdir().unwrap();
        let n = 2_000u64;
        let db = small_segments_db(dir.path(), n, |i| i * 7_919 % n);
        let mut cursor = db.cursor(KeyspaceId(0), KeyRange::default()).unwrap();
        let key_at =
            |c: &super::Cursor| u64::from_be_bytes(c.entry().unwrap().key().try_into().unwrap());
        cursor.seek(&500u64.to_be_bytes());
        for steps in [1, 11, 12, 13, 40, 700] {
            let from = key_at(&cursor);
            for _ in 0..steps {
                cursor.forward();
            }
            assert_eq!(key_at(&cursor), from + steps);
            for _ in 0..steps {
                cursor.backward();
            }
            assert_eq!(key_at(&cursor), from);
        }
        cursor.seek_for_prev(&3u64.to_be_bytes());
        cursor.backward();
        cursor.backward();
        cursor.backward();
        assert_eq!(key_at(&cursor), 0);
        cursor.backward();
        assert!(cursor.entry().is_none());
    }

    /// Where maps are read at random (data larger than memory), refills
    /// ask the kernel for the pages they read (a seek's first chunk record
    /// by record, later ones in windows): short cursors of every length
    /// around the first chunk's, both ways, within bounds or not, at a
    /// snapshot and at the latest version (deleted and overwritten keys in
    /// between), see exactly what a `BTreeMap` holds.
    #[test]
    fn short_cursors_over_maps_read_at_random_match_a_model() {
        use std::collections::BTreeMap;

        use crate::segment::MapAdvice;

        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            key_order_run_bytes: 64 << 10,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        let key = |i: u64| (i * 3).to_be_bytes();
        let mut model = BTreeMap::new();
        for i in 0..3_000u64 {
            let value = [(i % 251) as u8; 24];
            db.put(ks, &key(i), &value, &w).unwrap();
            model.insert(key(i).to_vec(), value.to_vec());
        }
        db.compact().unwrap();
        let snapshot = db.snapshot();
        let at_snapshot = model.clone();
        for i in (0..3_000u64).filter(|i| i % 5 == 0 || (1_000..1_400).contains(i)) {
            db.delete(ks, &key(i), &w).unwrap();
            model.remove(key(i).as_slice());
        }
        for i in (0..3_000u64).step_by(7) {
            db.put(ks, &key(i), b"new", &w).unwrap();
            model.insert(key(i).to_vec(), b"new".to_vec());
        }
        for segment in db.shared().segments.load().iter() {
            segment.advise(MapAdvice::Random);
        }
        let mut rng = crate::test_rng::TestRng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| rng.below(n);
        for round in 0..600 {
            let target = next(9_500).to_be_bytes();
            let take = [0, 1, 2, 10, 11, 12, 13, 30][next(8) as usize];
            let reverse = next(2) == 1;
            let range = match next(3) {
                0 => KeyRange {
                    lower: Some(next(9_000).to_be_bytes().to_vec()),
                    upper: Some(next(9_000).to_be_bytes().to_vec()),
                },
                _ => KeyRange::default(),
            };
            let (mut cursor, want_from) = match round % 2 {
                0 => (db.cursor(ks, range.clone()).unwrap(), &model),
                _ => (snapshot.cursor(ks, range.clone()).unwrap(), &at_snapshot),
            };
            let in_range = |k: &Vec<u8>| range.contains(k);
            let want: Vec<(Vec<u8>, Vec<u8>)> = match reverse {
                false => want_from
                    .range(target.to_vec()..)
                    .filter(|(k, _)| in_range(k))
                    .take(take)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                true => want_from
                    .range(..=target.to_vec())
                    .rev()
                    .filter(|(k, _)| in_range(k))
                    .take(take)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            };
            match reverse {
                false => cursor.seek(&target),
                true => cursor.seek_for_prev(&target),
            }
            let mut got = Vec::new();
            while got.len() < take
                && let Some(entry) = cursor.entry()
            {
                got.push((entry.key().to_vec(), entry.value().to_vec()));
                match reverse {
                    false => cursor.forward(),
                    true => cursor.backward(),
                }
            }
            assert!(cursor.error.is_none(), "{:?}", cursor.error);
            assert_eq!(
                got, want,
                "round {round}: {take} from {target:?}, reverse {reverse}"
            );
        }
    }
}
