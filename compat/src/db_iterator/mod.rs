//! Iterators: [`DBRawIteratorWithThreadMode`], which mirrors RocksDB's
//! positioned iterator, and [`DBIteratorWithThreadMode`], a Rust
//! `Iterator` on top of it.
//!
//! Both wrap an engine cursor, which reads at the moment the iterator was
//! created (or at the snapshot set in its `ReadOptions`): an iterator never
//! sees writes made after its creation, however long it lives. Keys and
//! values are borrowed straight from the memory-mapped segments.

use std::iter::FusedIterator;
use std::marker::PhantomData;

mod overlay;

use overlay::OverlayCursor;
pub(crate) use overlay::merge_unsupported;

use crate::db::{DB, DBAccess};
use crate::slice_transform::SliceTransform;
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
    /// The read options' bounds, `[lower, upper)`.
    bounds: (Option<Vec<u8>>, Option<Vec<u8>>),
    db: PhantomData<&'a D>,
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
        let pending = db.pending_writes_internal(
            cf,
            readopts.iterate_lower_bound.as_deref(),
            readopts.iterate_upper_bound.as_deref(),
        );
        Self {
            cursor: core
                .cursor(cf, &readopts)
                .map(|cursor| OverlayCursor::new(cursor, pending)),
            prefix_extractor,
            prefix: None,
            left_prefix: false,
            bounds: (readopts.iterate_lower_bound, readopts.iterate_upper_bound),
            db: PhantomData,
        }
    }

    /// Lays the pending writes of column family `cf` in `index` over this
    /// iterator (they win over whatever it saw for the same key), within
    /// its bounds, and unpositions it.
    pub(crate) fn lay_over(mut self, index: &KeyIndex, cf: u32) -> Self {
        let (lower, upper) = (self.bounds.0.as_deref(), self.bounds.1.as_deref());
        let newer = index.range(cf, lower, upper);
        if let Ok(cursor) = &mut self.cursor {
            cursor.lay_over(newer);
        }
        self.left_prefix = false;
        self
    }

    /// Whether the iterator is on an entry. It is not after a move past
    /// either end of its range, or after an error (see [`Self::status`]).
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
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_to_first();
        }
        self.after_seek(None);
    }

    /// Positions at the last key of the range.
    pub fn seek_to_last(&mut self) {
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_to_last();
        }
        self.after_seek(None);
    }

    /// Positions at the first key `>= key`.
    pub fn seek<K: AsRef<[u8]>>(&mut self, key: K) {
        let key = key.as_ref();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek(key);
        }
        self.after_seek(Some(key));
    }

    /// Positions at the last key `<= key`.
    pub fn seek_for_prev<K: AsRef<[u8]>>(&mut self, key: K) {
        let key = key.as_ref();
        if let Ok(cursor) = &mut self.cursor {
            cursor.seek_for_prev(key);
        }
        self.after_seek(Some(key));
    }

    /// Moves to the next key; does nothing if the iterator is not valid.
    pub fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Ok(cursor) = &mut self.cursor {
            cursor.forward();
        }
        self.check_prefix();
    }

    /// Moves to the previous key; does nothing if the iterator is not valid.
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Ok(cursor) = &mut self.cursor {
            cursor.backward();
        }
        self.check_prefix();
    }

    /// The current key, if the iterator is valid.
    pub fn key(&self) -> Option<&[u8]> {
        self.item().map(|(key, _)| key)
    }

    /// The current value, if the iterator is valid.
    pub fn value(&self) -> Option<&[u8]> {
        self.item().map(|(_, value)| value)
    }

    /// The current key and value, if the iterator is valid.
    pub fn item(&self) -> Option<(&[u8], &[u8])> {
        if self.left_prefix {
            return None;
        }
        self.cursor.as_ref().ok()?.item()
    }

    /// Sets the prefix to stay within after a seek: the seek key's prefix,
    /// or for `seek_to_first`/`seek_to_last` the prefix of the key found.
    fn after_seek(&mut self, target: Option<&[u8]>) {
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
    fn check_prefix(&mut self) {
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
