//! Telling what a directory holds: a RocksDB database, an AlexDB database,
//! nothing, or something else. Reads the directory listing only.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::error::{MigrateError, Result};

/// The kinds of database the tool reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A RocksDB database: a `CURRENT` file naming a `MANIFEST-NNNNNN`.
    RocksDb,
    /// An AlexDB database: a `MANIFEST` file and segment files.
    AlexDb,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::RocksDb => "RocksDB",
            Kind::AlexDb => "AlexDB",
        })
    }
}

/// What a path holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing: the path does not exist, or is an empty directory.
    Nothing,
    /// A database of this kind.
    Database(Kind),
    /// The first files of a database of this kind whose creation was
    /// interrupted: no data, and the database can be created over it.
    Partial(Kind),
    /// A directory holding other files; the string says which.
    Other(String),
}

/// Looks at `path` and tells what it holds.
pub fn detect(path: &Path) -> Result<Found> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(MigrateError::io(path, e)),
    };
    if !meta.is_dir() {
        return Ok(Found::Other("it is a file, not a directory".into()));
    }
    let names = list(path)?;
    if names.iter().any(|n| n == "CURRENT") && names.iter().any(|n| n.starts_with("MANIFEST-")) {
        return Ok(Found::Database(Kind::RocksDb));
    }
    if names.iter().any(|n| n == "MANIFEST") {
        return Ok(Found::Database(Kind::AlexDb));
    }
    if names.iter().all(|n| n == "LOCK") {
        return Ok(Found::Nothing);
    }
    if names.iter().all(|n| n == "LOCK" || n == "MANIFEST.tmp") {
        return Ok(Found::Partial(Kind::AlexDb));
    }
    if names.iter().all(|n| is_rocksdb_creation_file(n)) {
        return Ok(Found::Partial(Kind::RocksDb));
    }
    let name = names
        .iter()
        .find(|n| *n != "LOCK")
        .map_or("", String::as_str);
    Ok(Found::Other(format!(
        "it holds {name:?} but neither a RocksDB CURRENT file nor an AlexDB MANIFEST"
    )))
}

/// Whether `name` is a file RocksDB writes while creating a database,
/// before its `CURRENT` file exists.
fn is_rocksdb_creation_file(name: &str) -> bool {
    name == "LOCK"
        || name == "IDENTITY"
        || name.starts_with("LOG")
        || name.starts_with("MANIFEST-")
        || name.starts_with("OPTIONS-")
        || name.ends_with(".dbtmp")
        || name.ends_with(".log")
}

/// Requires `path` to hold a database, and returns its kind.
pub fn require_database(path: &Path) -> Result<Kind> {
    match detect(path)? {
        Found::Database(kind) => Ok(kind),
        Found::Nothing if !path.exists() => Err(not_a_database(path, "it does not exist")),
        Found::Nothing => Err(not_a_database(path, "the directory is empty")),
        Found::Partial(kind) => {
            let what = format!(
                "it holds the first files of {} whose creation was interrupted",
                expected(kind)
            );
            Err(not_a_database(path, &what))
        }
        Found::Other(reason) => Err(not_a_database(path, &reason)),
    }
}

/// Requires `path` to hold a database of kind `kind`.
pub fn require_kind(path: &Path, kind: Kind, hint: &str) -> Result<()> {
    let found = require_database(path)?;
    if found != kind {
        return Err(MigrateError::NotADatabase {
            path: path.to_path_buf(),
            expected: expected(kind),
            reason: format!("it is an {found} database; {hint}"),
        });
    }
    Ok(())
}

/// The phrase naming a database of `kind`, for messages.
pub fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::RocksDb => "a RocksDB database",
        Kind::AlexDb => "an AlexDB database",
    }
}

fn not_a_database(path: &Path, reason: &str) -> MigrateError {
    MigrateError::NotADatabase {
        path: path.to_path_buf(),
        expected: "a database",
        reason: reason.to_string(),
    }
}

/// The names in directory `path`.
fn list(path: &Path) -> Result<Vec<String>> {
    let entries = std::fs::read_dir(path).map_err(|e| MigrateError::io(path, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| MigrateError::io(path, e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Total size in bytes of the files in directory `path` (not recursive).
pub fn dir_bytes(path: &Path) -> Result<u64> {
    let entries = std::fs::read_dir(path).map_err(|e| MigrateError::io(path, e))?;
    let mut total = 0;
    for entry in entries {
        let entry = entry.map_err(|e| MigrateError::io(path, e))?;
        let meta = entry.metadata().map_err(|e| MigrateError::io(path, e))?;
        if meta.is_file() {
            total += meta.len();
        }
    }
    Ok(total)
}
