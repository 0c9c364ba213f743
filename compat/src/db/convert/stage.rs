//! A conversion's first step: RocksDB's database read with the pure-Rust
//! reader and written, column family by column family, into a new AlexDB
//! database in the staging directory, read back and compared, then synced.
//! Nothing in the database directory itself changes.

use std::fs;
use std::path::{Path, PathBuf};

use alexdb_rocksdb_format::lock::DirLock;
use alexdb_rocksdb_format::wal::WalDamage;
use alexdb_rocksdb_format::{FormatError, MergeFn, RocksDir};

use super::install::{self, StagingLock};
use super::{RETIRED_DIR, io_error};
use crate::db::errors::lock_error;
use crate::identity::IDENTITY_FILE;
use crate::merge_operator::MergeOperands;
use crate::{ColumnFamilyDescriptor, DB, Error, IteratorMode, Options, WriteBatch};

/// A write batch is written once it holds this many bytes.
const BATCH_BYTES: usize = 4 << 20;

/// Stages the conversion of the RocksDB database at `path` into `staging`:
/// returns the lock on the staging directory (which also holds RocksDB's
/// `LOCK`, so no RocksDB process can change the database until its files
/// are retired) and the fingerprint of RocksDB's files that were read.
/// On failure the staging directory is removed and `path` is as it was.
pub(super) fn stage(
    path: &Path,
    staging: &Path,
    opts: &Options,
    cfs: &[ColumnFamilyDescriptor],
) -> Result<(StagingLock, String), Error> {
    let rocks_lock = DirLock::exclusive(path).map_err(|e| format_error(path, e))?;
    let wal_dir = separate_wal_dir(path, opts);
    refuse_earlier_retired_files(path)?;
    if let Some(wal_dir) = &wal_dir {
        refuse_earlier_retired_files(wal_dir)?;
    }
    let wals = wal_dir.as_deref().unwrap_or(path);
    let rocks = RocksDir::open_with_wal_dir(path, wals).map_err(|e| format_error(path, e))?;
    check_all_named(&rocks, cfs)?;
    let fingerprint = install::fingerprint(path, wal_dir.as_deref())?;
    let guard = install::fresh_staging(staging)?.holding(rocks_lock);
    let staged = wal_dir
        .as_deref()
        .map_or(Ok(()), |wal_dir| install::note_wal_dir(staging, wal_dir))
        .and_then(|()| copy_identity(path, staging))
        .and_then(|()| write_and_verify(path, staging, &rocks, opts, cfs));
    if let Err(e) = staged.and_then(|()| install::sync_tree(staging)) {
        let _ = fs::remove_dir_all(staging);
        return Err(e);
    }
    Ok((guard, fingerprint))
}

/// The directory `opts` keeps RocksDB's WALs in (`Options::set_wal_dir`),
/// if it is not `path` itself.
fn separate_wal_dir(path: &Path, opts: &Options) -> Option<PathBuf> {
    let wal_dir = opts
        .wal_dir
        .as_ref()
        .filter(|d| !d.as_os_str().is_empty())?;
    let same = match (fs::canonicalize(wal_dir), fs::canonicalize(path)) {
        (Ok(a), Ok(b)) => a == b,
        _ => wal_dir == path,
    };
    (!same).then(|| wal_dir.clone())
}

/// Refuses to convert when `path`'s [`RETIRED_DIR`] already holds files (an
/// earlier conversion's RocksDB files, which this one would mix with its
/// own).
fn refuse_earlier_retired_files(path: &Path) -> Result<(), Error> {
    let retired = path.join(RETIRED_DIR);
    let occupied = fs::read_dir(&retired).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(Error::invalid_argument(format_args!(
            "Cannot convert the RocksDB database at {}: {} already holds the files of an \
             earlier conversion; move them away first",
            path.display(),
            retired.display()
        )));
    }
    Ok(())
}

/// Fails with RocksDB's error when the open does not name every column
/// family of the database (RocksDB's read-write open requires all).
fn check_all_named(rocks: &RocksDir, cfs: &[ColumnFamilyDescriptor]) -> Result<(), Error> {
    let mut missing: Vec<_> = rocks
        .column_families()
        .iter()
        .filter(|family| !cfs.iter().any(|cf| cf.name == family.name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort_by_key(|family| std::cmp::Reverse(family.id));
    let names: Vec<&str> = missing.iter().map(|family| family.name.as_str()).collect();
    Err(Error::invalid_argument(format_args!(
        "Column families not opened: {}",
        names.join(", ")
    )))
}

/// Gives the new database RocksDB's identity, so that
/// `get_db_identity`'s answer survives the conversion.
fn copy_identity(path: &Path, staging: &Path) -> Result<(), Error> {
    match fs::copy(path.join(IDENTITY_FILE), staging.join(IDENTITY_FILE)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(path, "copying IDENTITY", e)),
    }
}

/// Writes every column family of `rocks` into a new database at `staging`,
/// then reads each back and compares it with what was written.
fn write_and_verify(
    path: &Path,
    staging: &Path,
    rocks: &RocksDir,
    opts: &Options,
    cfs: &[ColumnFamilyDescriptor],
) -> Result<(), Error> {
    let mut staged_opts = Options::default();
    staged_opts.create_if_missing(true);
    staged_opts.create_missing_column_families(true);
    let names: Vec<String> = rocks
        .column_families()
        .iter()
        .map(|family| family.name.clone())
        .collect();
    let descriptors = names
        .iter()
        .map(|name| ColumnFamilyDescriptor::new(name, Options::default()));
    let db = DB::open_cf_descriptors(&staged_opts, staging, descriptors)?;
    if let Some(damage) = rocks.wal_damage() {
        // Installed with the database, this LOG becomes its first LOG.old.
        db.core().log(&wal_damage_note(path, damage));
    }
    let mut written = Vec::with_capacity(names.len());
    for name in &names {
        let merge = merge_function(name, opts, cfs);
        written.push(write_family(path, &db, rocks, name, merge.as_deref())?);
    }
    db.flush_wal(true)?;
    for (name, digest) in names.iter().zip(written) {
        let read_back = read_family(&db, name)?;
        if read_back != digest {
            return Err(Error::corruption(format_args!(
                "While converting the RocksDB database at {}: column family `{name}` read \
                 back from the new database ({} entries) differs from what was read from \
                 RocksDB's files ({} entries); RocksDB's files are unchanged",
                path.display(),
                read_back.entries,
                digest.entries
            )));
        }
    }
    Ok(())
}

/// What a conversion left behind of a damaged WAL, for the LOG.
fn wal_damage_note(path: &Path, damage: &WalDamage) -> String {
    let later = match damage.later_logs.as_slice() {
        [] => String::new(),
        logs => format!(
            " and the later WALs {}",
            logs.iter()
                .map(|n| format!("{n:06}.log"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "Converting the RocksDB database at {}: point-in-time recovery stopped at a damaged \
         WAL record ({}); the writes from it on in {:06}.log{later} were not converted \
         (RocksDB's files, with them, are kept in {RETIRED_DIR})",
        path.display(),
        damage.detail,
        damage.log
    )
}

/// Copies one column family's live entries into `db`.
fn write_family(
    path: &Path,
    db: &DB,
    rocks: &RocksDir,
    name: &str,
    merge: Option<&MergeFn>,
) -> Result<Digest, Error> {
    let cf = db
        .cf_handle(name)
        .ok_or_else(|| Error::new(format!("Column family not found: {name}")))?;
    let mut digest = Digest::default();
    let mut batch = WriteBatch::default();
    for entry in rocks.iter(name, merge).map_err(|e| format_error(path, e))? {
        let (key, value) = entry.map_err(|e| format_error(path, e))?;
        digest.add(&key, &value);
        batch.put_cf(&cf, &key, &value);
        if batch.size_in_bytes() >= BATCH_BYTES {
            db.write(std::mem::take(&mut batch))?;
        }
    }
    db.write(batch)?;
    Ok(digest)
}

/// The digest of one column family of the staged database.
fn read_family(db: &DB, name: &str) -> Result<Digest, Error> {
    let cf = db
        .cf_handle(name)
        .ok_or_else(|| Error::new(format!("Column family not found: {name}")))?;
    let mut digest = Digest::default();
    for entry in db.iterator_cf(&cf, IteratorMode::Start) {
        let (key, value) = entry?;
        digest.add(&key, &value);
    }
    Ok(digest)
}

/// The full-merge function of the merge operator the open gives column
/// family `name`, in the reader's shape.
fn merge_function(
    name: &str,
    opts: &Options,
    cfs: &[ColumnFamilyDescriptor],
) -> Option<Box<MergeFn>> {
    let options = cfs
        .iter()
        .find(|cf| cf.name == name)
        .map_or(opts, |cf| &cf.options);
    let full_merge = options.merge_operator.as_ref()?.full_merge.clone();
    Some(Box::new(
        move |key: &[u8], base: Option<&[u8]>, operands: &[&[u8]]| {
            full_merge(key, base, &MergeOperands::new(operands))
        },
    ))
}

/// The count and CRC32C of a family's entries, in key order.
#[derive(Default, PartialEq, Eq)]
struct Digest {
    entries: u64,
    crc: u32,
}

impl Digest {
    fn add(&mut self, key: &[u8], value: &[u8]) {
        self.entries += 1;
        for part in [key, value] {
            self.crc = crc32c::crc32c_append(self.crc, &(part.len() as u64).to_le_bytes());
            self.crc = crc32c::crc32c_append(self.crc, part);
        }
    }
}

/// A reader error as the RocksDB error kind it corresponds to.
pub(super) fn format_error(path: &Path, e: FormatError) -> Error {
    let context = format!(
        "While converting the RocksDB database at {}",
        path.display()
    );
    match e {
        FormatError::InUse { .. } => lock_error(&path.join("LOCK")),
        FormatError::Io { .. } => Error::io(format_args!("{context}: {e}")),
        FormatError::Unsupported { .. } => Error::not_supported(format_args!("{context}: {e}")),
        FormatError::MergeOperatorRequired { .. } | FormatError::NoSuchFamily(_) => {
            Error::invalid_argument(format_args!("{context}: {e}"))
        }
        _ => Error::corruption(format_args!("{context}: {e}")),
    }
}
