//! The read path: find a key's newest version in the index, then walk its
//! version chain in the log to the version a snapshot can see.
//!
//! Readers take no lock on their path (epoch collection, run now and then
//! by a pinning thread, may take the retired-list mutex, and a reader that
//! drops the last reference to a replaced segment unlinks its file). They
//! load the range-tombstone list first (see `value_of`), pin an epoch for
//! the index traversal and load the segment table through `arc-swap`. If a
//! location names a segment the loaded table no longer (or not yet) has,
//! compaction moved things under the reader: it reloads and starts over.

use std::borrow::Cow;
use std::ops::Deref;
use std::sync::Arc;

use crossbeam_epoch as epoch;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::{MergeState, RecordKind, RecordView};
use crate::index::LOOKUP_BATCH;
use crate::mvcc::merge_stack;
use crate::mvcc::range_tombstones::RangeTombstones;
use crate::mvcc::{Attempt, Relocations, Retry, through_loaded_table};
use crate::segment::resolver::TableResolver;
use crate::segment::{Segment, SegmentTable};

/// A value read from a segment: derefs to the bytes. A value stored as
/// written is read in place from the map, without copying, and keeps its
/// segment mapped (even if compaction replaces it) until dropped; a value
/// stored compressed is decoded into a buffer of its own.
#[derive(Clone, Debug)]
pub struct ValueRef {
    held: Held,
}

/// Where a [`ValueRef`]'s bytes are.
#[derive(Clone, Debug)]
enum Held {
    /// In place, in a segment's map.
    Mapped {
        segment: Arc<Segment>,
        start: usize,
        len: usize,
    },
    /// Decoded from a compressed value.
    Decoded(Arc<[u8]>),
}

impl ValueRef {
    /// The value `value`, read from `segment`: kept in place where it is
    /// borrowed from the map, else owned.
    #[expect(clippy::ptr_arg, reason = "whether it is borrowed is what decides")]
    fn of(segment: &Arc<Segment>, value: &Cow<'_, [u8]>) -> Self {
        let held = match value {
            Cow::Borrowed(bytes) => Held::Mapped {
                segment: segment.clone(),
                start: offset_in(segment, bytes),
                len: bytes.len(),
            },
            Cow::Owned(bytes) => Held::Decoded(bytes.as_slice().into()),
        };
        ValueRef { held }
    }
}

impl Deref for ValueRef {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.held {
            Held::Mapped {
                segment,
                start,
                len,
            } => &segment.bytes()[*start..*start + *len],
            Held::Decoded(bytes) => bytes,
        }
    }
}

impl AsRef<[u8]> for ValueRef {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// What a chain walk found.
pub(crate) enum Version<'t> {
    /// The visible version holds a value (a put, a resolved merge, or the
    /// top of a merge stack: see [`value_seen`]), stored in this segment.
    Put(&'t Arc<Segment>, RecordView<'t>),
    /// The key has no visible value (deleted, or not yet written at the
    /// snapshot).
    Absent,
    /// A location was missing from the table: reload and retry.
    Retry,
}

/// Walks the chain starting at `head` to the newest version with sequence
/// number ≤ `seq`. `expect_key`, if given, must equal the head's key
/// (the index returns candidates that the caller confirms).
#[inline]
pub(crate) fn visible_version<'t>(
    table: &'t SegmentTable,
    relocations: &impl MovedVersions,
    mut loc: Location,
    expect_key: Option<&[u8]>,
    seq: u64,
    verify: bool,
) -> Result<Version<'t>> {
    let mut first = true;
    loop {
        let segment = match table.get(loc.segment()) {
            Some(s) => s,
            None => match relocations.moved(loc) {
                Some(moved) if moved.is_none() => return Ok(Version::Absent),
                Some(moved) => {
                    loc = moved;
                    continue;
                }
                None => return Ok(Version::Retry),
            },
        };
        let record = segment.record_at(loc.offset(), verify)?;
        if first && expect_key.is_some_and(|k| k != record.key) {
            return Ok(Version::Absent);
        }
        first = false;
        if record.seq <= seq {
            return visible_as(segment, record);
        }
        if record.prev.is_none() {
            return Ok(Version::Absent);
        }
        loc = record.prev;
    }
}

/// [`visible_version`] for a chain whose head, `head`, the caller has read
/// from `segment` already (a cursor reads each head for its key first): the
/// common case, a head the snapshot sees, reads nothing more.
#[inline]
pub(crate) fn visible_from<'t>(
    table: &'t SegmentTable,
    relocations: &impl MovedVersions,
    (segment, head): (&'t Arc<Segment>, RecordView<'t>),
    seq: u64,
    verify: bool,
) -> Result<Version<'t>> {
    if head.seq <= seq {
        return visible_as(segment, head);
    }
    if head.prev.is_none() {
        return Ok(Version::Absent);
    }
    visible_version(table, relocations, head.prev, None, seq, verify)
}

/// What a reader sees of `record`, the newest version at its snapshot.
#[inline]
fn visible_as<'t>(segment: &'t Arc<Segment>, record: RecordView<'t>) -> Result<Version<'t>> {
    if record.holds_value() || record.merge_state.is_operand() {
        return Ok(Version::Put(segment, record));
    }
    match record.kind {
        RecordKind::Delete | RecordKind::RangeDelete => Ok(Version::Absent),
        _ => Err(Error::MergeFailed {
            key: record.key.to_vec(),
            no_function: record.merge_state == MergeState::NoFunction,
        }),
    }
}

/// A value read in place, pinned by the reading thread: it holds the
/// segment table through an `arc-swap` guard instead of a reference count,
/// so concurrent readers share no cache line. Not `Send`; drop it soon (it
/// keeps the segments of its table mapped). A value stored compressed is
/// decoded into a buffer it owns.
pub struct PinnedValue {
    table: arc_swap::Guard<Arc<SegmentTable>>,
    segment: u32,
    start: usize,
    len: usize,
    /// The decoded value, if it was stored compressed (then `start` and
    /// `len` are unused).
    decoded: Option<Vec<u8>>,
}

impl PinnedValue {
    /// Copies the value into an owned, sendable [`ValueRef`].
    pub fn to_value_ref(&self) -> ValueRef {
        if let Some(decoded) = &self.decoded {
            return ValueRef {
                held: Held::Decoded(decoded.as_slice().into()),
            };
        }
        let segment = self
            .table
            .get(self.segment)
            .expect("pinned table holds the segment");
        ValueRef {
            held: Held::Mapped {
                segment: segment.clone(),
                start: self.start,
                len: self.len,
            },
        }
    }

    /// The segment the value was read from and the value, borrowed.
    fn parts(&self) -> (&Arc<Segment>, &[u8]) {
        let segment = self
            .table
            .get(self.segment)
            .expect("pinned table holds the segment");
        match &self.decoded {
            Some(decoded) => (segment, decoded),
            None => (segment, &segment.bytes()[self.start..self.start + self.len]),
        }
    }
}

impl Deref for PinnedValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.decoded {
            Some(decoded) => decoded,
            None => self.parts().1,
        }
    }
}

impl AsRef<[u8]> for PinnedValue {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for PinnedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedValue")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Reads `key` in `ks` as of sequence number `seq`, or (with `None`) as of
/// the latest visible sequence number, re-read on every restart.
pub(crate) fn get_pinned(
    shared: &Shared,
    ks: &Keyspace,
    key: &[u8],
    seq: Option<u64>,
) -> Result<Option<PinnedValue>> {
    let verify = shared.options.verify_checksums;
    let found = through_loaded_table(&shared.segments, Retry::Patiently, |table, guard| {
        let seq = seq.unwrap_or_else(|| shared.visible());
        // Before the index: see `value_of`.
        let tombstones = ks.range_tombstones_if_any();
        let resolver = TableResolver::new(&table);
        let candidate = ks.index.get_candidate(key, &resolver, guard);
        if resolver.missed() {
            return Ok(Attempt::Again);
        }
        #[cfg(test)]
        tests::pause_after_lookup();
        let relocations = LazyRelocations::new(shared);
        let tombstones = tombstones.as_deref().map(|t| &**t);
        let (segment, start, len, decoded) = match value_of(
            &table,
            &relocations,
            (ks, tombstones),
            key,
            candidate,
            seq,
            verify,
        )? {
            Lookup::Found(segment, Cow::Borrowed(value)) => {
                (segment.id(), offset_in(segment, value), value.len(), None)
            }
            Lookup::Found(segment, Cow::Owned(value)) => (segment.id(), 0, 0, Some(value)),
            Lookup::Absent => return Ok(Attempt::Done(None)),
            Lookup::Retry => return Ok(Attempt::Again),
        };
        Ok(Attempt::Done(Some(PinnedValue {
            table,
            segment,
            start,
            len,
            decoded,
        })))
    })?;
    found.ok_or_else(|| raced(ks))
}

/// Reads every key of `keys` in `ks` as of sequence number `seq`, handing
/// each result to `each` with the key's position in `keys`, in order. The
/// index lookups of up to [`LOOKUP_BATCH`] keys at a time go down the tree
/// together, hinting each level's memory and then the records (see
/// [`crate::index::AlexIndex::get_candidates`]); a key whose batch raced
/// compaction is read again alone.
pub(crate) fn get_many_with(
    shared: &Shared,
    ks: &Keyspace,
    keys: &[&[u8]],
    seq: u64,
    each: &mut EachFound<'_>,
) {
    let verify = shared.options.verify_checksums;
    let mut candidates = Vec::with_capacity(LOOKUP_BATCH);
    for (batch_no, batch) in keys.chunks(LOOKUP_BATCH).enumerate() {
        // Before the index: see `value_of`.
        let tombstones = ks.range_tombstones_if_any();
        let guard = epoch::pin();
        let table = shared.segments.load();
        let resolver = TableResolver::new(&table);
        candidates.clear();
        ks.index
            .get_candidates(batch, &resolver, &guard, &mut candidates);
        let raced = resolver.missed();
        let relocations = LazyRelocations::new(shared);
        for (i, (key, &candidate)) in batch.iter().zip(&candidates).enumerate() {
            let at = batch_no * LOOKUP_BATCH + i;
            let lookup = match raced {
                true => Ok(Lookup::Retry),
                false => {
                    let tombstones = tombstones.as_deref().map(|t| &**t);
                    value_of(
                        &table,
                        &relocations,
                        (ks, tombstones),
                        key,
                        candidate,
                        seq,
                        verify,
                    )
                }
            };
            match lookup {
                Ok(Lookup::Found(segment, value)) => each(at, Ok(Some(Found { segment, value }))),
                Ok(Lookup::Absent) => each(at, Ok(None)),
                Ok(Lookup::Retry) => hand_over(at, get_pinned(shared, ks, key, Some(seq)), each),
                Err(e) => each(at, Err(e)),
            }
        }
    }
}

/// A value a batched read found, borrowed from its segment's map (or
/// decoded, if stored compressed).
pub(crate) struct Found<'a> {
    segment: &'a Arc<Segment>,
    value: Cow<'a, [u8]>,
}

impl Found<'_> {
    /// The value's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.value
    }

    /// An owned handle on the value (it keeps the segment mapped).
    pub(crate) fn to_value_ref(&self) -> ValueRef {
        ValueRef::of(self.segment, &self.value)
    }
}

/// The receiver of a batched read's results: a key's position in the
/// batch, and what was found (borrowed for the call) or the error.
pub(crate) type EachFound<'f> = dyn FnMut(usize, Result<Option<Found<'_>>>) + 'f;

/// Hands the result of a single read of the key at position `at` to `each`.
/// A value decoded (decompressed, or a merge stack folded) is handed over
/// owned: borrowed, [`Found::to_value_ref`] would take it for bytes of the
/// segment's map.
pub(crate) fn hand_over(at: usize, read: Result<Option<PinnedValue>>, each: &mut EachFound<'_>) {
    match read {
        Ok(Some(pinned)) => {
            let (segment, value) = pinned.parts();
            let value = match pinned.decoded.is_some() {
                true => Cow::Owned(value.to_vec()),
                false => Cow::Borrowed(value),
            };
            each(at, Ok(Some(Found { segment, value })));
        }
        Ok(None) => each(at, Ok(None)),
        Err(e) => each(at, Err(e)),
    }
}

/// Where versions that compaction moved out of a segment live now.
pub(crate) trait MovedVersions {
    /// Where the version once at `from` lives now, if it moved
    /// (`Location::NONE`: its chain ends there).
    fn moved(&self, from: Location) -> Option<Location>;
}

impl MovedVersions for Relocations {
    fn moved(&self, from: Location) -> Option<Location> {
        self.get(from)
    }
}

/// The relocations, loaded the first time a read needs them: a point read
/// whose versions all lie in its loaded segment table never does.
pub(crate) struct LazyRelocations<'s> {
    shared: &'s Shared,
    loaded: std::cell::OnceCell<arc_swap::Guard<Arc<Relocations>>>,
}

impl<'s> LazyRelocations<'s> {
    pub(crate) fn new(shared: &'s Shared) -> Self {
        LazyRelocations {
            shared,
            loaded: std::cell::OnceCell::new(),
        }
    }
}

impl MovedVersions for LazyRelocations<'_> {
    fn moved(&self, from: Location) -> Option<Location> {
        self.loaded
            .get_or_init(|| self.shared.relocations.load())
            .get(from)
    }
}

/// What a point read found, from the index's candidate on.
enum Lookup<'t> {
    /// The visible value, from this segment (in its map, or decoded).
    Found(&'t Arc<Segment>, Cow<'t, [u8]>),
    /// No visible value.
    Absent,
    /// A location was missing from the table: reload and retry.
    Retry,
}

/// The value of `key` visible at `seq`, given the index's `candidate` for
/// it (confirmed here against the record's key).
///
/// `tombstones` is the keyspace's range-tombstone list loaded *before* the
/// index lookup that gave `candidate`. Compaction drops a range tombstone
/// only after it removed every index entry the tombstone covers, and
/// publishes the shorter list after those removals: a list loaded first
/// either still holds the tombstone, or the lookup cannot find what it
/// covered. A list loaded after the lookup could miss both (the entry was
/// found, then the tombstone dropped) and serve a deleted value.
fn value_of<'t>(
    table: &'t SegmentTable,
    relocations: &impl MovedVersions,
    (ks, tombstones): (&Keyspace, Option<&RangeTombstones>),
    key: &[u8],
    candidate: Option<u64>,
    seq: u64,
    verify: bool,
) -> Result<Lookup<'t>> {
    let Some(head) = candidate else {
        return Ok(Lookup::Absent);
    };
    Ok(
        match visible_version(table, relocations, Location(head), Some(key), seq, verify)? {
            Version::Put(_, record)
                if tombstones.is_some_and(|t| t.hides(key, record.seq, seq)) =>
            {
                Lookup::Absent
            }
            Version::Put(segment, record) => {
                Lookup::Found(segment, value_seen(ks, segment, &record, verify)?)
            }
            Version::Absent => Lookup::Absent,
            Version::Retry => Lookup::Retry,
        },
    )
}

/// The value a reader sees in `record`, a version that holds one (see
/// [`Version::Put`]) in `segment` of keyspace `ks`: its value as stored
/// (decoded if compressed), or the fold of the merge stack it tops with
/// the keyspace's merge function (an error if the function fails or is
/// not set).
#[inline]
pub(crate) fn value_seen<'t>(
    ks: &Keyspace,
    segment: &'t Segment,
    record: &RecordView<'t>,
    verify: bool,
) -> Result<Cow<'t, [u8]>> {
    if !record.merge_state.is_operand() {
        return segment.value_of(record);
    }
    let function = ks.merge_function();
    merge_stack::fold_for_read(segment, record, function.as_ref(), verify).map(Cow::Owned)
}

/// The error of a read that kept racing compaction.
fn raced(ks: &Keyspace) -> Error {
    Error::TryAgain(format!(
        "read of keyspace {:?} kept racing compaction; was the keyspace dropped?",
        ks.name()
    ))
}

fn offset_in(segment: &Segment, value: &[u8]) -> usize {
    value.as_ptr() as usize - segment.bytes().as_ptr() as usize
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;
    use std::sync::mpsc;

    use crate::{Db, KeyspaceId, Options, WriteBatch, WriteOptions};

    thread_local! {
        /// Run once by this thread's next point read, between its index
        /// lookup and its range-tombstone check.
        static PAUSE_AFTER_LOOKUP: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
    }

    /// The pause point of [`super::get_pinned`].
    pub(crate) fn pause_after_lookup() {
        if let Some(pause) = PAUSE_AFTER_LOOKUP.with(|p| p.borrow_mut().take()) {
            pause();
        }
    }

    fn key(i: u32) -> Vec<u8> {
        format!("key:{i:08}").into_bytes()
    }

    fn write_keys(db: &Db, ks: KeyspaceId, keys: std::ops::Range<u32>) {
        let mut batch = WriteBatch::new();
        for i in keys {
            batch.put(ks, &key(i), &[b'v'; 200]);
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }

    /// Found by the model test (`long_sequences_with_many_rotations`, under
    /// load): a batched read whose batch raced compaction reads each key
    /// alone; a value it decoded (here a merge stack folded) was handed on
    /// as if borrowed from the segment's map, and an owned handle on it
    /// took its address for an offset in the map (an overflow, a panic).
    #[test]
    fn a_decoded_value_handed_over_from_a_single_read_stays_owned() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("default").unwrap();
        let append: std::sync::Arc<dyn crate::MergeFunction> =
            std::sync::Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
                Some([old.unwrap_or_default(), operand].concat())
            });
        db.set_merge_function(ks, Some(append)).unwrap();
        // A value too big to resolve the merge when written: a read folds.
        let base = vec![b'b'; 4096];
        let mut batch = WriteBatch::new();
        batch.put(ks, b"k", &base);
        db.write(&batch, &WriteOptions::default()).unwrap();
        let mut batch = WriteBatch::new();
        batch.merge(ks, b"k", b"+one");
        db.write(&batch, &WriteOptions::default()).unwrap();
        let want = [base.as_slice(), b"+one"].concat();
        let pinned = db.get_pinned(ks, b"k").unwrap();
        assert!(
            pinned.as_ref().is_some_and(|p| p.decoded.is_some()),
            "folded"
        );
        let mut handed = Vec::new();
        super::hand_over(7, Ok(pinned), &mut |at, found| {
            let found = found.unwrap().expect("the key is there");
            handed.push((at, found.bytes().to_vec(), found.to_value_ref()));
        });
        let (at, bytes, owned) = handed.pop().unwrap();
        assert_eq!((at, &bytes), (7, &want));
        assert_eq!(&*owned, want.as_slice());
    }

    /// A point read that found a key in the index, then paused while
    /// compaction applied the range delete covering it and dropped the
    /// range tombstone, must not return the deleted value: the delete was
    /// acknowledged before the read began.
    #[test]
    fn a_get_racing_the_drop_of_its_range_tombstone_sees_the_delete() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            segment_bytes: 64 << 10,
            background_compaction: false,
            ..Options::default()
        };
        let db = std::sync::Arc::new(Db::open(dir.path(), options).unwrap());
        let ks = db.keyspace("default").unwrap();
        write_keys(&db, ks, 0..1_000);
        let mut range_delete = WriteBatch::new();
        range_delete.delete_range(ks, &key(100), &key(900));
        db.write(&range_delete, &WriteOptions::default()).unwrap();
        // Push the range delete out of the active log segment.
        write_keys(&db, ks, 1_000..2_000);

        let (paused_tx, paused_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let reader = {
            let db = db.clone();
            std::thread::spawn(move || {
                PAUSE_AFTER_LOOKUP.with(|p| {
                    *p.borrow_mut() = Some(Box::new(move || {
                        paused_tx.send(()).unwrap();
                        release_rx.recv().unwrap();
                    }))
                });
                db.get_copied(ks, &key(500)).unwrap()
            })
        };
        paused_rx.recv().unwrap();
        for _ in 0..20 {
            if db.live_range_deletes(ks).unwrap() == 0 {
                break;
            }
            db.compact().unwrap();
            write_keys(&db, ks, 2_000..2_400);
        }
        assert_eq!(db.live_range_deletes(ks).unwrap(), 0, "{:?}", db.stats());
        release_tx.send(()).unwrap();
        assert_eq!(reader.join().unwrap(), None);
        assert_eq!(db.get_copied(ks, &key(500)).unwrap(), None);
    }
}
