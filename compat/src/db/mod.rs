//! The database: [`DBCommon`] and its aliases [`DBWithThreadMode`] and
//! [`DB`], the thread modes, and the [`DBAccess`] trait that iterators and
//! snapshots are generic over.
//!
//! The methods are split by concern: `open.rs` (open, destroy, list),
//! `column_families.rs`, `read.rs`, `write.rs` and `admin.rs` (flush,
//! compaction, properties). All of them translate onto [`core::Core`], the
//! one place that talks to the engine.

pub(crate) mod access;
mod admin;
mod column_families;
pub(crate) mod convert;
pub(crate) mod core;
pub(crate) mod errors;
mod filter_hook;
mod history;
mod ingest;
pub(crate) mod iterator_methods;
mod key_classes;
mod level_properties;
mod metadata;
mod multi_get;
pub(crate) mod open;
mod ordered_reads;
mod ordered_writes;
mod read;
mod spare_batch;
mod timestamps;
pub(crate) mod ttl;
mod write;
pub(crate) mod write_locks;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::column_family::{ColumnFamily, FamilyToken};
use crate::write_batch::PendingWrite;
use crate::{AsColumnFamilyRef, DBPinnableSlice, Error, ReadOptions};

pub use self::admin::LiveFile;
use self::core::Core;
pub use self::metadata::Range;

/// How a database holds its column family handles, which decides whether
/// `create_cf`/`drop_cf` need `&mut self` ([`SingleThreaded`]) or `&self`
/// ([`MultiThreaded`]), and what `cf_handle` returns.
///
/// Only AlexDB implements it; its methods are internal.
pub trait ThreadMode {
    /// Builds the handle map from `(name, id)` pairs.
    #[doc(hidden)]
    fn new_cf_map_internal(cfs: BTreeMap<String, u32>) -> Self;
    /// Forgets every handle.
    #[doc(hidden)]
    fn drop_all_cfs_internal(&mut self);
}

/// Column family handles in a plain map: `cf_handle` returns
/// `Option<&ColumnFamily>` and creating or dropping a column family needs
/// `&mut self`. The mode of [`DB`] unless the `multi-threaded-cf` feature
/// is on.
pub struct SingleThreaded {
    pub(crate) cfs: BTreeMap<String, ColumnFamily>,
}

/// Column family handles behind a lock: `cf_handle` returns
/// `Option<Arc<BoundColumnFamily>>` and creating or dropping a column family
/// takes `&self`, so it can happen while other threads use the database.
pub struct MultiThreaded {
    /// Each family's id, and the token its handles share.
    pub(crate) cfs: RwLock<BTreeMap<String, (u32, Arc<FamilyToken>)>>,
}

impl ThreadMode for SingleThreaded {
    fn new_cf_map_internal(cfs: BTreeMap<String, u32>) -> Self {
        let cfs = cfs
            .into_iter()
            .map(|(name, id)| (name.clone(), ColumnFamily::new(id, name)))
            .collect();
        Self { cfs }
    }

    fn drop_all_cfs_internal(&mut self) {
        self.cfs.clear();
    }
}

impl ThreadMode for MultiThreaded {
    fn new_cf_map_internal(cfs: BTreeMap<String, u32>) -> Self {
        let cfs = cfs
            .into_iter()
            .map(|(name, id)| (name, (id, Arc::default())))
            .collect();
        Self {
            cfs: RwLock::new(cfs),
        }
    }

    fn drop_all_cfs_internal(&mut self) {
        self.cfs
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

/// What stands behind a [`DBCommon`]: for [`DBWithThreadMode`] an open
/// engine database. Internal to AlexDB.
pub trait DBInner {
    /// The open database.
    #[doc(hidden)]
    fn core(&self) -> &Core;
}

/// The inner part of a [`DBWithThreadMode`]: the open engine database.
pub struct DBWithThreadModeInner {
    core: Core,
}

impl DBInner for DBWithThreadModeInner {
    #[inline]
    fn core(&self) -> &Core {
        &self.core
    }
}

/// An open database, generic over how it holds column family handles.
///
/// Use it through the aliases [`DB`] and [`DBWithThreadMode`]. Every method
/// of the rocksdb crate's `DBCommon` is here with the same signature; see
/// the crate documentation for the few whose behaviour differs.
pub struct DBCommon<T: ThreadMode, D: DBInner> {
    pub(crate) inner: D,
    pub(crate) cfs: T,
    path: PathBuf,
}

/// A database in thread mode `T` ([`SingleThreaded`] or [`MultiThreaded`]).
pub type DBWithThreadMode<T> = DBCommon<T, DBWithThreadModeInner>;

/// The database type: single-threaded column family handling, or
/// multi-threaded with the `multi-threaded-cf` feature, as in rocksdb.
/// `Send + Sync`: share it between threads with `Arc<DB>`.
#[cfg(not(feature = "multi-threaded-cf"))]
pub type DB = DBWithThreadMode<SingleThreaded>;

/// The database type: single-threaded column family handling, or
/// multi-threaded with the `multi-threaded-cf` feature, as in rocksdb.
/// `Send + Sync`: share it between threads with `Arc<DB>`.
#[cfg(feature = "multi-threaded-cf")]
pub type DB = DBWithThreadMode<MultiThreaded>;

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// The engine database behind this handle.
    #[inline]
    pub(crate) fn core(&self) -> &Core {
        self.inner.core()
    }

    /// The path the database was opened at, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// A handle on `inner`, handing out the column families `cfs`.
    pub(crate) fn from_inner(inner: D, cfs: BTreeMap<String, u32>, path: PathBuf) -> Self {
        Self {
            inner,
            cfs: T::new_cf_map_internal(cfs),
            path,
        }
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    fn from_parts(core: Core, cfs: BTreeMap<String, u32>, path: PathBuf) -> Self {
        Self::from_inner(DBWithThreadModeInner { core }, cfs, path)
    }
}

impl<T: ThreadMode, D: DBInner> Drop for DBCommon<T, D> {
    fn drop(&mut self) {
        self.cfs.drop_all_cfs_internal();
    }
}

impl<T: ThreadMode, D: DBInner> fmt::Debug for DBCommon<T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RocksDB {{ path: {:?} }}", self.path())
    }
}

/// What iterators and snapshots need from a database; implemented by every
/// [`DBCommon`]. Use it as a bound (`D: DBAccess`) to write code generic
/// over the thread mode.
pub trait DBAccess {
    /// The open database. Internal to AlexDB.
    #[doc(hidden)]
    fn core(&self) -> &Core;

    /// The writes an iterator over column family `cf` within
    /// `[lower, upper)` must lay over the database, in key order: a
    /// transaction's own writes. Internal to AlexDB.
    #[doc(hidden)]
    fn pending_writes_internal(
        &self,
        _cf: u32,
        _lower: Option<&[u8]>,
        _upper: Option<&[u8]>,
    ) -> Vec<(Vec<u8>, PendingWrite)> {
        Vec::new()
    }

    /// The engine snapshot `SnapshotWithThreadMode::new` holds: a new one,
    /// or a transaction's own (`None` if it has none). Internal to AlexDB.
    #[doc(hidden)]
    fn snapshot_internal(&self) -> Option<Arc<alexdb_engine::Snapshot>> {
        Some(self.core().snapshot())
    }

    /// Reads `key` from the default column family.
    fn get_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.core().get_copied(0, key.as_ref(), readopts)
    }

    /// Reads `key` from column family `cf`.
    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.core().get_copied(cf.cf_id(), key.as_ref(), readopts)
    }

    /// Reads `key` from the default column family without copying.
    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.core().get(0, key.as_ref(), readopts)
    }

    /// Reads `key` from column family `cf` without copying.
    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>, Error> {
        self.core().get(cf.cf_id(), key.as_ref(), readopts)
    }

    /// Reads several keys of the default column family.
    fn multi_get_opt<K, I>(
        &self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>, Error>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<(u32, &[u8])> = keys.iter().map(|key| (0, key.as_ref())).collect();
        self.core().multi_get_copied(&keys, readopts)
    }

    /// Reads several keys, each from its own column family.
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
        let keys: Vec<(u32, K)> = keys_cf
            .into_iter()
            .map(|(cf, key)| (cf.cf_id(), key))
            .collect();
        let keys: Vec<(u32, &[u8])> = keys.iter().map(|(cf, key)| (*cf, key.as_ref())).collect();
        self.core().multi_get_copied(&keys, readopts)
    }
}

impl<T: ThreadMode, D: DBInner> DBAccess for DBCommon<T, D> {
    #[inline]
    fn core(&self) -> &Core {
        self.inner.core()
    }
}
