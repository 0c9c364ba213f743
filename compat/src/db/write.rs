//! Puts, deletes, range deletes and batches.
//!
//! Every write becomes one atomic engine batch. `WriteOptions::set_sync`
//! makes the call return only once the write is on stable storage;
//! `disable_wal` is accepted, but AlexDB's log *is* its storage, so every
//! write is still logged (and survives a process crash).

use super::{DBCommon, DBInner, DBWithThreadMode, ThreadMode};
use crate::{AsColumnFamilyRef, Error, WriteBatch, WriteBatchWithIndex, WriteOptions};

/// The default column family's id.
const DEFAULT_CF: u32 = 0;

/// One single-key write.
enum Single<'k> {
    Put(&'k [u8], &'k [u8]),
    Delete(&'k [u8]),
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    fn write_single(&self, cf: u32, op: Single<'_>, writeopts: &WriteOptions) -> Result<(), Error> {
        self.core().check_no_timestamps(cf)?;
        let (key, value) = match op {
            Single::Put(key, value) => (key, Some(value)),
            Single::Delete(key) => (key, None),
        };
        self.core().write_one(cf, key, value, writeopts)
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put<K, V>(&self, key: K, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// [`Self::put`] with write options.
    pub fn put_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let op = Single::Put(key.as_ref(), value.as_ref());
        self.write_single(DEFAULT_CF, op, writeopts)
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.put_cf_opt(cf, key, value, &WriteOptions::default())
    }

    /// [`Self::put_cf`] with write options.
    pub fn put_cf_opt<K, V>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let op = Single::Put(key.as_ref(), value.as_ref());
        self.write_single(cf.cf_id(), op, writeopts)
    }

    /// Removes `key` from the default column family (not an error if absent).
    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<(), Error> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// [`Self::delete`] with write options.
    pub fn delete_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.write_single(DEFAULT_CF, Single::Delete(key.as_ref()), writeopts)
    }

    /// Removes `key` from column family `cf`.
    pub fn delete_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<(), Error> {
        self.delete_cf_opt(cf, key, &WriteOptions::default())
    }

    /// [`Self::delete_cf`] with write options.
    pub fn delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.write_single(cf.cf_id(), Single::Delete(key.as_ref()), writeopts)
    }

    /// Removes `key`, which was put at most once since its last deletion.
    /// AlexDB treats it as a plain delete.
    pub fn single_delete<K: AsRef<[u8]>>(&self, key: K) -> Result<(), Error> {
        self.delete(key)
    }

    /// [`Self::single_delete`] with write options.
    pub fn single_delete_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.delete_opt(key, writeopts)
    }

    /// [`Self::single_delete`] in column family `cf`.
    pub fn single_delete_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<(), Error> {
        self.delete_cf(cf, key)
    }

    /// [`Self::single_delete_cf`] with write options.
    pub fn single_delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.delete_cf_opt(cf, key, writeopts)
    }

    /// Merges `value` into `key` with the default column family's merge
    /// operator. Without one, fails as RocksDB does (`Not implemented:
    /// Provide a merge_operator when opening DB`) and writes nothing.
    ///
    /// AlexDB applies the operator's full merge when the operand is written
    /// (the stored record keeps the operand and the result), so reads cost
    /// what a put's do. A merge the operator refuses still succeeds; reads
    /// of the key then fail with `Corruption: Merge operator failed` until
    /// it is put or deleted, as in RocksDB.
    pub fn merge<K, V>(&self, key: K, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.merge_opt(key, value, &WriteOptions::default())
    }

    /// [`Self::merge`] with write options.
    pub fn merge_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.core().check_no_timestamps(0)?;
        self.core().check_merge_operator(0)?;
        let mut batch = WriteBatch::default();
        batch.merge(key, value);
        self.core().write(&batch, writeopts)
    }

    /// [`Self::merge`] into column family `cf`, with its merge operator.
    pub fn merge_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.merge_cf_opt(cf, key, value, &WriteOptions::default())
    }

    /// [`Self::merge_cf`] with write options.
    pub fn merge_cf_opt<K, V>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.core().check_no_timestamps(cf.cf_id())?;
        self.core().check_merge_operator(cf.cf_id())?;
        let mut batch = WriteBatch::default();
        batch.merge_cf(cf, key, value);
        self.core().write(&batch, writeopts)
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Removes the keys in `[from, to)` from column family `cf`, with write options.
    pub fn delete_range_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.core()
            .delete_range(cf.cf_id(), from.as_ref(), to.as_ref(), writeopts)
    }

    /// Removes the keys in `[from, to)` from column family `cf`.
    pub fn delete_range_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
    ) -> Result<(), Error> {
        self.delete_range_cf_opt(cf, from, to, &WriteOptions::default())
    }

    /// Applies `batch` atomically, with write options.
    pub fn write_opt(&self, batch: WriteBatch, writeopts: &WriteOptions) -> Result<(), Error> {
        self.core().write(&batch, writeopts)
    }

    /// Applies `batch` atomically: readers and recovery see all of it or none.
    pub fn write(&self, batch: WriteBatch) -> Result<(), Error> {
        self.write_opt(batch, &WriteOptions::default())
    }

    /// Applies the writes of `wbwi` atomically (it stays as it was).
    pub fn write_wbwi(&self, wbwi: &WriteBatchWithIndex) -> Result<(), Error> {
        self.write_wbwi_opt(wbwi, &WriteOptions::default())
    }

    /// [`Self::write_wbwi`] with write options.
    pub fn write_wbwi_opt(
        &self,
        wbwi: &WriteBatchWithIndex,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.core().write(wbwi.batch(), writeopts)
    }

    /// Applies `batch` with `disable_wal` set (AlexDB still logs it).
    pub fn write_without_wal(&self, batch: WriteBatch) -> Result<(), Error> {
        let mut writeopts = WriteOptions::new();
        writeopts.disable_wal(true);
        self.write_opt(batch, &writeopts)
    }
}
