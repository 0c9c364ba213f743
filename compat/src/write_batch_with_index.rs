//! [`WriteBatchWithIndex`]: a write batch that can be read before it is
//! written: point reads from the batch alone or from the batch over a
//! database, and an iterator of the batch laid over a database iterator.
//!
//! rust-rocksdb 0.25 has no such type; this follows the API later
//! rust-rocksdb releases give it (`new(reserved_bytes, overwrite_key)`,
//! `get_from_batch`, `get_from_batch_and_db`, `iterator_with_base`,
//! `DB::write_wbwi`). Reads resolve the newest write of each key (as with
//! `overwrite_key = true`); a key with a merge operand in the batch reads as
//! `Not implemented` until merges are resolved on AlexDB's read path.

use crate::comparator::Comparator;
use crate::db::{DBAccess, DBCommon, DBInner, ThreadMode};
use crate::db_iterator::merge_unsupported;
use crate::write_batch::{BatchMark, KeyIndex, PendingWrite};
use crate::{
    AsColumnFamilyRef, DBRawIteratorWithThreadMode, Error, Options, ReadOptions, WriteBatch,
};

use crate::column_family::DEFAULT_COLUMN_FAMILY_ID as DEFAULT_CF;

/// A write batch with an index of its keys (see the module documentation).
#[derive(Debug, Default)]
pub struct WriteBatchWithIndex {
    batch: WriteBatch,
    index: KeyIndex,
    save_points: Vec<BatchMark>,
}

impl WriteBatchWithIndex {
    /// An empty batch with room for `reserved_bytes` of serialized data.
    /// `overwrite_key` is accepted; reads always see a key's newest write.
    pub fn new(reserved_bytes: usize, _overwrite_key: bool) -> Self {
        Self {
            batch: WriteBatch::with_capacity_bytes(reserved_bytes),
            ..Self::default()
        }
    }

    /// The number of writes in the batch.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether the batch holds no writes.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// The size of the serialized batch in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.batch.size_in_bytes()
    }

    /// The serialized batch, in RocksDB's `WriteBatch` format.
    pub fn data(&self) -> &[u8] {
        self.batch.data()
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.put_in(DEFAULT_CF, key.as_ref(), value.as_ref());
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) {
        self.put_in(cf.cf_id(), key.as_ref(), value.as_ref());
    }

    /// Adds the merge operand `value` for `key` in the default column family.
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.merge_in(DEFAULT_CF, key.as_ref(), value.as_ref());
    }

    /// Adds the merge operand `value` for `key` in column family `cf`.
    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) {
        self.merge_in(cf.cf_id(), key.as_ref(), value.as_ref());
    }

    /// Deletes `key` from the default column family.
    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.delete_in(DEFAULT_CF, key.as_ref());
    }

    /// Deletes `key` from column family `cf`.
    pub fn delete_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K) {
        self.delete_in(cf.cf_id(), key.as_ref());
    }

    /// Removes every write and save point.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.index.clear();
        self.save_points.clear();
    }

    /// Records the batch's state for [`Self::rollback_to_save_point`].
    pub fn set_save_point(&mut self) {
        self.save_points.push(self.batch.mark());
    }

    /// Undoes every write since the last save point and forgets it; fails
    /// with `NotFound` if there is none.
    pub fn rollback_to_save_point(&mut self) -> Result<(), Error> {
        let mark = self.save_points.pop().ok_or_else(|| Error::not_found(""))?;
        self.batch.truncate_to(mark);
        self.index.clear();
        for op in self.batch.ops().flatten() {
            self.index.record(&op);
        }
        Ok(())
    }

    /// The batch's own value of `key` in the default column family: `None`
    /// if the batch deletes it or does not write it.
    pub fn get_from_batch<K: AsRef<[u8]>>(
        &self,
        key: K,
        _options: &Options,
    ) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .own(DEFAULT_CF, key.as_ref(), None)
            .transpose()?
            .flatten())
    }

    /// [`Self::get_from_batch`] in column family `cf`.
    pub fn get_from_batch_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        _options: &Options,
    ) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .own(cf.cf_id(), key.as_ref(), None)
            .transpose()?
            .flatten())
    }

    /// The value of `key` in the default column family as the batch would
    /// leave it: the batch's own write if any, else `db`'s value (at the
    /// snapshot of `readopts`, if set).
    pub fn get_from_batch_and_db<T: ThreadMode, I: DBInner, K: AsRef<[u8]>>(
        &self,
        db: &DBCommon<T, I>,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read_through(db, DEFAULT_CF, key.as_ref(), readopts)
    }

    /// [`Self::get_from_batch_and_db`] in column family `cf`.
    pub fn get_from_batch_and_db_cf<T: ThreadMode, I: DBInner, K: AsRef<[u8]>>(
        &self,
        db: &DBCommon<T, I>,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read_through(db, cf.cf_id(), key.as_ref(), readopts)
    }

    /// `base_iterator` with the batch's writes to the default column family
    /// laid over it (they win; the batch's deletes hide keys). Seek it
    /// before use. It cannot outlive the batch.
    pub fn iterator_with_base<'a, D: DBAccess>(
        &'a self,
        base_iterator: DBRawIteratorWithThreadMode<'a, D>,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        base_iterator.lay_over(&self.index, DEFAULT_CF)
    }

    /// [`Self::iterator_with_base`] with the batch's writes to column family `cf`.
    pub fn iterator_with_base_cf<'a, D: DBAccess>(
        &'a self,
        base_iterator: DBRawIteratorWithThreadMode<'a, D>,
        cf: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        base_iterator.lay_over(&self.index, cf.cf_id())
    }

    /// The batch to write.
    pub(crate) fn batch(&self) -> &WriteBatch {
        &self.batch
    }

    fn put_in(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.batch.put_in(cf, key, value);
        self.index
            .insert(cf, key, PendingWrite::Put(value.to_vec()));
    }

    fn merge_in(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.batch.merge_in(cf, key, value);
        self.index.insert(cf, key, PendingWrite::Merge(None));
    }

    fn delete_in(&mut self, cf: u32, key: &[u8]) {
        self.batch.delete_in(cf, key);
        self.index.insert(cf, key, PendingWrite::Delete);
    }

    /// What the batch itself says about `key`: `None` if it does not write
    /// it, else its value (`Ok(None)` for a delete) or the merge error. In
    /// a column family ordered by a comparator (`order`), of any key it
    /// calls equal.
    fn own(
        &self,
        cf: u32,
        key: &[u8],
        order: Option<&Comparator>,
    ) -> Option<Result<Option<Vec<u8>>, Error>> {
        match self.index.get_in(cf, key, order)? {
            PendingWrite::Put(value) => Some(Ok(Some(value.clone()))),
            PendingWrite::Delete => Some(Ok(None)),
            PendingWrite::Merge(Some(value)) => Some(Ok(Some(value.clone()))),
            PendingWrite::Merge(None) => Some(Err(merge_unsupported())),
        }
    }

    fn read_through<T: ThreadMode, I: DBInner>(
        &self,
        db: &DBCommon<T, I>,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        let order = db.core().key_order(cf);
        match self.own(cf, key, order.as_ref()) {
            Some(answer) => answer,
            None => db.core().get_copied(cf, key, readopts),
        }
    }
}
