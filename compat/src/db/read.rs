//! Point reads, multi-reads, iterators and snapshots.

use super::{DBAccess, DBCommon, DBInner, ThreadMode};
use crate::cslice::CSlice;
use crate::{AsColumnFamilyRef, DBPinnableSlice, Error, ReadOptions, SnapshotWithThreadMode};

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
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        self.core().multi_get_pinned(cf.cf_id(), &keys, readopts)
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

    /// Whether `key` may exist in column family `cf`, with its value when
    /// it does: AlexDB answers exactly, so the result is `(false, None)` or
    /// `(true, Some(value))` (or `(true, None)` if the read failed).
    pub fn key_may_exist_cf_opt_value<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> (bool, Option<CSlice>) {
        match self.core().get_copied(cf.cf_id(), key.as_ref(), readopts) {
            Ok(Some(value)) => (true, Some(CSlice::new(value))),
            Ok(None) => (false, None),
            Err(_) => (true, None),
        }
    }

    crate::db::iterator_methods::iterator_methods!();

    /// Takes a snapshot: a frozen view of every column family.
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }
}
