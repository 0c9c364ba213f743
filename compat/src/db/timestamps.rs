//! User-defined timestamps: writes at a timestamp (`*_with_ts`) and the
//! column family's `full_history_ts_low`. How they are stored and read is
//! in `timestamped/`.

use alexdb_engine::KeyspaceId;

use super::{DBCommon, DBInner, ThreadMode};
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::comparator::Comparator;
use crate::timestamped;
use crate::{AsColumnFamilyRef, Error, WriteBatch, WriteOptions};

/// One write at a timestamp.
enum Versioned<'k> {
    Put(&'k [u8], &'k [u8]),
    Delete(&'k [u8]),
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// The comparator of column family `cf`, which must have user
    /// timestamps of the size of `ts` (else RocksDB's `Invalid argument`).
    fn timestamp_comparator(&self, cf: u32, ts: &[u8]) -> Result<Comparator, Error> {
        let families = self.core().families();
        let family = families
            .get(&cf)
            .ok_or_else(|| Error::invalid_argument("Invalid column family specified"))?;
        let comparator = family.timestamps().ok_or_else(|| {
            Error::invalid_argument(format_args!(
                "cannot call this method on column family {} that does not enable timestamp",
                family.name
            ))
        })?;
        timestamped::check_size(comparator, ts)?;
        Ok(comparator.clone())
    }

    fn write_at(
        &self,
        cf: u32,
        ts: &[u8],
        op: Versioned<'_>,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        self.timestamp_comparator(cf, ts)?;
        let mut batch = WriteBatch::default();
        match op {
            Versioned::Put(key, value) => batch.put_in(cf, &[key, ts].concat(), value),
            Versioned::Delete(key) => batch.delete_in(cf, &[key, ts].concat()),
        }
        self.core().write(&batch, writeopts)
    }

    /// Sets `key` at timestamp `ts` in the default column family, which
    /// must have user timestamps of `ts`'s size.
    pub fn put_with_ts<K, V, S>(&self, key: K, ts: S, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        self.put_with_ts_opt(key, ts, value, &WriteOptions::default())
    }

    /// [`Self::put_with_ts`] with write options.
    pub fn put_with_ts_opt<K, V, S>(
        &self,
        key: K,
        ts: S,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        let op = Versioned::Put(key.as_ref(), value.as_ref());
        self.write_at(DEFAULT_COLUMN_FAMILY_ID, ts.as_ref(), op, writeopts)
    }

    /// Sets `key` at timestamp `ts` in column family `cf`.
    pub fn put_cf_with_ts<K, V, S>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        self.put_cf_with_ts_opt(cf, key, ts, value, &WriteOptions::default())
    }

    /// [`Self::put_cf_with_ts`] with write options.
    pub fn put_cf_with_ts_opt<K, V, S>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        let op = Versioned::Put(key.as_ref(), value.as_ref());
        self.write_at(cf.cf_id(), ts.as_ref(), op, writeopts)
    }

    /// Deletes `key` at timestamp `ts` in the default column family: reads
    /// at `ts` or later see no value, earlier reads still see the older
    /// versions.
    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
    ) -> Result<(), Error> {
        self.delete_with_ts_opt(key, ts, &WriteOptions::default())
    }

    /// [`Self::delete_with_ts`] with write options.
    pub fn delete_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        let op = Versioned::Delete(key.as_ref());
        self.write_at(DEFAULT_COLUMN_FAMILY_ID, ts.as_ref(), op, writeopts)
    }

    /// Deletes `key` at timestamp `ts` in column family `cf`.
    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) -> Result<(), Error> {
        self.delete_cf_with_ts_opt(cf, key, ts, &WriteOptions::default())
    }

    /// [`Self::delete_cf_with_ts`] with write options.
    pub fn delete_cf_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        let op = Versioned::Delete(key.as_ref());
        self.write_at(cf.cf_id(), ts.as_ref(), op, writeopts)
    }

    /// Raises column family `cf`'s `full_history_ts_low` to `ts`: reads at
    /// timestamps below it fail from then on. Fails with `Invalid argument`
    /// if `cf` has no user timestamps, if `ts` has the wrong size, or if
    /// `full_history_ts_low` is already higher. It survives reopening.
    pub fn increase_full_history_ts_low<S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        ts: S,
    ) -> Result<(), Error> {
        self.raise_history_low(cf.cf_id(), ts.as_ref())
    }

    /// Raises `full_history_ts_low` of column family `cf` (also what
    /// `CompactOptions::set_full_history_ts_low` does).
    pub(crate) fn raise_history_low(&self, cf: u32, ts: &[u8]) -> Result<(), Error> {
        self.core().check_writable()?;
        let comparator = self.timestamp_comparator(cf, ts)?;
        let core = self.core();
        timestamped::raise_history_low(
            &core.engine,
            KeyspaceId(cf),
            &comparator,
            ts,
            &core.raising_history_low,
        )
    }

    /// Column family `cf`'s `full_history_ts_low`: empty if it was never
    /// set. Fails with `Invalid argument` if `cf` has no user timestamps.
    pub fn get_full_history_ts_low(&self, cf: &impl AsColumnFamilyRef) -> Result<Vec<u8>, Error> {
        let families = self.core().families();
        if families
            .get(&cf.cf_id())
            .is_none_or(|f| f.timestamps().is_none())
        {
            return Err(Error::invalid_argument(
                "Timestamp is not enabled in this column family",
            ));
        }
        drop(families);
        let low = timestamped::read_history_low(&self.core().engine, KeyspaceId(cf.cf_id()))?;
        Ok(low.unwrap_or_default())
    }
}
