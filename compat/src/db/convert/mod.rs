//! Opening a directory that holds a RocksDB database: refused with a hint by
//! default, converted in place when the user opts in
//! ([`Options::set_convert_rocksdb`] or the `ALEXDB_CONVERT_ROCKSDB`
//! environment variable).
//!
//! A conversion is crash-safe at every step; its one commit point is a
//! marker file written atomically:
//!
//! 1. **Stage** (`stage.rs`): with RocksDB's `LOCK` held exclusively (a
//!    live RocksDB or another converter is refused), RocksDB's files are
//!    read with the pure-Rust reader (`alexdb-rocksdb-format`) and every
//!    column family is written into a new AlexDB database in the
//!    subdirectory [`STAGING_DIR`], then read back and compared with what
//!    was read (count and CRC32C of every entry), then synced. RocksDB's
//!    files are not touched: a crash here leaves RocksDB's database as it
//!    was, and the next opted-in open starts the conversion again.
//! 2. **Commit** (`install.rs`): the marker `CONVERTED` is written into the
//!    staging directory (a temporary file, synced, renamed, the directory
//!    synced). From here the conversion only rolls forward, with or without
//!    the opt-in.
//! 3. **Retire**: RocksDB's files move into [`RETIRED_DIR`], kept until the
//!    user removes them; then the marker is renamed `RETIRED`.
//! 4. **Install**: the staged files move up into the database directory;
//!    the marker and the staging directory are removed.
//!
//! Every step is a series of renames that a restart repeats from wherever
//! it stopped; the staging directory is `flock`ed while a conversion runs,
//! so two processes never work on it at once.
//!
//! Once committed, the staged copy is authoritative: it is never removed.
//! If RocksDB's files changed before the conversion finished (a RocksDB
//! process opened the directory: their names, sizes, times and inodes are
//! checked against those the conversion read), the copy is set aside as
//! `alexdb-conversion-set-aside-N` and the open fails, saying how to keep
//! the conversion or to convert RocksDB's files as they are now.

mod detect;
mod install;
mod stage;
#[cfg(all(test, not(any(windows, target_env = "musl"))))]
// the real RocksDB is no dev-dependency there
mod tests;

use std::path::Path;

use alexdb_engine::keyspace::MANIFEST_FILE;

use crate::{ColumnFamilyDescriptor, Error, Options};

pub(crate) use detect::{not_alexdb, rocksdb_file};

/// The subdirectory a conversion writes the new AlexDB database into.
pub const STAGING_DIR: &str = "alexdb-conversion";

/// The subdirectory RocksDB's files are moved into once converted.
pub const RETIRED_DIR: &str = "rocksdb-original";

/// The environment variable that opts every open into converting a RocksDB
/// database in place (`1`, `true` or `yes`).
pub const CONVERT_ENV: &str = "ALEXDB_CONVERT_ROCKSDB";

/// Run by a read-write open before the engine opens `path`: finishes a
/// committed conversion, converts a RocksDB database when `opts` (or the
/// environment) opts in, and refuses one otherwise. `cfs` are the column
/// families the open names, each with its options (the merge operators
/// fold RocksDB's merge operands). Does nothing for an AlexDB database, a
/// new one, or a directory holding neither.
pub(crate) fn before_open(
    path: &Path,
    opts: &Options,
    cfs: &[ColumnFamilyDescriptor],
) -> Result<(), Error> {
    let staging = path.join(STAGING_DIR);
    if staging.is_dir() {
        let guard = install::StagingLock::take(&staging)?;
        if install::is_committed(&staging) {
            return install::roll_forward(path, &staging, guard);
        }
        drop(guard);
    }
    if path.join(MANIFEST_FILE).exists() {
        return Ok(());
    }
    let Some(file) = rocksdb_file(path) else {
        return Ok(());
    };
    if !opted_in(opts) {
        return Err(not_alexdb(path, &file));
    }
    let (guard, fingerprint) = stage::stage(path, &staging, opts, cfs)?;
    install::commit(&staging, &fingerprint)?;
    install::roll_forward(path, &staging, guard)
}

/// The column families of the RocksDB database at `path` (for
/// `DB::list_cf`, which a user typically calls to name every family in the
/// open that converts it), `default` first, then in creation order. `None`
/// if `path` holds no RocksDB database; read-only either way.
pub(crate) fn rocksdb_families(path: &Path) -> Option<Result<Vec<String>, Error>> {
    rocksdb_file(path)?;
    let listed = alexdb_rocksdb_format::manifest::read(path).map(|manifest| {
        manifest
            .families
            .into_values()
            .map(|family| family.name)
            .collect()
    });
    Some(listed.map_err(|e| stage::format_error(path, e)))
}

/// Whether `opts` or the environment asks for conversion in place.
fn opted_in(opts: &Options) -> bool {
    opts.convert_rocksdb || env_opts_in()
}

/// Whether [`CONVERT_ENV`] is set to a true value.
fn env_opts_in() -> bool {
    std::env::var(CONVERT_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// An I/O error during the conversion of `path`, in RocksDB's `IO error`
/// kind.
fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::io(format_args!(
        "While converting the RocksDB database at {}: {what}: {e}",
        path.display()
    ))
}
