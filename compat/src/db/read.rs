//! Point reads, multi-reads, iterators and snapshots.

use super::{DBAccess, DBCommon, DBInner, ThreadMode};
use crate::{
    AsColumnFamilyRef, DBIteratorWithThreadMode, DBPinnableSlice, DBRawIteratorWithThreadMode,
    Direction, Error, IteratorMode, ReadOptions, SnapshotWithThreadMode,
};

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Reads `key` from the default column family.
    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>, Error> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// Reads `key` from the default column family, with read options
    /// (their snapshot, if any, is honoured).
    pub fn get_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        DBAccess::get_opt(self, key, readopts)
    }

    /// Reads `key` from column family `cf`.
    pub fn get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// Reads `key` from column family `cf`, with read options.
    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        DBAccess::get_cf_opt(self, cf, key, readopts)
    }

    /// Reads `key` from the default column family without copying it.
    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// Reads `key` from the default column family without copying it, with read options.
    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        DBAccess::get_pinned_opt(self, key, readopts)
    }

    /// Reads `key` from column family `cf` without copying it.
    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_cf_opt(cf, key, &ReadOptions::default())
    }

    /// Reads `key` from column family `cf` without copying it, with read options.
    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        DBAccess::get_pinned_cf_opt(self, cf, key, readopts)
    }

    /// Reads several keys of the default column family, in order.
    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// Reads several keys of the default column family, with read options.
    pub fn multi_get_opt<K, I>(
        &self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        DBAccess::multi_get_opt(self, keys, readopts)
    }

    /// Reads several keys, each from its own column family.
    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(
        &'a self,
        keys: I,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        self.multi_get_cf_opt(keys, &ReadOptions::default())
    }

    /// Reads several keys, each from its own column family, with read options.
    pub fn multi_get_cf_opt<'a, 'b: 'a, K, I, W>(
        &'a self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        DBAccess::multi_get_cf_opt(self, keys, readopts)
    }

    /// Reads several keys of column family `cf` without copying them.
    pub fn batched_multi_get_cf<K, I>(
        &self,
        cf: &impl AsColumnFamilyRef,
        keys: I,
        sorted_input: bool,
    ) -> Vec<Result<Option<DBPinnableSlice<'_>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.batched_multi_get_cf_opt(cf, keys, sorted_input, &ReadOptions::default())
    }

    /// Reads several keys of column family `cf` without copying them, with
    /// read options. `sorted_input` is only a hint and is ignored.
    pub fn batched_multi_get_cf_opt<K, I>(
        &self,
        cf: &impl AsColumnFamilyRef,
        keys: I,
        _sorted_input: bool,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<DBPinnableSlice<'_>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        let core = self.core();
        let readopts = core.at_one_point(readopts);
        keys.into_iter()
            .map(|key| {
                let value = core.get(cf.cf_id(), key.as_ref(), &readopts)?;
                Ok(value.map(DBPinnableSlice::new))
            })
            .collect()
    }

    /// Whether `key` may exist in the default column family. AlexDB answers
    /// exactly: `false` means absent, `true` present.
    pub fn key_may_exist<K: AsRef<[u8]>>(&self, key: K) -> bool {
        self.key_may_exist_opt(key, &ReadOptions::default())
    }

    /// [`Self::key_may_exist`] with read options.
    pub fn key_may_exist_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> bool {
        !matches!(self.core().contains(0, key.as_ref(), readopts), Ok(false))
    }

    /// Whether `key` may exist in column family `cf` (answered exactly).
    pub fn key_may_exist_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> bool {
        self.key_may_exist_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`Self::key_may_exist_cf`] with read options.
    pub fn key_may_exist_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> bool {
        !matches!(
            self.core().contains(cf.cf_id(), key.as_ref(), readopts),
            Ok(false)
        )
    }

    /// An iterator over the default column family.
    pub fn iterator<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    /// An iterator over the default column family, with read options.
    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self, readopts, mode)
    }

    /// An iterator over column family `cf`, with read options (note the
    /// argument order, as in rocksdb).
    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new_cf(self, cf_handle.cf_id(), readopts, mode)
    }

    /// An iterator with `total_order_seek` set (AlexDB always iterates in
    /// total order).
    pub fn full_iterator<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        self.iterator_opt(mode, opts)
    }

    /// An iterator forward from `prefix` with `prefix_same_as_start` set: it
    /// stops when the prefix under the prefix extractor changes, and scans
    /// to the end when there is no prefix extractor, as in rocksdb.
    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut opts = ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        let mode = IteratorMode::From(prefix.as_ref(), Direction::Forward);
        self.iterator_opt(mode, opts)
    }

    /// An iterator over column family `cf`.
    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_cf_opt(cf_handle, ReadOptions::default(), mode)
    }

    /// [`Self::full_iterator`] over column family `cf`.
    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut opts = ReadOptions::default();
        opts.set_total_order_seek(true);
        self.iterator_cf_opt(cf_handle, opts, mode)
    }

    /// [`Self::prefix_iterator`] over column family `cf`.
    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        let mut opts = ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        let mode = IteratorMode::From(prefix.as_ref(), Direction::Forward);
        self.iterator_cf_opt(cf_handle, opts, mode)
    }

    /// A raw iterator over the default column family (not yet positioned).
    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    /// A raw iterator over column family `cf`.
    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_cf_opt(cf_handle, ReadOptions::default())
    }

    /// A raw iterator over the default column family, with read options.
    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        DBRawIteratorWithThreadMode::new(self, readopts)
    }

    /// A raw iterator over column family `cf`, with read options.
    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        DBRawIteratorWithThreadMode::new_cf(self, cf_handle.cf_id(), readopts)
    }

    /// Takes a snapshot: a frozen view of every column family.
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }
}
