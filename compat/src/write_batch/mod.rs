//! [`WriteBatch`]: an ordered list of writes applied atomically by
//! `DB::write`, kept in RocksDB's own serialized form so that
//! [`WriteBatchWithTransaction::data`] and
//! [`WriteBatchWithTransaction::from_data`] exchange bytes with real RocksDB.

mod key_index;
mod rep;

use crate::column_family::AsColumnFamilyRef;

pub(crate) use key_index::KeyIndex;
pub use key_index::PendingWrite;
#[allow(unused_imports, reason = "the DB layer applies batches through these")]
pub(crate) use rep::{BatchOp, Ops, decode_all, single_record_rep_len};
use rep::{BatchOp as Op, tag};

/// The batch type of `DB` and `OptimisticTransactionDB`/`TransactionDB`
/// writes outside a transaction.
pub type WriteBatch = WriteBatchWithTransaction<false>;

/// An atomic batch of writes.
///
/// `TRANSACTION` is `true` for batches built for a transaction database;
/// those do not offer range deletion, as in RocksDB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatchWithTransaction<const TRANSACTION: bool> {
    rep: Vec<u8>,
    /// The column families written through a handle without a timestamp
    /// (RocksDB marks such a batch, and a write of it into a column family
    /// with user timestamps fails).
    untimed: Vec<u32>,
}

/// Receives the puts and deletes of a batch from
/// [`WriteBatchWithTransaction::iterate`].
pub trait WriteBatchIterator {
    /// Called for a key and value put into the default column family.
    fn put(&mut self, key: &[u8], value: &[u8]);
    /// Called for a key deleted from the default column family.
    fn delete(&mut self, key: &[u8]);
}

/// Receives the puts, deletes and merges of a batch, with their column
/// family ids, from [`WriteBatchWithTransaction::iterate_cf`]. The default
/// column family has id 0.
pub trait WriteBatchIteratorCf {
    /// Called for a key and value put into column family `cf_id`.
    fn put_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]);
    /// Called for a key deleted from column family `cf_id`.
    fn delete_cf(&mut self, cf_id: u32, key: &[u8]);
    /// Called for a merge operand added to a key of column family `cf_id`.
    fn merge_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]);
}

/// Tag pairs (default column family, other column family) of each record kind.
const PUT: (u8, u8) = (tag::VALUE, tag::CF_VALUE);
const DELETE: (u8, u8) = (tag::DELETION, tag::CF_DELETION);
const SINGLE_DELETE: (u8, u8) = (tag::SINGLE_DELETION, tag::CF_SINGLE_DELETION);
const MERGE: (u8, u8) = (tag::MERGE, tag::CF_MERGE);
const DELETE_RANGE: (u8, u8) = (tag::RANGE_DELETION, tag::CF_RANGE_DELETION);
const LOG_DATA: (u8, u8) = (tag::LOG_DATA, tag::LOG_DATA);

/// The default column family's id.
const DEFAULT_CF: u32 = crate::column_family::DEFAULT_COLUMN_FAMILY_ID;

/// Joins a key and its user timestamp, as RocksDB stores timestamped keys.
fn with_ts(key: &[u8], ts: &[u8]) -> Vec<u8> {
    [key, ts].concat()
}

impl<const TRANSACTION: bool> WriteBatchWithTransaction<TRANSACTION> {
    /// Creates an empty batch.
    pub fn new() -> Self {
        Self::with_capacity_bytes(0)
    }

    /// Creates an empty batch with room for `capacity_bytes` of serialized data.
    pub fn with_capacity_bytes(capacity_bytes: usize) -> Self {
        Self {
            rep: rep::empty_rep(capacity_bytes),
            untimed: Vec::new(),
        }
    }

    /// Creates a batch from bytes produced by [`Self::data`] (by AlexDB or by
    /// RocksDB). The bytes are taken as they are; a malformed batch is
    /// reported when it is written or iterated.
    pub fn from_data(data: &[u8]) -> Self {
        Self {
            rep: data.to_vec(),
            untimed: Vec::new(),
        }
    }

    /// The number of counted writes (puts, deletes, merges, range deletes).
    pub fn len(&self) -> usize {
        rep::count(&self.rep) as usize
    }

    /// The size of the serialized batch in bytes (12 for an empty batch).
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len()
    }

    /// The serialized batch, in RocksDB's `WriteBatch` format.
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    /// Whether the batch holds no counted writes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `callbacks` for the puts and deletes of the batch, in order, the
    /// way RocksDB's C API does: only default-column-family puts and deletes
    /// are reported; default-column-family merges, single deletes and log
    /// data are skipped; and iteration stops silently at the first write to
    /// another column family or at any range delete.
    pub fn iterate<T: WriteBatchIterator + ?Sized>(&self, callbacks: &mut T) {
        for op in Ops::new(&self.rep) {
            match op {
                Ok(Op::Put {
                    cf: DEFAULT_CF,
                    key,
                    value,
                }) => callbacks.put(key, value),
                Ok(Op::Delete {
                    cf: DEFAULT_CF,
                    key,
                }) => callbacks.delete(key),
                Ok(
                    Op::Merge { cf: DEFAULT_CF, .. }
                    | Op::SingleDelete { cf: DEFAULT_CF, .. }
                    | Op::LogData(_)
                    | Op::Noop,
                ) => {}
                Ok(_) | Err(_) => return,
            }
        }
    }

    /// Calls `callbacks` for the puts, deletes and merges of every column
    /// family, in order. As in RocksDB, log data and default-column-family
    /// single deletes are skipped, and iteration stops silently at a range
    /// delete or at a single delete on another column family.
    pub fn iterate_cf<T: WriteBatchIteratorCf + ?Sized>(&self, callbacks: &mut T) {
        for op in Ops::new(&self.rep) {
            match op {
                Ok(Op::Put { cf, key, value }) => callbacks.put_cf(cf, key, value),
                Ok(Op::Delete { cf, key }) => callbacks.delete_cf(cf, key),
                Ok(Op::Merge { cf, key, value }) => callbacks.merge_cf(cf, key, value),
                Ok(Op::SingleDelete { cf: DEFAULT_CF, .. } | Op::LogData(_) | Op::Noop) => {}
                Ok(_) | Err(_) => return,
            }
        }
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.append(PUT, DEFAULT_CF, &[key.as_ref(), value.as_ref()]);
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) {
        self.append_untimed(PUT, cf.cf_id(), &[key.as_ref(), value.as_ref()]);
    }

    /// Sets `key` at timestamp `ts` to `value` in column family `cf` (the
    /// timestamp is appended to the key, as RocksDB stores it).
    pub fn put_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) {
        let key = with_ts(key.as_ref(), ts.as_ref());
        self.append(PUT, cf.cf_id(), &[&key, value.as_ref()]);
    }

    /// Adds the merge operand `value` for `key` in the default column family.
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.append(MERGE, DEFAULT_CF, &[key.as_ref(), value.as_ref()]);
    }

    /// Adds the merge operand `value` for `key` in column family `cf`.
    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) {
        self.append_untimed(MERGE, cf.cf_id(), &[key.as_ref(), value.as_ref()]);
    }

    /// Removes `key` from the default column family (not an error if absent).
    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.append(DELETE, DEFAULT_CF, &[key.as_ref()]);
    }

    /// Removes `key` from column family `cf` (not an error if absent).
    pub fn delete_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K) {
        self.append_untimed(DELETE, cf.cf_id(), &[key.as_ref()]);
    }

    /// Removes `key` at timestamp `ts` from column family `cf`.
    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) {
        let key = with_ts(key.as_ref(), ts.as_ref());
        self.append(DELETE, cf.cf_id(), &[&key]);
    }

    /// Removes `key` from the default column family, for keys put at most
    /// once since their last deletion (RocksDB's single delete). AlexDB
    /// applies it as a delete, which gives the same result whenever that
    /// contract holds.
    pub fn single_delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.append(SINGLE_DELETE, DEFAULT_CF, &[key.as_ref()]);
    }

    /// [`Self::single_delete`] in column family `cf`.
    pub fn single_delete_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K) {
        self.append_untimed(SINGLE_DELETE, cf.cf_id(), &[key.as_ref()]);
    }

    /// Removes `key` at timestamp `ts` from column family `cf`, for keys put
    /// at most once since their last deletion.
    pub fn singledelete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) {
        let key = with_ts(key.as_ref(), ts.as_ref());
        self.append(SINGLE_DELETE, cf.cf_id(), &[&key]);
    }

    /// Appends a blob that goes to the write-ahead log only: it changes no
    /// data and is not counted by [`Self::len`].
    pub fn put_log_data<V: AsRef<[u8]>>(&mut self, log_data: V) {
        self.append(LOG_DATA, DEFAULT_CF, &[log_data.as_ref()]);
    }

    /// Removes every write from the batch.
    pub fn clear(&mut self) {
        self.rep.clear();
        rep::ensure_header(&mut self.rep);
        self.untimed.clear();
    }

    /// Sets `key` to `value` in the column family with id `cf`.
    pub(crate) fn put_in(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.append(PUT, cf, &[key, value]);
    }

    /// Deletes `key` from the column family with id `cf`.
    pub(crate) fn delete_in(&mut self, cf: u32, key: &[u8]) {
        self.append(DELETE, cf, &[key]);
    }

    /// Adds the merge operand `value` for `key` in the column family with id `cf`.
    pub(crate) fn merge_in(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.append(MERGE, cf, &[key, value]);
    }

    /// Where the batch ends now, for [`Self::truncate_to`].
    pub(crate) fn mark(&self) -> BatchMark {
        BatchMark {
            len: self.rep.len(),
            count: rep::count(&self.rep),
            untimed: self.untimed.len(),
        }
    }

    /// Drops every record appended after `mark` was taken.
    pub(crate) fn truncate_to(&mut self, mark: BatchMark) {
        self.rep.truncate(mark.len.max(rep::HEADER_LEN));
        rep::ensure_header(&mut self.rep);
        rep::set_count(&mut self.rep, mark.count);
        self.untimed.truncate(mark.untimed);
    }

    fn append(&mut self, tags: (u8, u8), cf: u32, operands: &[&[u8]]) {
        rep::append(&mut self.rep, tags, cf, operands);
    }

    /// [`Self::append`] for a write through a column family handle without
    /// a timestamp.
    fn append_untimed(&mut self, tags: (u8, u8), cf: u32, operands: &[&[u8]]) {
        self.untimed.push(cf);
        self.append(tags, cf, operands);
    }

    /// The column families written through a handle without a timestamp.
    pub(crate) fn untimed_families(&self) -> &[u32] {
        &self.untimed
    }

    /// The decoded records, in order.
    pub(crate) fn ops(&self) -> Ops<'_> {
        Ops::new(&self.rep)
    }

    /// The sequence number in the batch header.
    #[allow(
        dead_code,
        reason = "for get_updates_since and transactions, not implemented yet"
    )]
    pub(crate) fn sequence(&self) -> u64 {
        rep::sequence(&self.rep)
    }

    /// Adds a range delete of `[from, to)` to column family id `cf_id`.
    pub(crate) fn delete_range_in(&mut self, cf_id: u32, from: &[u8], to: &[u8]) {
        self.append(DELETE_RANGE, cf_id, &[from, to]);
    }

    /// Stores `sequence` in the batch header (as RocksDB does on write).
    pub(crate) fn set_sequence(&mut self, sequence: u64) {
        rep::ensure_header(&mut self.rep);
        rep::set_sequence(&mut self.rep, sequence);
    }
}

/// A position in a batch: its length and record count at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchMark {
    len: usize,
    count: u32,
    untimed: usize,
}

impl WriteBatchWithTransaction<false> {
    /// Removes the keys in `[from, to)` from the default column family.
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, from: K, to: K) {
        self.append(DELETE_RANGE, DEFAULT_CF, &[from.as_ref(), to.as_ref()]);
    }

    /// Removes the keys in `[from, to)` from column family `cf`.
    pub fn delete_range_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, from: K, to: K) {
        self.append_untimed(DELETE_RANGE, cf.cf_id(), &[from.as_ref(), to.as_ref()]);
    }

    /// Removes the keys in `[from, to)` at timestamp `ts` from column family `cf`.
    pub fn delete_range_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        ts: S,
    ) {
        let ts = ts.as_ref();
        let (from, to) = (with_ts(from.as_ref(), ts), with_ts(to.as_ref(), ts));
        self.append(DELETE_RANGE, cf.cf_id(), &[&from, &to]);
    }
}

impl<const TRANSACTION: bool> Default for WriteBatchWithTransaction<TRANSACTION> {
    fn default() -> Self {
        Self::new()
    }
}
