//! Ordered iteration over a keyspace at a snapshot.
//!
//! A [`Cursor`] is owned: it holds an `Arc` of the database and a
//! registered snapshot, so it can be stored anywhere and sent across
//! threads. It never holds an epoch guard between calls: it fetches entries
//! from the index in small chunks, each under its own short pin, restarting
//! from the last key it saw. Every cursor is an implicit snapshot: writes
//! made after its creation are invisible to it.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crossbeam_epoch as epoch;

use crate::error::{Error, Result};
use crate::index::{KeyResolver, ScanDirection};
use crate::keyspace::Keyspace;
use crate::location::Location;
use crate::read::{TableResolver, Version, visible_version};
use crate::segment::{Segment, SegmentTable};
use crate::snapshot::SnapshotGuard;

/// Entries fetched from the index by the first refill after a seek; each
/// further refill doubles, up to [`MAX_CHUNK`]. Short scans (seek + a few
/// nexts) resolve few records; long scans amortize the index traversals.
const FIRST_CHUNK: usize = 12;
/// Largest refill.
const MAX_CHUNK: usize = 512;
/// Records of a refill hinted to the CPU at once (about what it can fetch
/// in parallel; later ones would be evicted before they are read).
const PREFETCHED: usize = 16;
/// Restarts of one refill after racing compaction before giving up.
const MAX_RESTARTS: usize = 1000;

/// One key-value pair, borrowed in place from a mapped segment.
#[derive(Clone, Debug)]
pub struct Entry {
    segment: Arc<Segment>,
    key: (usize, usize),
    value: (usize, usize),
}

impl Entry {
    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.segment.bytes()[self.key.0..self.key.1]
    }

    /// The value.
    pub fn value(&self) -> &[u8] {
        &self.segment.bytes()[self.value.0..self.value.1]
    }

    fn new(segment: &Arc<Segment>, key: &[u8], value: &[u8]) -> Self {
        let base = segment.bytes().as_ptr() as usize;
        let k = key.as_ptr() as usize - base;
        let v = value.as_ptr() as usize - base;
        Entry {
            segment: segment.clone(),
            key: (k, k + key.len()),
            value: (v, v + value.len()),
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
    current: Option<Entry>,
    ahead: VecDeque<Entry>,
    direction: ScanDirection,
    /// Key of the last index entry fetched in `direction`, visible or not.
    fetched_up_to: Option<Vec<u8>>,
    exhausted: bool,
    error: Option<Error>,
    /// Entries the next refill fetches.
    chunk: usize,
}

impl Cursor {
    pub(crate) fn new(snapshot: SnapshotGuard, ks: Arc<Keyspace>, range: KeyRange) -> Self {
        Cursor {
            snapshot,
            ks,
            range,
            current: None,
            ahead: VecDeque::new(),
            direction: ScanDirection::Forward,
            fetched_up_to: None,
            exhausted: true,
            error: None,
            chunk: FIRST_CHUNK,
        }
    }

    /// The sequence number this cursor reads at.
    pub fn seq(&self) -> u64 {
        self.snapshot.seq()
    }

    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        self.current.is_some()
    }

    /// The current entry.
    pub fn entry(&self) -> Option<&Entry> {
        self.current.as_ref()
    }

    /// The error that stopped the cursor, if any (it is then not valid).
    pub fn status(&self) -> Result<(), &Error> {
        self.error.as_ref().map_or(Ok(()), Err)
    }

    /// Positions at the first key of the range.
    pub fn seek_to_first(&mut self) {
        let from = self
            .range
            .lower
            .clone()
            .map_or(Bound::Unbounded, Bound::Included);
        self.start(from, ScanDirection::Forward);
    }

    /// Positions at the last key of the range.
    pub fn seek_to_last(&mut self) {
        let from = self
            .range
            .upper
            .clone()
            .map_or(Bound::Unbounded, Bound::Excluded);
        self.start(from, ScanDirection::Reverse);
    }

    /// Positions at the first key ≥ `key` (within the range).
    pub fn seek(&mut self, key: &[u8]) {
        let key = match &self.range.lower {
            Some(l) if l.as_slice() > key => l.clone(),
            _ => key.to_vec(),
        };
        self.start(Bound::Included(key), ScanDirection::Forward);
    }

    /// Positions at the last key ≤ `key` (within the range).
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        let from = match &self.range.upper {
            Some(u) if u.as_slice() <= key => Bound::Excluded(u.clone()),
            _ => Bound::Included(key.to_vec()),
        };
        self.start(from, ScanDirection::Reverse);
    }

    /// Moves to the next key; does nothing if not valid.
    pub fn forward(&mut self) {
        self.step(ScanDirection::Forward);
    }

    /// Moves to the previous key; does nothing if not valid.
    pub fn backward(&mut self) {
        self.step(ScanDirection::Reverse);
    }

    fn step(&mut self, direction: ScanDirection) {
        let Some(current) = self.current.take() else {
            return;
        };
        if self.direction != direction {
            self.direction = direction;
            self.ahead.clear();
            self.exhausted = false;
            self.chunk = FIRST_CHUNK;
            self.fetched_up_to = Some(current.key().to_vec());
        }
        self.advance();
    }

    fn start(&mut self, from: Bound<Vec<u8>>, direction: ScanDirection) {
        self.current = None;
        self.ahead.clear();
        self.error = None;
        self.direction = direction;
        self.exhausted = false;
        self.fetched_up_to = None;
        self.chunk = FIRST_CHUNK;
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
            if self.exhausted {
                return;
            }
            let from = match self.fetched_up_to.clone() {
                Some(k) => Bound::Excluded(k),
                None => return,
            };
            if let Err(e) = self.refill(from) {
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
    /// versions visible at the snapshot.
    fn refill(&mut self, from: Bound<Vec<u8>>) -> Result<()> {
        let shared = self.snapshot.shared().clone();
        for _ in 0..MAX_RESTARTS {
            let guard = epoch::pin();
            let table = shared.segments.load();
            let relocations = shared.relocations.load();
            let resolver = TableResolver::new(&table);
            let chunk = self.chunk;
            let mut payloads = Vec::with_capacity(chunk);
            let bound = as_slice_bound(&from);
            self.ks.index.collect(
                bound,
                self.direction,
                chunk,
                &resolver,
                &guard,
                &mut payloads,
            );
            if resolver.missed() {
                continue;
            }
            prefetch_records(&table, &payloads);
            let tombstones = self.ks.range_tombstones();
            let mut buffered = Vec::with_capacity(payloads.len());
            let mut retry = false;
            let mut out_of_range = false;
            let mut last_key = None;
            for (i, &p) in payloads.iter().enumerate() {
                if let Some(&ahead) = payloads.get(i + PREFETCHED) {
                    prefetch_record(&table, ahead);
                }
                let key = resolver.key(p);
                if self.past_range(key) {
                    out_of_range = true;
                    break;
                }
                last_key = Some(key);
                let version = visible_version(
                    &table,
                    &relocations,
                    Location(p),
                    None,
                    self.seq(),
                    shared.options.verify_checksums,
                )?;
                match version {
                    Version::Put(segment, record)
                        if self.range.contains(record.key)
                            && !tombstones.hides(record.key, record.seq, self.seq()) =>
                    {
                        buffered.push(Entry::new(segment, record.key, record.value));
                    }
                    Version::Retry => {
                        retry = true;
                        break;
                    }
                    _ => {}
                }
            }
            if retry {
                continue;
            }
            self.exhausted = out_of_range || payloads.len() < chunk;
            self.chunk = (chunk * 2).min(MAX_CHUNK);
            self.fetched_up_to = last_key.map(<[u8]>::to_vec).or(self.fetched_up_to.take());
            if last_key.is_none() {
                self.exhausted = true;
            }
            self.ahead.extend(buffered);
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
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

fn prefetch_record(table: &SegmentTable, payload: u64) {
    let loc = Location(payload);
    if let Some(segment) = table.get(loc.segment()) {
        segment.prefetch_record(loc.offset());
    }
}

fn as_slice_bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
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
        let entry = self.current.clone()?;
        let direction = self.direction;
        self.step(direction);
        Some(Ok((entry.key().into(), entry.value().into())))
    }
}
