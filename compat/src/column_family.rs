//! Column family handles and descriptors.
//!
//! A handle names a column family by the numeric id the database gave it;
//! write batches record that id, and the database resolves it on write.
//! Handles are made by the database (`cf_handle`, `create_cf`); user code
//! only passes them on, as `cf` or `&cf`, through [`AsColumnFamilyRef`].

use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::Options;

/// The name of the default column family, which always exists and has id 0.
pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

/// The id of the default column family.
pub(crate) const DEFAULT_COLUMN_FAMILY_ID: u32 = 0;

/// How long entries of a column family live when the database is opened
/// with a TTL.
#[derive(Debug, Clone, Copy, Default)]
pub enum ColumnFamilyTtl {
    /// Entries never expire.
    #[default]
    Disabled,
    /// Entries expire after this long.
    Duration(Duration),
    /// Use the TTL the database was opened with.
    SameAsDb,
}

/// A column family to open or create: its name, options and TTL.
#[derive(Debug)]
pub struct ColumnFamilyDescriptor {
    pub(crate) name: String,
    pub(crate) options: Options,
    pub(crate) ttl: ColumnFamilyTtl,
}

impl ColumnFamilyDescriptor {
    /// Describes the column family `name` with `options`; opened with a
    /// TTL, it uses the database's ([`ColumnFamilyTtl::SameAsDb`]), as in
    /// rocksdb.
    pub fn new<S: Into<String>>(name: S, options: Options) -> Self {
        Self::new_with_ttl(name, options, ColumnFamilyTtl::SameAsDb)
    }

    /// Describes the column family `name` with `options` and `ttl`.
    pub fn new_with_ttl<S: Into<String>>(name: S, options: Options, ttl: ColumnFamilyTtl) -> Self {
        Self {
            name: name.into(),
            options,
            ttl,
        }
    }

    /// Replaces the TTL.
    pub fn set_ttl(&mut self, ttl: ColumnFamilyTtl) {
        self.ttl = ttl;
    }

    /// The column family name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The column family options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The TTL.
    pub fn ttl(&self) -> ColumnFamilyTtl {
        self.ttl
    }
}

/// A handle to a column family of an open database (single-threaded mode:
/// `cf_handle` returns `&ColumnFamily`).
#[derive(Debug)]
pub struct ColumnFamily {
    id: u32,
    name: String,
}

impl ColumnFamily {
    /// Makes the handle of column family `name` with the database's id `id`.
    pub(crate) fn new(id: u32, name: impl Into<String>) -> Self {
        Self {
            id,
            name: name.into(),
        }
    }

    /// The column family's id within its database.
    #[allow(
        dead_code,
        reason = "kept beside the id for debugging and future error messages"
    )]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The column family's name.
    #[allow(
        dead_code,
        reason = "kept beside the id for debugging and future error messages"
    )]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// A handle to a column family in multi-threaded mode, where `cf_handle`
/// returns `Arc<BoundColumnFamily>`; the lifetime ties it to its database.
#[derive(Debug)]
pub struct BoundColumnFamily<'a> {
    id: u32,
    name: String,
    /// Shared by every handle of the family: a family dropped while a
    /// handle lives stays readable through it, as in RocksDB.
    _token: Arc<FamilyToken>,
    db: PhantomData<&'a ()>,
}

/// What the handles of one column family share (multi-threaded mode): once
/// the family is dropped while some handle lives, the engine's hold that
/// keeps its keys readable, released with the last handle.
#[derive(Debug, Default)]
pub(crate) struct FamilyToken {
    hold: Mutex<Option<alexdb_engine::KeyspaceHold>>,
}

impl FamilyToken {
    /// Keeps `hold` until the last handle sharing this token is dropped.
    pub(crate) fn keep(&self, hold: alexdb_engine::KeyspaceHold) {
        *self.hold.lock().unwrap_or_else(PoisonError::into_inner) = Some(hold);
    }
}

impl BoundColumnFamily<'_> {
    /// Makes the handle of column family `name` with the database's id
    /// `id`, sharing the family's `token`.
    pub(crate) fn new(id: u32, name: impl Into<String>, token: Arc<FamilyToken>) -> Self {
        Self {
            id,
            name: name.into(),
            _token: token,
            db: PhantomData,
        }
    }

    /// The column family's id within its database.
    #[allow(
        dead_code,
        reason = "kept beside the id for debugging and future error messages"
    )]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The column family's name.
    #[allow(
        dead_code,
        reason = "kept beside the id for debugging and future error messages"
    )]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// The handle type `cf_handle` returns: `&ColumnFamily`, or
/// `Arc<BoundColumnFamily>` with the `multi-threaded-cf` feature.
#[cfg(not(feature = "multi-threaded-cf"))]
pub type ColumnFamilyRef<'a> = &'a ColumnFamily;

/// The handle type `cf_handle` returns: `&ColumnFamily`, or
/// `Arc<BoundColumnFamily>` with the `multi-threaded-cf` feature.
#[cfg(feature = "multi-threaded-cf")]
pub type ColumnFamilyRef<'a> = Arc<BoundColumnFamily<'a>>;

/// Anything that designates a column family: `ColumnFamily`,
/// `&ColumnFamily`, `Arc<BoundColumnFamily>` and `&Arc<BoundColumnFamily>`.
///
/// Methods that take a column family accept `&impl AsColumnFamilyRef`, so
/// both `db.put_cf(cf, ..)` and `db.put_cf(&cf, ..)` compile. The trait's
/// methods are internal to AlexDB.
pub trait AsColumnFamilyRef {
    /// The column family's id within its database.
    #[doc(hidden)]
    fn cf_id(&self) -> u32;

    /// The column family's name.
    #[doc(hidden)]
    fn cf_name(&self) -> &str;
}

impl AsColumnFamilyRef for ColumnFamily {
    fn cf_id(&self) -> u32 {
        self.id
    }

    fn cf_name(&self) -> &str {
        &self.name
    }
}

impl AsColumnFamilyRef for &ColumnFamily {
    fn cf_id(&self) -> u32 {
        self.id
    }

    fn cf_name(&self) -> &str {
        &self.name
    }
}

impl AsColumnFamilyRef for Arc<BoundColumnFamily<'_>> {
    fn cf_id(&self) -> u32 {
        self.id
    }

    fn cf_name(&self) -> &str {
        &self.name
    }
}

impl AsColumnFamilyRef for &Arc<BoundColumnFamily<'_>> {
    fn cf_id(&self) -> u32 {
        self.id
    }

    fn cf_name(&self) -> &str {
        &self.name
    }
}
