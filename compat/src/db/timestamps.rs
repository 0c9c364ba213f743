//! User-defined timestamps (`*_with_ts`, `full_history_ts_low`).
//!
//! AlexDB does not implement them: a user timestamp needs a
//! timestamp-aware key order, and AlexDB refuses custom comparators at
//! open (see `open.rs`). Every call fails with `Not implemented`, so no
//! write is silently stored without its timestamp.

use super::{DBCommon, DBInner, ThreadMode};
use crate::{AsColumnFamilyRef, Error, WriteOptions};

/// The error every timestamp call returns.
fn unsupported(call: &str) -> Error {
    Error::not_supported(format_args!(
        "AlexDB does not implement user-defined timestamps ({call})"
    ))
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Sets `key` at timestamp `ts`. Not implemented: fails with
    /// `Not implemented`.
    pub fn put_with_ts<K, V, S>(&self, key: K, ts: S, value: V) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        self.put_with_ts_opt(key, ts, value, &WriteOptions::default())
    }

    /// [`Self::put_with_ts`] with write options. Not implemented.
    pub fn put_with_ts_opt<K, V, S>(
        &self,
        _key: K,
        _ts: S,
        _value: V,
        _writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        Err(unsupported("put_with_ts"))
    }

    /// Sets `key` at timestamp `ts` in column family `cf`. Not implemented.
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

    /// [`Self::put_cf_with_ts`] with write options. Not implemented.
    pub fn put_cf_with_ts_opt<K, V, S>(
        &self,
        _cf: &impl AsColumnFamilyRef,
        _key: K,
        _ts: S,
        _value: V,
        _writeopts: &WriteOptions,
    ) -> Result<(), Error>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        S: AsRef<[u8]>,
    {
        Err(unsupported("put_cf_with_ts"))
    }

    /// Deletes `key` at timestamp `ts`. Not implemented.
    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
    ) -> Result<(), Error> {
        self.delete_with_ts_opt(key, ts, &WriteOptions::default())
    }

    /// [`Self::delete_with_ts`] with write options. Not implemented.
    pub fn delete_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        _key: K,
        _ts: S,
        _writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        Err(unsupported("delete_with_ts"))
    }

    /// Deletes `key` at timestamp `ts` in column family `cf`. Not
    /// implemented.
    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) -> Result<(), Error> {
        self.delete_cf_with_ts_opt(cf, key, ts, &WriteOptions::default())
    }

    /// [`Self::delete_cf_with_ts`] with write options. Not implemented.
    pub fn delete_cf_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        _cf: &impl AsColumnFamilyRef,
        _key: K,
        _ts: S,
        _writeopts: &WriteOptions,
    ) -> Result<(), Error> {
        Err(unsupported("delete_cf_with_ts"))
    }

    /// Raises the timestamp below which history may be dropped. Not
    /// implemented.
    pub fn increase_full_history_ts_low<S: AsRef<[u8]>>(
        &self,
        _cf: &impl AsColumnFamilyRef,
        _ts: S,
    ) -> Result<(), Error> {
        Err(unsupported("increase_full_history_ts_low"))
    }

    /// The timestamp below which history may be dropped. Not implemented.
    pub fn get_full_history_ts_low(&self, _cf: &impl AsColumnFamilyRef) -> Result<Vec<u8>, Error> {
        Err(unsupported("get_full_history_ts_low"))
    }
}
