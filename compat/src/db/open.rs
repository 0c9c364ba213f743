//! Opening, destroying and listing databases.
//!
//! As in rocksdb, `open*` first creates the directory (even with
//! `create_if_missing(false)`, which then fails on the missing database),
//! every existing column family must be named when opening, and
//! `open`/`open_default` leave no handle for `"default"`.
//!
//! Read-only handles (`open_*for_read_only`, `open_cf_descriptors_read_only`)
//! and secondary instances (`open_*as_secondary`) open the engine with
//! `Db::open_read_only`: they take no lock, so they open beside a primary
//! (in this or another process); they change nothing in the directory; they
//! may name a subset of the column families; and every write fails with
//! RocksDB's `Not implemented: Not supported operation in read only mode.`
//! (`... in secondary mode.` for a secondary's writes). What such a reader
//! may see and assume is in the engine's `FORMAT.md`, "Readers without the
//! lock".

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use alexdb_engine::dir_lock::{self, DirLock, LockError};
use alexdb_engine::io::{FileSystem, StdFileSystem};
use alexdb_engine::key_order::{KeyOrder, RangeOrder};
use alexdb_engine::keyspace::{MANIFEST_FILE, read_manifest};
use alexdb_engine::{Db, LOCK_FILE};

use super::access::Access;
use super::core::{Core, FamilyInfo};
use super::errors::{IntoRocks, held_here_error, lock_error, rocksdb_path};
use super::{DBCommon, DBInner, DBWithThreadMode, ThreadMode};
use crate::comparator::Comparator;
use crate::{
    ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_NAME, Error, InfoLogger, LogLevel, Options,
};

/// The engine's temporary manifest, left behind by a crash mid-rewrite.
const MANIFEST_TMP: &str = "MANIFEST.tmp";

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Opens the database at `path`, creating it if missing.
    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self, Error> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, path)
    }

    /// Opens the database at `path`, which must have no column family but
    /// `"default"`. `cf_handle("default")` is then `None`.
    pub fn open<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Self, Error> {
        Self::open_cf(opts, path, None::<&str>)
    }

    /// Opens the database without allowing writes (they fail with
    /// `Not implemented: Not supported operation in read only mode.`). It
    /// takes no lock, so it opens while a primary has the database open,
    /// and sees what the primary had written at that moment (a prefix of
    /// its batches, each whole); it never changes the directory and does
    /// not catch up later (open a secondary for that).
    ///
    /// `error_if_log_file_exist`: AlexDB's log is where the data lives, so
    /// a log with data always exists. With `true` the open fails with
    /// RocksDB's `Corruption` message when the newest log segment holds
    /// writes made after the last clean close (a primary has it open and
    /// has written, or crashed): the closest thing to RocksDB's "data still
    /// only in the WAL". With `false` nothing is checked.
    pub fn open_for_read_only<P: AsRef<Path>>(
        opts: &Options,
        path: P,
        error_if_log_file_exist: bool,
    ) -> Result<Self, Error> {
        Self::open_cf_for_read_only(opts, path, None::<&str>, error_if_log_file_exist)
    }

    /// Opens a secondary instance of the database at `primary_path`: like
    /// [`Self::open_for_read_only`], without the lock and without writing
    /// to that directory, but [`Self::try_catch_up_with_primary`] moves it
    /// to what the primary has written since. Writes fail with
    /// `Not implemented: Not supported operation in secondary mode.`.
    /// `secondary_path` is created if missing (RocksDB keeps its info log
    /// there); AlexDB writes nothing into it.
    pub fn open_as_secondary<P: AsRef<Path>>(
        opts: &Options,
        primary_path: P,
        secondary_path: P,
    ) -> Result<Self, Error> {
        Self::open_cf_as_secondary(opts, primary_path, secondary_path, None::<&str>)
    }

    /// Opens the database with a TTL, as RocksDB's `DBWithTTL`: each put
    /// value carries its write time, and `compact_range` drops the entries
    /// written more than `ttl` ago (until then they can still be read, as
    /// in RocksDB). See `ttl.rs`.
    pub fn open_with_ttl<P: AsRef<Path>>(
        opts: &Options,
        path: P,
        ttl: Duration,
    ) -> Result<Self, Error> {
        Self::open_cf_descriptors_with_ttl(opts, path, std::iter::empty(), ttl)
    }

    /// [`Self::open_with_ttl`] with column family names.
    pub fn open_cf_with_ttl<P, I, N>(
        opts: &Options,
        path: P,
        cfs: I,
        ttl: Duration,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_cf_descriptors_with_ttl(opts, path, default_descriptors(cfs), ttl)
    }

    /// [`Self::open_with_ttl`] with column family descriptors.
    pub fn open_cf_descriptors_with_ttl<P, I>(
        opts: &Options,
        path: P,
        cfs: I,
        ttl: Duration,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        Self::open_with_ttl_internal(opts, path.as_ref(), cfs, Access::ReadWrite, Some(ttl))
    }

    /// Opens the database with the named column families (default options
    /// for each). Every existing column family must be named; a named one
    /// that does not exist is created only with
    /// `create_missing_column_families(true)`.
    pub fn open_cf<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_internal(
            opts,
            path.as_ref(),
            default_descriptors(cfs),
            Access::ReadWrite,
        )
    }

    /// [`Self::open_cf`] with options for each column family.
    pub fn open_cf_with_opts<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = (N, Options)>,
        N: AsRef<str>,
    {
        let cfs = cfs
            .into_iter()
            .map(|(name, cf_opts)| ColumnFamilyDescriptor::new(name.as_ref(), cf_opts));
        Self::open_cf_descriptors(opts, path, cfs)
    }

    /// [`Self::open_cf`] without writes; see [`Self::open_for_read_only`].
    pub fn open_cf_for_read_only<P, I, N>(
        opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_cf_descriptors_read_only(
            opts,
            path,
            default_descriptors(cfs),
            error_if_log_file_exist,
        )
    }

    /// [`Self::open_cf_with_opts`] without writes; see [`Self::open_for_read_only`].
    pub fn open_cf_with_opts_for_read_only<P, I, N>(
        db_opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = (N, Options)>,
        N: AsRef<str>,
    {
        let cfs = cfs
            .into_iter()
            .map(|(name, cf_opts)| ColumnFamilyDescriptor::new(name.as_ref(), cf_opts));
        Self::open_cf_descriptors_read_only(db_opts, path, cfs, error_if_log_file_exist)
    }

    /// [`Self::open_cf_descriptors`] without writes; see [`Self::open_for_read_only`].
    pub fn open_cf_descriptors_read_only<P, I>(
        opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let db = Self::open_internal(opts, path.as_ref(), cfs, Access::ReadOnly)?;
        if error_if_log_file_exist && db.core().engine.has_unsettled_log() {
            return Err(Error::corruption(
                "The db was opened in readonly mode with error_if_wal_file_exists flag \
                 but a non-empty WAL file already exists",
            ));
        }
        Ok(db)
    }

    /// [`Self::open_as_secondary`] with the column families `cfs` (default
    /// options for each). Unlike a primary, it may name a subset of them.
    pub fn open_cf_as_secondary<P, I, N>(
        opts: &Options,
        primary_path: P,
        secondary_path: P,
        cfs: I,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        Self::open_cf_descriptors_as_secondary(
            opts,
            primary_path,
            secondary_path,
            default_descriptors(cfs),
        )
    }

    /// [`Self::open_as_secondary`] with column family descriptors. As in
    /// RocksDB, the handles are those named here: a column family the
    /// primary creates later gets no handle in this instance (reopen it to
    /// name it), and one the primary drops cannot be read after the next
    /// catch-up.
    pub fn open_cf_descriptors_as_secondary<P, I>(
        opts: &Options,
        path: P,
        secondary_path: P,
        cfs: I,
    ) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let secondary_path = secondary_path.as_ref();
        fs::create_dir_all(secondary_path).map_err(|e| {
            Error::io(format_args!(
                "While mkdir if missing: {}: {e}",
                secondary_path.display()
            ))
        })?;
        Self::open_internal(opts, path.as_ref(), cfs, Access::Secondary)
    }

    /// Opens the database with the given column families and their options.
    /// The `"default"` family is added with default options if not named.
    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self, Error>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        Self::open_internal(opts, path.as_ref(), cfs, Access::ReadWrite)
    }

    fn open_internal<I>(opts: &Options, path: &Path, cfs: I, access: Access) -> Result<Self, Error>
    where
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        Self::open_with_ttl_internal(opts, path, cfs, access, None)
    }

    /// Opens the database; with `db_ttl`, as a TTL database (see `ttl.rs`).
    fn open_with_ttl_internal<I>(
        opts: &Options,
        path: &Path,
        cfs: I,
        access: Access,
        db_ttl: Option<Duration>,
    ) -> Result<Self, Error>
    where
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let (core, handles) = open_core(opts, path, cfs, access, db_ttl)?;
        Ok(Self::from_parts(core, handles, path.to_path_buf()))
    }
}

/// Opens the engine database at `path` with the column families `cfs` (the
/// `"default"` family is added if not named), for every kind of database
/// handle; with `db_ttl`, as a TTL database (see `ttl.rs`). Returns it with
/// the column family handles to hand out: none if `cfs` named no family, as
/// in RocksDB.
pub(crate) fn open_core<I>(
    opts: &Options,
    path: &Path,
    cfs: I,
    access: Access,
    db_ttl: Option<Duration>,
) -> Result<(Core, BTreeMap<String, u32>), Error>
where
    I: IntoIterator<Item = ColumnFamilyDescriptor>,
{
    let mut cfs: Vec<ColumnFamilyDescriptor> = cfs.into_iter().collect();
    let named = !cfs.is_empty();
    if !named {
        cfs.push(ColumnFamilyDescriptor::new(
            DEFAULT_COLUMN_FAMILY_NAME,
            opts.clone(),
        ));
    } else if !cfs.iter().any(|cf| cf.name == DEFAULT_COLUMN_FAMILY_NAME) {
        cfs.push(ColumnFamilyDescriptor::new(
            DEFAULT_COLUMN_FAMILY_NAME,
            Options::default(),
        ));
    }
    // The LOG is started once the engine is open; a background error
    // reported before then goes nowhere but `rocksdb.background-errors`.
    let log_slot: Arc<OnceLock<InfoLogger>> = Arc::default();
    let engine = match access {
        Access::ReadWrite => {
            if let Err(e) = fs::create_dir_all(path) {
                return Err(Error::new(format!(
                    "Failed to create RocksDB directory: `{e:?}`."
                )));
            }
            // The engine creates a database beside files it does not know,
            // as RocksDB does; a directory without AlexDB's MANIFEST that
            // holds a RocksDB database's files is converted (if the user
            // opted in) or refused first, so that it is never taken for
            // such a directory.
            super::convert::before_open(path, opts, &cfs)?;
            // Before the engine records a family's comparator as its key
            // order: a comparator the database does not know for the
            // family is refused first.
            crate::comparator_names::check_before_open(path, &cfs)?;
            let engine_opts = engine_options(opts, access, &log_slot, &cfs);
            let engine = Db::open(path, engine_opts).or_else(|e| refused(path, &cfs, true, e))?;
            check_all_named(&engine, &cfs)?;
            engine
        }
        // A reader may name a subset of the column families, as in RocksDB.
        Access::ReadOnly | Access::Secondary => open_reader(path, opts, access, &cfs)?,
    };
    crate::comparator_names::check_open(path, &cfs, access == Access::ReadWrite)?;
    let families = open_families(&engine, opts, &cfs, access, db_ttl)?;
    let handles = if named {
        families
            .iter()
            .map(|(id, f)| (f.name.clone(), *id))
            .collect()
    } else {
        BTreeMap::new()
    };
    let identity = crate::identity::ensure(path, access != Access::ReadWrite)?;
    let mut core = Core::new(engine, access, families, opts.statistics.clone(), identity);
    core.apply_auto_compaction();
    core.stamped_values = db_ttl.is_some();
    core.logger = match &opts.info_logger {
        Some(logger) => Some(logger.clone()),
        None if access == Access::ReadWrite => crate::info_log::start(path, opts, &cfs),
        None => None,
    };
    if let Some(logger) = &core.logger {
        let _ = log_slot.set(logger.clone());
    }
    core.log(&format!(
        "AlexDB: opened database {} with column families {:?}",
        path.display(),
        core.families()
            .values()
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    ));
    Ok((core, handles))
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// The column families of the database at `path`, `"default"` first.
    /// Works while the database is open elsewhere.
    pub fn list_cf<P: AsRef<Path>>(_opts: &Options, path: P) -> Result<Vec<String>, Error> {
        let dir = path.as_ref();
        let fs: Arc<dyn FileSystem> = Arc::new(StdFileSystem);
        let manifest = match read_manifest(&fs, dir) {
            Ok(manifest) => manifest,
            Err(alexdb_engine::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                if let Some(listed) = super::convert::rocksdb_families(dir) {
                    return listed;
                }
                return Err(Error::io(format_args!(
                    "No such file or directoryWhile opening a file for sequentially reading: \
                     {}/CURRENT: No such file or directory",
                    dir.display()
                )));
            }
            Err(e) => return Err(super::errors::from_engine(e)),
        };
        let mut keyspaces = manifest.keyspaces;
        keyspaces.sort_by_key(|(id, _)| *id);
        Ok(keyspaces.into_iter().map(|(_, name)| name).collect())
    }

    /// Deletes the database at `path`: its files, then the directory if it
    /// is left empty. `Ok` if nothing is there; fails with the LOCK
    /// `IO error` while the database is open.
    pub fn destroy<P: AsRef<Path>>(opts: &Options, path: P) -> Result<(), Error> {
        let dir = path.as_ref();
        if fs::symlink_metadata(dir).is_err() {
            return Ok(());
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = take_lock(dir)?;
        crate::info_log::remove_logs(dir, opts.db_log_dir.as_deref())
            .map_err(|e| Error::io(format_args!("While deleting the LOG files: {e}")))?;
        let names = fs::read_dir(dir)
            .map_err(|e| Error::io(format_args!("While opendir: {}: {e}", dir.display())))?;
        for entry in names.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours = name == MANIFEST_FILE
                || name == MANIFEST_TMP
                || name == crate::identity::IDENTITY_FILE
                || name == crate::comparator_names::COMPARATORS_FILE
                || alexdb_engine::is_database_file(&name);
            if ours {
                fs::remove_file(entry.path()).map_err(|e| {
                    Error::io(format_args!(
                        "While deleting {}: {e}",
                        entry.path().display()
                    ))
                })?;
            }
        }
        drop(lock);
        let _ = fs::remove_file(&lock_path);
        let _ = fs::remove_dir(dir);
        Ok(())
    }

    /// Does what AlexDB's recovery can: opens the database at `path` (which
    /// zeroes a torn tail of the newest log segment, removes an orphaned
    /// compaction output and the segments a sealed one replaced, and checks
    /// every frame) and closes it. Damage recovery cannot mend (corruption
    /// in the middle of the data) is returned as its `Corruption` error;
    /// nothing is dropped to get past it. Fails with the LOCK `IO error`
    /// while the database is open.
    pub fn repair<P: AsRef<Path>>(_opts: &Options, path: P) -> Result<(), Error> {
        let engine_opts = alexdb_engine::Options {
            create_if_missing: false,
            background_compaction: false,
            ..alexdb_engine::Options::default()
        };
        Db::open(path.as_ref(), engine_opts).rocks().map(drop)
    }
}

/// Descriptors with default options for each name.
pub(crate) fn default_descriptors<I, N>(cfs: I) -> impl Iterator<Item = ColumnFamilyDescriptor>
where
    I: IntoIterator<Item = N>,
    N: AsRef<str>,
{
    cfs.into_iter()
        .map(|name| ColumnFamilyDescriptor::new(name.as_ref(), Options::default()))
}

/// Opens the engine read-only for a read-only or secondary handle. A
/// missing database is RocksDB's error for a missing `CURRENT` file.
fn open_reader(
    path: &Path,
    opts: &Options,
    access: Access,
    cfs: &[ColumnFamilyDescriptor],
) -> Result<Db, Error> {
    match Db::open_read_only(path, engine_options(opts, access, &Arc::default(), cfs)) {
        Err(alexdb_engine::Error::NotFound(_) | alexdb_engine::Error::NotADatabase { .. })
            if let Some(file) = super::convert::rocksdb_file(path) =>
        {
            Err(super::convert::not_alexdb(path, &file))
        }
        Err(alexdb_engine::Error::NotFound(_) | alexdb_engine::Error::NotADatabase { .. }) => {
            Err(Error::io(format_args!(
                "No such file or directoryWhile opening a file for sequentially reading: \
                 {}/CURRENT: No such file or directory",
                path.display()
            )))
        }
        other => other.or_else(|e| refused(path, cfs, false, e)),
    }
}

/// The error of an engine open of `path` that failed with `e`: an invalid
/// argument (a column family's key order the engine records but the open
/// does not give) is first explained as RocksDB would, by a comparator
/// that does not match or (when the open must name every family,
/// `all_named`) a column family not named.
fn refused(
    path: &Path,
    cfs: &[ColumnFamilyDescriptor],
    all_named: bool,
    e: alexdb_engine::Error,
) -> Result<Db, Error> {
    if let alexdb_engine::Error::InvalidArgument(_) = e {
        crate::comparator_names::check_before_open(path, cfs)?;
        if all_named {
            check_all_named_before_open(path, cfs)?;
        }
    }
    Err(e).rocks()
}

/// The engine options for rocksdb `opts`: the create/exists flags,
/// background errors written to the `LOG` (the logger `log` will hold, as
/// RocksDB logs its background errors), and the key orders of the column
/// families of `cfs` with a custom comparator (their range deletes follow
/// it); engine defaults otherwise.
fn engine_options(
    opts: &Options,
    access: Access,
    log: &Arc<OnceLock<InfoLogger>>,
    cfs: &[ColumnFamilyDescriptor],
) -> alexdb_engine::Options {
    let log = log.clone();
    let on_background_error: alexdb_engine::BackgroundErrorListener =
        Arc::new(move |error: &str| {
            if let Some(logger) = log.get() {
                logger.log(
                    LogLevel::Error,
                    &format!("[ERROR] Background error: {error}"),
                );
            }
        });
    alexdb_engine::Options {
        create_if_missing: opts.create_if_missing && access == Access::ReadWrite,
        error_if_exists: opts.error_if_exists,
        pack_index_at_open: opts.pack_index_at_open,
        pack_index_when_quiet: opts.pack_index_at_open,
        memory_budget: opts.memory_budget.clone(),
        on_background_error: Some(on_background_error),
        key_orders: key_orders(cfs),
        ..alexdb_engine::Options::default()
    }
}

/// The key orders of the column families of `cfs` whose range deletes
/// follow their comparator, by name.
fn key_orders(cfs: &[ColumnFamilyDescriptor]) -> HashMap<String, Arc<dyn KeyOrder>> {
    cfs.iter()
        .filter_map(
            |cf| match Comparator::range_order(cf.options.comparator.as_ref()) {
                RangeOrder::Custom(order) => Some((cf.name.clone(), order)),
                RangeOrder::Bytewise => None,
            },
        )
        .collect()
}

/// Fails as RocksDB does if the database has a column family that `cfs`
/// does not name. The message lists them newest first, as RocksDB's does
/// (it walks a hash map filled in creation order, which gives the reverse).
fn check_all_named(engine: &Db, cfs: &[ColumnFamilyDescriptor]) -> Result<(), Error> {
    let families = engine
        .keyspace_names()
        .into_iter()
        .map(|name| (engine.keyspace(&name).map_or(0, |id| id.0), name));
    check_all_listed(families, cfs)
}

/// [`check_all_named`] before the engine opens, from its `MANIFEST` (if it
/// can be read), so that RocksDB's error comes before the engine's refusal
/// to open a family with a key order of its own without it.
fn check_all_named_before_open(path: &Path, cfs: &[ColumnFamilyDescriptor]) -> Result<(), Error> {
    let fs: Arc<dyn FileSystem> = Arc::new(StdFileSystem);
    match read_manifest(&fs, path) {
        Ok(manifest) => check_all_listed(manifest.keyspaces.into_iter(), cfs),
        Err(_) => Ok(()),
    }
}

/// Fails as RocksDB does if `families` (id, name) has one `cfs` does not
/// name.
fn check_all_listed(
    families: impl Iterator<Item = (u32, String)>,
    cfs: &[ColumnFamilyDescriptor],
) -> Result<(), Error> {
    let named: BTreeSet<&str> = cfs.iter().map(|cf| cf.name.as_str()).collect();
    let mut missing: Vec<(u32, String)> = families
        .filter(|(_, name)| !named.contains(name.as_str()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    let names: Vec<String> = missing.into_iter().map(|(_, name)| name).collect();
    Err(Error::invalid_argument(format_args!(
        "Column families not opened: {}",
        names.join(", ")
    )))
}

/// Finds (or, if allowed, creates) each named column family.
fn open_families(
    engine: &Db,
    opts: &Options,
    cfs: &[ColumnFamilyDescriptor],
    access: Access,
    db_ttl: Option<Duration>,
) -> Result<BTreeMap<u32, FamilyInfo>, Error> {
    let mut families = BTreeMap::new();
    for cf in cfs {
        let id = match engine.keyspace(&cf.name) {
            Some(id) => id,
            None if opts.create_missing_column_families && access == Access::ReadWrite => {
                engine.create_keyspace(&cf.name).rocks()?
            }
            None => {
                return Err(Error::invalid_argument(format_args!(
                    "Column family not found: {}",
                    cf.name
                )));
            }
        };
        let mut info = FamilyInfo::register(engine, id, &cf.name, &cf.options)?;
        info.ttl = db_ttl.and_then(|_| super::ttl::family_ttl(db_ttl, cf.ttl));
        info.check_supported()?;
        let stamp = db_ttl.map_or(0, |_| super::ttl::STAMP_BYTES);
        super::filter_hook::install(engine, id, &info, stamp)?;
        families.insert(id.0, info);
    }
    Ok(families)
}

/// Takes the database lock as `open` would, for `destroy`.
fn take_lock(dir: &Path) -> Result<DirLock, Error> {
    let lock_path = dir.join(LOCK_FILE);
    dir_lock::acquire(&StdFileSystem, dir).map_err(|e| match e {
        LockError::Io(e) => Error::io(format_args!(
            "While lock file: {}: {e}",
            rocksdb_path(&lock_path)
        )),
        LockError::HeldElsewhere => lock_error(&lock_path),
        LockError::HeldHere {
            acquired_unix_secs,
            thread,
        } => held_here_error(&lock_path, acquired_unix_secs, thread),
    })
}
