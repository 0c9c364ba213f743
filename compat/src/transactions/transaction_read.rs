//! The reads of a [`Transaction`]: point reads, reads for update,
//! multi-reads and iterators, all of which see the transaction's own
//! pending writes over the database (read-your-own-writes).
//!
//! Plain reads read the latest data, or the snapshot of their
//! `ReadOptions`; the transaction's own snapshot only decides conflicts,
//! as in RocksDB.

use std::sync::Arc;

use super::transaction::Transaction;
use crate::db::DBAccess;
use crate::db::core::Core;
use crate::db_iterator::merge_unsupported;
use crate::write_batch::PendingWrite;
use crate::{AsColumnFamilyRef, DBPinnableSlice, Error, ReadOptions};

use crate::column_family::DEFAULT_COLUMN_FAMILY_ID as DEFAULT_CF;

/// What the transaction's own writes say about a key: `Some(answer)` if it
/// wrote the key, `None` to read the database.
fn own_write(pending: Option<&PendingWrite>) -> Option<Result<Option<Vec<u8>>, Error>> {
    match pending? {
        PendingWrite::Put(value) => Some(Ok(Some(value.clone()))),
        PendingWrite::Delete => Some(Ok(None)),
        PendingWrite::Merge(Some(value)) => Some(Ok(Some(value.clone()))),
        PendingWrite::Merge(None) => Some(Err(merge_unsupported())),
    }
}

impl<'db, DB> Transaction<'db, DB> {
    /// Reads `key` of `cf`: the transaction's own write if any, else the database.
    fn read(&self, cf: u32, key: &[u8], readopts: &ReadOptions) -> Result<Option<Vec<u8>>, Error> {
        let order = self.core.key_order(cf);
        if let Some(answer) = own_write(self.state().writes.pending(cf, key, order.as_ref())) {
            return answer;
        }
        self.core.get_copied(cf, key, readopts)
    }

    /// Reads every `(column family, key)` of `keys`: the transaction's own
    /// writes, and the other keys from the database all at one point, in
    /// one multi-get (as RocksDB's transaction `MultiGet` reads the
    /// database once under its write batch).
    fn read_many(
        &self,
        keys: &[(u32, &[u8])],
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>> {
        let own: Vec<_> = {
            let state = self.state();
            keys.iter()
                .map(|(cf, key)| {
                    let order = self.core.key_order(*cf);
                    own_write(state.writes.pending(*cf, key, order.as_ref()))
                })
                .collect()
        };
        let unwritten: Vec<(u32, &[u8])> = keys
            .iter()
            .zip(&own)
            .filter(|(_, own)| own.is_none())
            .map(|(key, _)| *key)
            .collect();
        let mut from_db = match unwritten.is_empty() {
            true => Vec::new(),
            false => self.core.multi_get_copied(&unwritten, readopts),
        }
        .into_iter();
        own.into_iter()
            .map(|own| {
                own.unwrap_or_else(|| from_db.next().expect("a read for every key not written"))
            })
            .collect()
    }

    /// [`Self::read`] without copying a value read from the database.
    fn read_pinned(
        &self,
        cf: u32,
        key: &[u8],
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        let order = self.core.key_order(cf);
        if let Some(answer) = own_write(self.state().writes.pending(cf, key, order.as_ref())) {
            return answer.map(|v| v.map(DBPinnableSlice::owned));
        }
        self.core.get(cf, key, readopts)
    }

    /// Reads `key` from the default column family.
    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>, Error> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// Reads `key` from the default column family without copying.
    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// Reads `key` from column family `cf`.
    pub fn get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// Reads `key` from column family `cf` without copying.
    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_cf_opt(cf, key, &ReadOptions::default())
    }

    /// Reads `key` from the default column family and tracks (optimistic)
    /// or locks (pessimistic; shared unless `exclusive`) it, so that a
    /// concurrent write of it makes this transaction's commit fail
    /// (optimistic) or waits for this transaction (pessimistic).
    pub fn get_for_update<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.get_for_update_opt(key, exclusive, &ReadOptions::default())
    }

    /// [`Self::get_for_update`] without copying.
    pub fn get_pinned_for_update<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_for_update_opt(key, exclusive, &ReadOptions::default())
    }

    /// [`Self::get_for_update`] in column family `cf`.
    pub fn get_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.get_for_update_cf_opt(cf, key, exclusive, &ReadOptions::default())
    }

    /// [`Self::get_for_update_cf`] without copying.
    pub fn get_pinned_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.get_pinned_for_update_cf_opt(cf, key, exclusive, &ReadOptions::default())
    }

    /// Reads `key` from the default column family, with read options.
    pub fn get_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read(DEFAULT_CF, key.as_ref(), readopts)
    }

    /// Reads `key` from the default column family without copying, with read options.
    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.read_pinned(DEFAULT_CF, key.as_ref(), readopts)
    }

    /// Reads `key` from column family `cf`, with read options.
    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read(cf.cf_id(), key.as_ref(), readopts)
    }

    /// Reads `key` from column family `cf` without copying, with read options.
    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.read_pinned(cf.cf_id(), key.as_ref(), readopts)
    }

    /// [`Self::get_for_update`] with read options.
    pub fn get_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.touch_for_update(DEFAULT_CF, key.as_ref(), exclusive)?;
        self.read(DEFAULT_CF, key.as_ref(), opts)
    }

    /// [`Self::get_pinned_for_update`] with read options.
    pub fn get_pinned_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.touch_for_update(DEFAULT_CF, key.as_ref(), exclusive)?;
        self.read_pinned(DEFAULT_CF, key.as_ref(), opts)
    }

    /// [`Self::get_for_update_cf`] with read options.
    pub fn get_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.touch_for_update(cf.cf_id(), key.as_ref(), exclusive)?;
        self.read(cf.cf_id(), key.as_ref(), opts)
    }

    /// [`Self::get_pinned_for_update_cf`] with read options.
    pub fn get_pinned_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.touch_for_update(cf.cf_id(), key.as_ref(), exclusive)?;
        self.read_pinned(cf.cf_id(), key.as_ref(), opts)
    }

    /// Reads several keys of the default column family.
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
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<(u32, &[u8])> = keys.iter().map(|key| (DEFAULT_CF, key.as_ref())).collect();
        self.read_many(&keys, readopts)
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
        let keys: Vec<(u32, K)> = keys
            .into_iter()
            .map(|(cf, key)| (cf.cf_id(), key))
            .collect();
        let keys: Vec<(u32, &[u8])> = keys.iter().map(|(cf, key)| (*cf, key.as_ref())).collect();
        self.read_many(&keys, readopts)
    }

    crate::db::iterator_methods::iterator_methods!();
}

impl<DB> DBAccess for Transaction<'_, DB> {
    #[inline]
    fn core(&self) -> &Core {
        self.core
    }

    fn pending_writes_internal(
        &self,
        cf: u32,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Vec<(Vec<u8>, PendingWrite)> {
        let order = self.core.key_order(cf);
        self.state()
            .writes
            .pending_range(cf, (lower, upper), order.as_ref())
    }

    fn snapshot_internal(&self) -> Option<Arc<alexdb_engine::Snapshot>> {
        self.state().snapshots.user.clone()
    }

    fn get_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read(DEFAULT_CF, key.as_ref(), readopts)
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read(cf.cf_id(), key.as_ref(), readopts)
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.read_pinned(DEFAULT_CF, key.as_ref(), readopts)
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.read_pinned(cf.cf_id(), key.as_ref(), readopts)
    }

    fn multi_get_opt<K, I>(
        &self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        Transaction::multi_get_opt(self, keys, readopts)
    }

    fn multi_get_cf_opt<'b, K, I, W>(
        &self,
        keys_cf: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        Transaction::multi_get_cf_opt(self, keys_cf, readopts)
    }
}
