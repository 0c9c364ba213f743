//! Ordered iteration over a keyspace at a snapshot.
//!
//! A [`Cursor`] is owned: it holds an `Arc` of the database and a
//! registered snapshot, so it can be stored anywhere and sent across
//! threads. It never holds an epoch guard between calls: it fetches entries
//! from the index in small chunks, each under its own short pin, restarting
//! from the last key it saw. Every cursor is an implicit snapshot: writes
//! made after its creation are invisible to it.
//!
//! A fetched entry is resolved (its record read, checked and its visible
//! version found) only when the cursor reaches it, against the segment
//! table it was fetched under: sealed records never change, and the table
//! keeps the segments it lists mapped, so this reads what resolving at
//! fetch time would have. A seek that reads one entry resolves one.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use crossbeam_epoch as epoch;

use crate::error::{Error, Result};
use crate::index::{KeyResolver, ScanDirection};
use crate::keyspace::Keyspace;
use crate::location::Location;
use crate::mvcc::Relocations;
use crate::range_tombstones::RangeTombstones;
use crate::read::{TableResolver, Version, key_in, visible_version};
use crate::segment::{Segment, SegmentTable};
use crate::snapshot::SnapshotGuard;

/// Entries fetched from the index by the first refill after a seek; each
/// further refill doubles, up to [`MAX_CHUNK`]. Short scans (seek + a few
/// nexts) fetch few entries; long scans amortize the index traversals.
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

/// Index entries fetched and not yet resolved, with what they were fetched
/// under.
struct Fetched {
    table: Arc<SegmentTable>,
    relocations: Arc<Relocations>,
    tombstones: Arc<RangeTombstones>,
    payloads: VecDeque<u64>,
    /// Where to fetch again if resolving races compaction: after the last
    /// entry resolved (by its payload), or from where this chunk began.
    restart: Restart,
}

/// Where a chunk's fetch restarts.
enum Restart {
    After(u64),
    From(Bound<Vec<u8>>),
}

impl std::fmt::Debug for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetched")
            .field("payloads", &self.payloads.len())
            .finish_non_exhaustive()
    }
}

impl Fetched {
    /// The bound to fetch again from.
    fn restart_bound(&self) -> Bound<Vec<u8>> {
        match &self.restart {
            Restart::After(p) => {
                Bound::Excluded(key_in(&self.table, *p, &Cell::new(false)).to_vec())
            }
            Restart::From(bound) => bound.clone(),
        }
    }
}

/// What resolving the fetched entries gave.
enum Resolved {
    /// The next visible entry.
    Entry(Entry),
    /// None left in this chunk (or the range ended).
    Drained,
    /// A location was missing from the chunk's table: fetch again from here.
    Refetch(Bound<Vec<u8>>),
}

/// A positioned, bidirectional iterator over one keyspace at a snapshot.
#[derive(Debug)]
pub struct Cursor {
    snapshot: SnapshotGuard,
    ks: Arc<Keyspace>,
    range: KeyRange,
    current: Option<Entry>,
    fetched: Option<Fetched>,
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
            fetched: None,
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
            self.fetched = None;
            self.exhausted = false;
            self.chunk = FIRST_CHUNK;
            self.fetched_up_to = Some(current.key().to_vec());
        }
        self.advance();
    }

    fn start(&mut self, from: Bound<Vec<u8>>, direction: ScanDirection) {
        self.current = None;
        self.fetched = None;
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

    /// Makes the next visible entry current, fetching as needed.
    fn advance(&mut self) {
        let mut refetches = 0;
        loop {
            match self.resolve_fetched() {
                Ok(Resolved::Entry(e)) => {
                    self.current = Some(e);
                    if self.fetched.as_ref().is_some_and(|f| f.payloads.is_empty()) {
                        // Let the chunk's table go: the entry holds its own
                        // segment, and retired ones can be removed.
                        self.fetched = None;
                    }
                    return;
                }
                Ok(Resolved::Drained) => {}
                Ok(Resolved::Refetch(from)) => {
                    refetches += 1;
                    let result = match refetches > MAX_RESTARTS {
                        true => Err(self.raced_too_often()),
                        false => self.refill(from),
                    };
                    if let Err(e) = result {
                        self.fail(e);
                        return;
                    }
                    continue;
                }
                Err(e) => {
                    self.fail(e);
                    return;
                }
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
        self.fetched = None;
        self.exhausted = true;
        self.error = Some(e);
    }

    /// Fetches the next chunk of index entries from `from` (resolved later,
    /// one by one, by [`Self::resolve_fetched`]).
    fn refill(&mut self, from: Bound<Vec<u8>>) -> Result<()> {
        let shared = self.snapshot.shared().clone();
        for _ in 0..MAX_RESTARTS {
            let guard = epoch::pin();
            let table = shared.segments.load_full();
            let relocations = shared.relocations.load_full();
            let resolver = TableResolver::new(&table);
            let chunk = self.chunk;
            let mut payloads = Vec::with_capacity(chunk);
            self.ks.index.collect(
                as_slice_bound(&from),
                self.direction,
                chunk,
                &resolver,
                &guard,
                &mut payloads,
            );
            let last_key = payloads.last().map(|&p| resolver.key(p).to_vec());
            if resolver.missed() {
                continue;
            }
            prefetch_records(&table, &payloads);
            self.exhausted = payloads.len() < chunk;
            self.chunk = (chunk * 2).min(MAX_CHUNK);
            match last_key {
                Some(k) => self.fetched_up_to = Some(k),
                None => self.exhausted = true,
            }
            self.fetched = Some(Fetched {
                table,
                relocations,
                tombstones: Arc::clone(&self.ks.range_tombstones()),
                payloads: payloads.into(),
                restart: Restart::From(from),
            });
            return Ok(());
        }
        Err(self.raced_too_often())
    }

    fn raced_too_often(&self) -> Error {
        Error::InvalidArgument(format!(
            "iteration over keyspace {:?} kept racing compaction; was it dropped?",
            self.ks.name()
        ))
    }

    /// Resolves fetched entries in order until one is visible at the
    /// snapshot, in the range and not under a range delete.
    fn resolve_fetched(&mut self) -> Result<Resolved> {
        let seq = self.seq();
        let verify = self.snapshot.shared().options.verify_checksums;
        let (range, direction) = (&self.range, self.direction);
        let Some(f) = self.fetched.as_mut() else {
            return Ok(Resolved::Drained);
        };
        while let Some(p) = f.payloads.pop_front() {
            if let Some(&ahead) = f.payloads.get(PREFETCHED - 1) {
                prefetch_record(&f.table, ahead);
            }
            let missed = Cell::new(false);
            let key = key_in(&f.table, p, &missed);
            if missed.get() {
                return Ok(Resolved::Refetch(f.restart_bound()));
            }
            if past_range(range, direction, key) {
                f.payloads.clear();
                self.exhausted = true;
                return Ok(Resolved::Drained);
            }
            match visible_version(&f.table, &f.relocations, Location(p), None, seq, verify)? {
                Version::Put(segment, record)
                    if range.contains(record.key)
                        && !f.tombstones.hides(record.key, record.seq, seq) =>
                {
                    let entry = Entry::new(segment, record.key, record.value);
                    f.restart = Restart::After(p);
                    return Ok(Resolved::Entry(entry));
                }
                Version::Retry => return Ok(Resolved::Refetch(f.restart_bound())),
                _ => f.restart = Restart::After(p),
            }
        }
        Ok(Resolved::Drained)
    }
}

/// Whether `key` lies beyond `range` in `direction`.
fn past_range(range: &KeyRange, direction: ScanDirection, key: &[u8]) -> bool {
    match direction {
        ScanDirection::Forward => range.upper.as_deref().is_some_and(|u| key >= u),
        ScanDirection::Reverse => range.lower.as_deref().is_some_and(|l| key < l),
    }
}

/// Hints the CPU to load the records of `payloads` (in log order they lie
/// far apart: fetching them together overlaps their cache misses).
/// Resolving keeps hinting [`PREFETCHED`] records ahead of the one it
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
