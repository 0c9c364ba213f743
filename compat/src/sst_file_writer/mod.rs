//! [`SstFileWriter`]: writes a sorted external file for
//! `DB::ingest_external_file*`, as rocksdb's.
//!
//! The file is in AlexDB's own format (see `format.rs`). Entries are kept
//! in memory until [`SstFileWriter::finish`] writes the file whole and
//! fsyncs it; point keys must come in strictly ascending order by the
//! options' comparator (bytewise by default), as RocksDB requires. With a
//! timestamp-aware comparator each key is stored followed by its
//! timestamp, as RocksDB does, and ingestion adds each as a version.

mod format;

use std::fs;
use std::io::Write as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::comparator::Comparator;
use crate::{Error, Options};

pub(crate) use self::format::{Entry, EntryKind, decode};

/// The file being written: where, and what it holds so far.
#[derive(Debug, Default)]
struct Pending {
    path: Option<PathBuf>,
    body: Vec<u8>,
    count: u64,
    last_key: Option<Vec<u8>>,
    file_size: u64,
}

/// Writes an external file of sorted entries for ingestion.
pub struct SstFileWriter<'a> {
    pending: Mutex<Pending>,
    /// The key order of the options, if not bytewise.
    comparator: Option<Comparator>,
    _opts: PhantomData<&'a Options>,
}

impl<'a> SstFileWriter<'a> {
    /// A writer for files ingested into databases with `opts`.
    pub fn create(opts: &'a Options) -> Self {
        Self {
            pending: Mutex::new(Pending::default()),
            comparator: opts.comparator.clone(),
            _opts: PhantomData,
        }
    }

    /// Starts a new file at `path` (created now, written by `finish`).
    pub fn open<P: AsRef<Path>>(&'a self, path: P) -> Result<(), Error> {
        let path = path.as_ref();
        fs::File::create(path).map_err(|e| io_error(path, &e))?;
        *self.state() = Pending {
            path: Some(path.to_path_buf()),
            body: format::header(),
            ..Pending::default()
        };
        Ok(())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the file and syncs it. Fails if nothing was added, as in
    /// RocksDB.
    pub fn finish(&mut self) -> Result<(), Error> {
        let mut state = self.state();
        let path = state
            .path
            .clone()
            .ok_or_else(|| Error::invalid_argument("File is not opened"))?;
        if state.count == 0 {
            return Err(Error::invalid_argument(
                "Cannot create sst file with no entries",
            ));
        }
        let count = state.count;
        format::append_trailer(&mut state.body, count);
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&path)?;
            file.write_all(&state.body)?;
            file.sync_all()
        };
        write().map_err(|e| io_error(&path, &e))?;
        let size = state.body.len() as u64;
        *state = Pending {
            file_size: size,
            ..Pending::default()
        };
        Ok(())
    }

    /// The size of the file written by the last `finish` (0 before).
    pub fn file_size(&self) -> u64 {
        self.state().file_size
    }

    /// Adds `key` set to `value`; keys must be strictly ascending.
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<(), Error> {
        self.add_point(EntryKind::Put, key.as_ref(), &[], value.as_ref())
    }

    /// Adds a merge operand for `key`; keys must be strictly ascending.
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<(), Error> {
        self.add_point(EntryKind::Merge, key.as_ref(), &[], value.as_ref())
    }

    /// Adds a deletion of `key`; keys must be strictly ascending.
    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) -> Result<(), Error> {
        self.add_point(EntryKind::Delete, key.as_ref(), &[], &[])
    }

    /// Adds a deletion of the keys in `[begin_key, end_key)`; fails with
    /// `Invalid argument` if `end_key` sorts before `begin_key`.
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, begin_key: K, end_key: K) -> Result<(), Error> {
        let (begin, end) = (begin_key.as_ref(), end_key.as_ref());
        self.check_timestamp_size(&[])?;
        if begin > end {
            return Err(Error::invalid_argument("end key comes before start key"));
        }
        self.add(EntryKind::DeleteRange, begin, end)
    }

    /// Adds `key` at timestamp `ts` set to `value`, for options whose
    /// comparator has timestamps of `ts`'s size (else `Invalid argument:
    /// Timestamp size mismatch`); (key, timestamp) pairs must be strictly
    /// ascending by the comparator.
    pub fn put_with_ts<K, V, S>(&mut self, key: K, ts: S, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        self.add_point(EntryKind::Put, key.as_ref(), ts.as_ref(), value.as_ref())
    }

    /// Adds a deletion of `key` at timestamp `ts`; see
    /// [`Self::put_with_ts`].
    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        key: K,
        ts: S,
    ) -> Result<(), Error> {
        self.add_point(EntryKind::Delete, key.as_ref(), ts.as_ref(), &[])
    }

    /// Fails unless `ts` has the size of the comparator's timestamps (none
    /// for a comparator without them).
    fn check_timestamp_size(&self, ts: &[u8]) -> Result<(), Error> {
        let size = self.comparator.as_ref().map_or(0, |c| c.timestamp_size);
        if ts.len() != size {
            return Err(Error::invalid_argument("Timestamp size mismatch"));
        }
        Ok(())
    }

    /// Adds a point entry (its key followed by its timestamp, if any, as
    /// RocksDB stores it), checking the key order.
    fn add_point(
        &mut self,
        kind: EntryKind,
        key: &[u8],
        ts: &[u8],
        value: &[u8],
    ) -> Result<(), Error> {
        self.check_timestamp_size(ts)?;
        let key = &[key, ts].concat();
        {
            let comparator = self.comparator.clone();
            let ascending = |last: &[u8]| match &comparator {
                Some(c) => c.compare(key, last) == std::cmp::Ordering::Greater,
                None => key.as_slice() > last,
            };
            let mut state = self.state();
            if state
                .last_key
                .as_deref()
                .is_some_and(|last| !ascending(last))
            {
                return Err(Error::invalid_argument(
                    "Keys must be added in strict ascending order.",
                ));
            }
            state.last_key = Some(key.to_vec());
        }
        self.add(kind, key, value)
    }

    /// Appends an entry to the open file's body.
    fn add(&mut self, kind: EntryKind, key: &[u8], value: &[u8]) -> Result<(), Error> {
        let mut state = self.state();
        if state.path.is_none() {
            return Err(Error::invalid_argument("File is not opened"));
        }
        format::append_entry(&mut state.body, Entry { kind, key, value })?;
        state.count += 1;
        Ok(())
    }
}

/// RocksDB's `IO error: ` status for `path`.
fn io_error(path: &Path, err: &std::io::Error) -> Error {
    Error::io(format_args!("{}: {err}", path.display()))
}
