//! Iterators: [`DBRawIteratorWithThreadMode`], which mirrors RocksDB's
//! positioned iterator, and [`DBIteratorWithThreadMode`], a Rust
//! `Iterator` on top of it.
//!
//! Both wrap an engine cursor, which reads at the moment the iterator was
//! created (or at the snapshot set in its `ReadOptions`): an iterator never
//! sees writes made after its creation, however long it lives. Keys and
//! values are borrowed straight from the memory-mapped segments.

use std::iter::FusedIterator;

mod overlay;

use overlay::OverlayCursor;
pub(crate) use overlay::merge_unsupported;

use crate::db::{DB, DBAccess};
use crate::slice_transform::SliceTransform;
use crate::statistics::{Statistics, Ticker};
use crate::write_batch::KeyIndex;
use crate::{Direction, Error, IteratorMode, ReadOptions};

/// A raw iterator of a [`DB`].
pub type DBRawIterator<'a> = DBRawIteratorWithThreadMode<'a, DB>;

/// A positioned iterator over one column family: seek it, then move it
/// with [`next`](Self::next) and [`prev`](Self::prev) while
/// [`valid`](Self::valid) is true.
///
/// It honours the read options' bounds (`iterate_lower_bound` inclusive,
/// `iterate_upper_bound` exclusive), snapshot, and `prefix_same_as_start`
/// when the column family has a prefix extractor. `next` and `prev` do
/// nothing when the iterator is not valid.
pub struct DBRawIteratorWithThreadMode<'a, D: DBAccess> {
    cursor: Result<OverlayCursor, Error>,
    /// The prefix extractor, when iteration must stay within one prefix.
    prefix_extractor: Option<SliceTransform>,
    /// The prefix the iterator must stay within, set by the last seek.
    prefix: Option<Vec<u8>>,
    /// The iterator left the prefix and is no longer valid.
    left_prefix: bool,
    /// What a refresh, or a seek of a tailing iterator, reads from again.
    source: CursorSource<'a, D>,
}

/// Where an iterator's cursor comes from, to make a new one at the latest
/// state on `refresh` (and on every seek of a tailing iterator).
struct CursorSource<'a, D: DBAccess> {
    db: &'a D,
    cf: u32,
    readopts: ReadOptions,
}

impl<D: DBAccess> CursorSource<'_, D> {
    /// A cursor at the latest state (or the read options' snapshot), with
    /// the pending writes of the handle (a transaction's own) laid over it.
    #[inline]
    fn cursor(&self) -> Result<OverlayCursor, Error> {
        let pending = self.db.pending_writes_internal(
            self.cf,
            self.readopts.iterate_lower_bound.as_deref(),
            self.readopts.iterate_upper_bound.as_deref(),
        );
        let core = self.db.core();
        let cursor = core.cursor(self.cf, &self.readopts)?;
        Ok(OverlayCursor::new(cursor, pending, core.key_order(self.cf)))
    }
}

impl<'a, D: DBAccess> DBRawIteratorWithThreadMode<'a, D> {
    pub(crate) fn new(db: &'a D, readopts: ReadOptions) -> Self {
        Self::new_cf(db, 0, readopts)
    }

    pub(crate) fn new_cf(db: &'a D, cf: u32, readopts: ReadOptions) -> Self {
        let core = db.core();
        let prefix_extractor = if readopts.prefix_same_as_start {
            core.prefix_extractor(cf)
        } else {
            None
        };
        let source = CursorSource { db, cf, readopts };
        Self {
            cursor: source.cursor(),
            prefix_extractor,
            prefix: None,
            left_prefix: false,
            source,
        }
    }

    /// Lays the pending writes of column family `cf` in `index` over this
    /// iterator (they win over whatever it saw for the same key), within
    /// its bounds, and unpositions it.
    pub(crate) fn lay_over(mut self, index: &KeyIndex, cf: u32) -> Self {
        let readopts = &self.source.readopts;
        let (lower, upper) = (
            readopts.iterate_lower_bound.as_deref(),
            readopts.iterate_upper_bound.as_deref(),
        );
        let order = self.source.db.core().key_order(cf);
        let newer = index.range_in(cf, (lower, upper), order.as_ref());
        if let Ok(cursor) = &mut self.cursor {
            cursor.lay_over(newer);
        }
        self.left_prefix = false;
        self
    }

    /// Moves the iterator to the latest state of the database; it is then
    /// not positioned and must be sought again. An iterator made with a
    /// snapshot stops using it (the snapshot itself stays valid), as in
    /// rocksdb.
    pub fn refresh(&mut self) -> Result<(), Error> {
        self.source.readopts.snapshot = None;
        self.cursor = self.source.cursor();
        self.prefix = None;
        self.left_prefix = false;
        self.cursor.as_ref().map(drop).map_err(Clone::clone)
    }

    /// A tailing iterator (`ReadOptions::set_tailing`) reads the latest
    /// state at every seek, so it sees the writes made since it was created.
    fn renew_if_tailing(&mut self) {
        if self.source.readopts.tailing && self.source.readopts.snapshot.is_none() {
            self.cursor = self.source.cursor();
        }
    }

    /// For a tailing iterator, moves to the latest state and re-finds the
    /// current key with `seek`. Returns true if the key is gone and the
    /// iterator already stands on its neighbour (the step is then done);
    /// false if the caller still has to step off the current key.
    #[inline]
    fn renew_at_current_key(&mut self, seek: fn(&mut OverlayCursor, &[u8])) -> bool {
        if !self.source.readopts.tailing || self.source.readopts.snapshot.is_some() {
            return false;
        }
        self.renew_tailing_at_current_key(seek)
    }

    /// [`Self::renew_at_current_key`] for a tailing iterator.
    #[cold]
    fn renew_tailing_at_current_key(&mut self, seek: fn(&mut OverlayCursor, &[u8])) -> bool {
        let Some(key) = self.key().map(<[u8]>::to_vec) else {
            return false;
        };
        self.cursor = self.source.cursor();
        let Ok(cursor) = &mut self.cursor else {
            return true;
        };
        seek(cursor, &key);
        cursor
            .item()
            .is_none_or(|(current, _)| current != key.as_slice())
    }

    /// The user timestamp of the current entry (empty in a column family
    /// without user timestamps), `None` when not valid.
    pub fn timestamp(&self) -> Option<&[u8]> {
        if !self.valid() {
            return None;
        }
        self.cursor.as_ref().ok().and_then(OverlayCursor::timestamp)
    }

    /// Whether the iterator is on an entry. It is not after a move past
    /// either end of its range, or after an error (see [`Self::status`]).
    #[inline]
    pub fn valid(&self) -> bool {
        !self.left_prefix && self.cursor.as_ref().is_ok_and(OverlayCursor::valid)
    }

    /// The error that invalidated the iterator, if any. A seek clears it.
    pub fn status(&self) -> Result<(), Error> {
        match &self.cursor {
            Ok(cursor) => cursor.status(),
            Err(e) => Err(e.clone()),
        }
    }

    /// Positions at the first key of the range.
    pub fn seek_to_first(&mut self) {
        self.renew_if_tailing();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_to_first();
        }
        self.after_seek(None);
    }

    /// Positions at the last key of the range.
    pub fn seek_to_last(&mut self) {
        self.renew_if_tailing();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_to_last();
        }
        self.after_seek(None);
    }

    /// Positions at the first key `>= key`.
    pub fn seek<K: AsRef<[u8]>>(&mut self, key: K) {
        self.renew_if_tailing();
        let key = key.as_ref();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek(key);
        }
        self.after_seek(Some(key));
    }

    /// Positions at the last key `<= key`.
    pub fn seek_for_prev<K: AsRef<[u8]>>(&mut self, key: K) {
        self.renew_if_tailing();
        let key = key.as_ref();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_for_prev(key);
        }
        self.after_seek(Some(key));
    }

    /// Moves to the next key; does nothing if the iterator is not valid.
    #[inline]
    pub fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if !self.renew_at_current_key(OverlayCursor::seek)
            && let Ok(cursor) = &mut self.cursor
        {
            cursor.forward();
        }
        self.check_prefix();
        self.count_move(Ticker::NumberDbNext, Ticker::NumberDbNextFound);
    }

    /// Moves to the previous key; does nothing if the iterator is not valid.
    #[inline]
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if !self.renew_at_current_key(OverlayCursor::seek_for_prev)
            && let Ok(cursor) = &mut self.cursor
        {
            cursor.backward();
        }
        self.check_prefix();
        self.count_move(Ticker::NumberDbPrev, Ticker::NumberDbPrevFound);
    }

    /// Counts a seek or step in the statistics, if enabled: the move, and
    /// whether it found an entry and that entry's bytes.
    #[inline]
    fn count_move(&self, moved: Ticker, found: Ticker) {
        if let Some(stats) = self.source.db.core().statistics() {
            self.count_move_in(stats, moved, found);
        }
    }

    /// [`Self::count_move`] with statistics enabled.
    #[cold]
    fn count_move_in(&self, stats: &Statistics, moved: Ticker, found: Ticker) {
        stats.add(moved, 1);
        if let Some((key, value)) = self.item() {
            stats.add(found, 1);
            stats.add(Ticker::IterBytesRead, (key.len() + value.len()) as u64);
        }
    }

    /// The current key, if the iterator is valid.
    #[inline]
    pub fn key(&self) -> Option<&[u8]> {
        if self.left_prefix {
            return None;
        }
        self.cursor.as_ref().ok()?.key()
    }

    /// The current value, if the iterator is valid.
    #[inline]
    pub fn value(&self) -> Option<&[u8]> {
        if self.left_prefix {
            return None;
        }
        self.cursor.as_ref().ok()?.value()
    }

    /// The current key and value, if the iterator is valid.
    #[inline]
    pub fn item(&self) -> Option<(&[u8], &[u8])> {
        if self.left_prefix {
            return None;
        }
        self.cursor.as_ref().ok()?.item()
    }

    /// After a seek: sets the prefix to stay within (the seek key's prefix,
    /// or for `seek_to_first`/`seek_to_last` the prefix of the key found)
    /// and counts the seek.
    fn after_seek(&mut self, target: Option<&[u8]>) {
        self.set_prefix(target);
        self.count_move(Ticker::NumberDbSeek, Ticker::NumberDbSeekFound);
    }

    /// The prefix part of [`Self::after_seek`].
    fn set_prefix(&mut self, target: Option<&[u8]>) {
        self.left_prefix = false;
        let Some(extractor) = &self.prefix_extractor else {
            return;
        };
        let target = match target {
            Some(target) => target,
            None => match self.cursor.as_ref().ok().and_then(OverlayCursor::item) {
                Some((key, _)) => key,
                None => return,
            },
        };
        self.prefix = Some(extractor.prefix(target).unwrap_or(target).to_vec());
        self.check_prefix();
    }

    /// Invalidates the iterator if the current key has left the prefix.
    #[inline]
    fn check_prefix(&mut self) {
        if self.prefix_extractor.is_some() {
            self.check_prefix_with_extractor();
        }
    }

    /// [`Self::check_prefix`] with a prefix extractor.
    #[cold]
    fn check_prefix_with_extractor(&mut self) {
        let (Some(extractor), Some(prefix)) = (&self.prefix_extractor, &self.prefix) else {
            return;
        };
        if let Some((key, _)) = self.cursor.as_ref().ok().and_then(OverlayCursor::item) {
            self.left_prefix = extractor.prefix(key) != Some(prefix.as_slice());
        }
    }
}

/// An iterator of a [`DB`].
pub type DBIterator<'a> = DBIteratorWithThreadMode<'a, DB>;

/// An iterator over the key-value pairs of a column family, in the
/// direction its [`IteratorMode`] gives: `Start` forward from the first key,
/// `End` in reverse from the last key, `From(key, Forward)` from the first
/// key `>= key`, `From(key, Reverse)` from the last key `<= key`.
///
/// Items are `Result<(Box<[u8]>, Box<[u8]>), Error>`; once it has returned
/// `None` (or an error) it keeps returning `None`, until
/// [`set_mode`](Self::set_mode) repositions it.
pub struct DBIteratorWithThreadMode<'a, D: DBAccess> {
    raw: DBRawIteratorWithThreadMode<'a, D>,
    direction: Direction,
    done: bool,
}

impl<'a, D: DBAccess> DBIteratorWithThreadMode<'a, D> {
    pub(crate) fn new(db: &'a D, readopts: ReadOptions, mode: IteratorMode) -> Self {
        Self::from_raw(DBRawIteratorWithThreadMode::new(db, readopts), mode)
    }

    pub(crate) fn new_cf(db: &'a D, cf: u32, readopts: ReadOptions, mode: IteratorMode) -> Self {
        Self::from_raw(DBRawIteratorWithThreadMode::new_cf(db, cf, readopts), mode)
    }

    /// An iterator over column family `cf` with `total_order_seek` set.
    pub(crate) fn total_order(db: &'a D, cf: u32, mode: IteratorMode) -> Self {
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        Self::new_cf(db, cf, opts, mode)
    }

    /// An iterator forward from `prefix` over column family `cf` with
    /// `prefix_same_as_start` set: it stops when the prefix under the
    /// prefix extractor changes, and scans to the end when there is none.
    pub(crate) fn within_prefix(db: &'a D, cf: u32, prefix: &[u8]) -> Self {
        let mut opts = ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        Self::new_cf(db, cf, opts, IteratorMode::From(prefix, Direction::Forward))
    }

    fn from_raw(raw: DBRawIteratorWithThreadMode<'a, D>, mode: IteratorMode) -> Self {
        let mut iter = Self {
            raw,
            direction: Direction::Forward,
            done: false,
        };
        iter.set_mode(mode);
        iter
    }

    /// Repositions the iterator as `mode` says and resumes iteration.
    pub fn set_mode(&mut self, mode: IteratorMode) {
        self.done = false;
        self.direction = match mode {
            IteratorMode::Start => {
                self.raw.seek_to_first();
                Direction::Forward
            }
            IteratorMode::End => {
                self.raw.seek_to_last();
                Direction::Reverse
            }
            IteratorMode::From(key, Direction::Forward) => {
                self.raw.seek(key);
                Direction::Forward
            }
            IteratorMode::From(key, Direction::Reverse) => {
                self.raw.seek_for_prev(key);
                Direction::Reverse
            }
        };
    }

    /// Whether the underlying raw iterator is on an entry.
    pub fn valid(&self) -> bool {
        self.raw.valid()
    }

    /// Moves to the latest state of the database (see
    /// [`DBRawIteratorWithThreadMode::refresh`]), then repositions as
    /// `mode` says.
    pub fn refresh(&mut self, mode: IteratorMode) -> Result<(), Error> {
        self.raw.refresh()?;
        self.set_mode(mode);
        Ok(())
    }
}

impl<D: DBAccess> Iterator for DBIteratorWithThreadMode<'_, D> {
    type Item = Result<(Box<[u8]>, Box<[u8]>), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some((key, value)) = self.raw.item() {
            let item = (Box::from(key), Box::from(value));
            match self.direction {
                Direction::Forward => self.raw.next(),
                Direction::Reverse => self.raw.prev(),
            }
            return Some(Ok(item));
        }
        self.done = true;
        self.raw.status().err().map(Err)
    }
}

impl<D: DBAccess> FusedIterator for DBIteratorWithThreadMode<'_, D> {}

impl<'a, D: DBAccess> From<DBIteratorWithThreadMode<'a, D>> for DBRawIteratorWithThreadMode<'a, D> {
    fn from(iter: DBIteratorWithThreadMode<'a, D>) -> Self {
        iter.raw
    }
}
