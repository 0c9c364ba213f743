//! Reading a database of either kind through one interface.

mod alex;
#[cfg(feature = "librocksdb")]
mod rocks;
mod rocks_files;

use std::path::Path;

pub use alex::AlexSource;
#[cfg(feature = "librocksdb")]
pub use rocks::{RocksSource, list_families};
pub use rocks_files::RocksFileSource;

use crate::error::Result;
use crate::keymap::Bounds;
use crate::kind::{self, Kind};

/// Name of the reserved column family / keyspace holding a migration's
/// progress markers. It exists only while a migration is unfinished and is
/// never copied or compared.
pub const MARKER_FAMILY: &str = "__alexdb_migrate__";

/// What a visitor tells the scan: go on, or stop here.
pub type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// A database being read: its families, ordered scans and point reads.
/// `Sync`, so verification can read both sides on two threads.
pub trait Source: Sync {
    /// The database's kind.
    fn kind(&self) -> Kind;
    /// The database directory.
    fn path(&self) -> &Path;
    /// The column families, without the reserved marker family.
    fn families(&self) -> Vec<String>;
    /// Whether the reserved marker family exists (an unfinished migration).
    fn has_marker_family(&self) -> bool;
    /// Calls `visit` with every entry of `family` within `bounds`, in key
    /// order, until it returns `false`.
    fn scan(&self, family: &str, bounds: &Bounds, visit: &mut Visit<'_>) -> Result<()>;
    /// The value of `key` in `family`.
    fn get(&self, family: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// A cheap estimate of the number of keys in `family`, for progress.
    fn estimate_keys(&self, family: &str) -> u64;
}

/// Opens the database at `path`, of either kind, for reading (RocksDB with
/// the pure-Rust reader).
pub fn open_any(path: &Path) -> Result<Box<dyn Source + Send>> {
    match kind::require_database(path)? {
        Kind::RocksDb => Ok(Box::new(RocksFileSource::open(path)?)),
        Kind::AlexDb => Ok(Box::new(AlexSource::open(path)?)),
    }
}

/// The families to migrate: every family of `source` when `wanted` is
/// empty, else `wanted`, each of which must exist.
pub fn select_families(source: &dyn Source, wanted: &[String]) -> Result<Vec<String>> {
    let available = source.families();
    if wanted.is_empty() {
        return Ok(available);
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|w| !available.contains(w))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(crate::error::MigrateError::MissingColumnFamilies {
            path: source.path().to_path_buf(),
            missing,
            available,
        });
    }
    let mut selected = Vec::new();
    for name in wanted {
        if !selected.contains(name) {
            selected.push(name.clone());
        }
    }
    Ok(selected)
}
