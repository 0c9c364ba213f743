//! [`SnapshotWithThreadMode`]: a consistent, frozen view of a database.

use std::sync::Arc;

use crate::db::{DB, DBAccess};
use crate::{
    AsColumnFamilyRef, DBIteratorWithThreadMode, DBPinnableSlice, DBRawIteratorWithThreadMode,
    Error, IteratorMode, ReadOptions,
};

/// A snapshot of a [`DB`].
pub type Snapshot<'a> = SnapshotWithThreadMode<'a, DB>;

/// A view of every column family frozen when `db.snapshot()` was called:
/// reads and iterators through it never see later writes, deletes or
/// compactions. It is released when dropped.
///
/// The `_opt` methods take `ReadOptions` by value, as in rocksdb; their
/// snapshot setting is replaced by this snapshot.
pub struct SnapshotWithThreadMode<'a, D: DBAccess> {
    db: &'a D,
    /// `None` for the snapshot of a transaction that has none: reads
    /// through it then see the latest state.
    inner: Option<Arc<alexdb_engine::Snapshot>>,
}

impl<'a, D: DBAccess> SnapshotWithThreadMode<'a, D> {
    /// Takes a snapshot of `db`.
    pub fn new(db: &'a D) -> Self {
        Self {
            db,
            inner: db.snapshot_internal(),
        }
    }

    /// The sequence number the snapshot is frozen at: the database's
    /// `latest_sequence_number` when it was taken.
    pub fn sequence_number(&self) -> u64 {
        match &self.inner {
            Some(snapshot) => snapshot.seq(),
            None => self.db.core().engine.latest_sequence_number(),
        }
    }

    /// The engine snapshot, shared with `ReadOptions::set_snapshot`.
    pub(crate) fn engine_snapshot(&self) -> Option<Arc<alexdb_engine::Snapshot>> {
        self.inner.clone()
    }

    /// `readopts`, reading at this snapshot.
    fn at_snapshot(&self, mut readopts: ReadOptions) -> ReadOptions {
        if let Some(snapshot) = &self.inner {
            readopts.snapshot = Some(snapshot.clone());
        }
        readopts
    }

    /// An iterator over the default column family as of the snapshot.
    pub fn iterator(&self, mode: IteratorMode) -> DBIteratorWithThreadMode<'a, D> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    /// An iterator over column family `cf` as of the snapshot.
    pub fn iterator_cf(
        &self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'a, D> {
        self.iterator_cf_opt(cf_handle, ReadOptions::default(), mode)
    }

    /// An iterator over the default column family as of the snapshot, with options.
    pub fn iterator_opt(
        &self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'a, D> {
        DBIteratorWithThreadMode::new(self.db, self.at_snapshot(readopts), mode)
    }

    /// An iterator over column family `cf` as of the snapshot, with options.
    pub fn iterator_cf_opt(
        &self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'a, D> {
        let readopts = self.at_snapshot(readopts);
        DBIteratorWithThreadMode::new_cf(self.db, cf_handle.cf_id(), readopts, mode)
    }

    /// A raw iterator over the default column family as of the snapshot.
    pub fn raw_iterator(&self) -> DBRawIteratorWithThreadMode<'a, D> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    /// A raw iterator over column family `cf` as of the snapshot.
    pub fn raw_iterator_cf(
        &self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        self.raw_iterator_cf_opt(cf_handle, ReadOptions::default())
    }

    /// A raw iterator over the default column family as of the snapshot, with options.
    pub fn raw_iterator_opt(&self, readopts: ReadOptions) -> DBRawIteratorWithThreadMode<'a, D> {
        DBRawIteratorWithThreadMode::new(self.db, self.at_snapshot(readopts))
    }

    /// A raw iterator over column family `cf` as of the snapshot, with options.
    pub fn raw_iterator_cf_opt(
        &self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        let readopts = self.at_snapshot(readopts);
        DBRawIteratorWithThreadMode::new_cf(self.db, cf_handle.cf_id(), readopts)
    }

    /// Reads `key` from the default column family as of the snapshot.
    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>, Error> {
        self.get_opt(key, ReadOptions::default())
    }

    /// Reads `key` from column family `cf` as of the snapshot.
    pub fn get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.get_cf_opt(cf, key, ReadOptions::default())
    }

    /// Reads `key` from the default column family as of the snapshot, with options.
    pub fn get_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.db.get_opt(key, &self.at_snapshot(readopts))
    }

    /// Reads `key` from column family `cf` as of the snapshot, with options.
    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.db.get_cf_opt(cf, key, &self.at_snapshot(readopts))
    }

    /// Reads `key` from the default column family as of the snapshot, without copying.
    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_opt(key, ReadOptions::default())
    }

    /// Reads `key` from column family `cf` as of the snapshot, without copying.
    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_cf_opt(cf, key, ReadOptions::default())
    }

    /// Reads `key` from the default column family as of the snapshot, without copying.
    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.db.get_pinned_opt(key, &self.at_snapshot(readopts))
    }

    /// Reads `key` from column family `cf` as of the snapshot, without copying.
    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.db
            .get_pinned_cf_opt(cf, key, &self.at_snapshot(readopts))
    }

    /// Reads several keys of the default column family as of the snapshot.
    pub fn multi_get<K: AsRef<[u8]>, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, ReadOptions::default())
    }

    /// Reads several keys as of the snapshot, each from its column family.
    pub fn multi_get_cf<'b, 'c: 'b, K, I, W>(
        &'c self,
        keys_cf: I,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        self.multi_get_cf_opt(keys_cf, ReadOptions::default())
    }

    /// Reads several keys of the default column family as of the snapshot, with options.
    pub fn multi_get_opt<K, I>(
        &self,
        keys: I,
        readopts: ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.db.multi_get_opt(keys, &self.at_snapshot(readopts))
    }

    /// Reads several keys as of the snapshot, each from its column family, with options.
    pub fn multi_get_cf_opt<'b, 'c: 'b, K, I, W>(
        &'c self,
        keys_cf: I,
        readopts: ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        self.db
            .multi_get_cf_opt(keys_cf, &self.at_snapshot(readopts))
    }
}
