//! The migration tool's one error type, and the mapping of engine, RocksDB
//! and I/O errors onto it.

use std::path::{Path, PathBuf};

/// Everything that can stop a migration. `Display` says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// The path does not hold a database of the kind the command needs.
    #[error("{path} is not {expected}: {reason}")]
    NotADatabase {
        /// The path given.
        path: PathBuf,
        /// What was expected there ("a RocksDB database", "a database").
        expected: &'static str,
        /// What was found instead.
        reason: String,
    },
    /// `--cf` named column families the source does not have.
    #[error("{path} has no column family {missing:?} (it has {available:?}); check the --cf names")]
    MissingColumnFamilies {
        /// The source database.
        path: PathBuf,
        /// The names asked for and not found.
        missing: Vec<String>,
        /// The names the source has.
        available: Vec<String>,
    },
    /// Another process holds the database open: a source that may change
    /// while it is copied, or a target someone else writes.
    #[error(
        "{path} is open in another process{}: a database in use is neither copied (it is a \
         moving target) nor written to; stop that process, or copy from a checkpoint of it, \
         and run again",
        .holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse {
        /// The source database.
        path: PathBuf,
        /// The holder's process id, when the lock tells it.
        holder: Option<i32>,
    },
    /// The target already holds data and `--resume` was not given.
    #[error("the target {path} is not empty ({detail}); {hint}")]
    TargetNotEmpty {
        /// The target database.
        path: PathBuf,
        /// What was found in it.
        detail: String,
        /// What to do about it.
        hint: &'static str,
    },
    /// The target holds an interrupted migration made with other settings.
    #[error("the target {path} holds an interrupted migration that does not match: {reason}")]
    ResumeMismatch {
        /// The target database.
        path: PathBuf,
        /// Which setting differs.
        reason: String,
    },
    /// The operating system refused access.
    #[error("permission denied on {path}: {detail}; check the owner and mode of the path")]
    PermissionDenied {
        /// The file or directory refused.
        path: PathBuf,
        /// The underlying message.
        detail: String,
    },
    /// The target's file system is full. Every committed batch is intact.
    #[error(
        "the disk holding {path} is full ({detail}); the target is left resumable: free some \
         space and run the same command again with --resume"
    )]
    DiskFull {
        /// The target database.
        path: PathBuf,
        /// The underlying message.
        detail: String,
    },
    /// A key cannot be mapped under `--i64-keys`.
    #[error(
        "column family {family:?} holds the key {key_hex} of {len} bytes, but --i64-keys needs \
         8-byte keys"
    )]
    BadI64Key {
        /// The column family.
        family: String,
        /// The key, in hex.
        key_hex: String,
        /// Its length.
        len: usize,
    },
    /// The copy finished but the target does not match the source.
    #[error(
        "verification failed: {family:?} differs at key {key_hex}: {reason}; the target is \
         left resumable, so inspect both sides and run again with --resume"
    )]
    VerificationFailed {
        /// The first family that differs.
        family: String,
        /// The first differing key, in hex.
        key_hex: String,
        /// How it differs.
        reason: String,
    },
    /// An error reported by the AlexDB engine.
    #[error("AlexDB database {path}: {source}")]
    Engine {
        /// The database.
        path: PathBuf,
        /// The engine's error.
        #[source]
        source: alexdb_engine::Error,
    },
    /// The command needs a part of the tool this build left out.
    #[error(
        "`{command}` writes RocksDB and needs the real RocksDB library: rebuild alexdb-migrate \
         with `--features {feature}`"
    )]
    NotBuiltIn {
        /// The command asked for.
        command: &'static str,
        /// The cargo feature that provides it.
        feature: &'static str,
    },
    /// The RocksDB files could not be read (damaged, or a feature the
    /// pure-Rust reader does not implement).
    #[error("RocksDB database {path}: {source}")]
    RocksFormat {
        /// The database.
        path: PathBuf,
        /// The reader's error.
        #[source]
        source: alexdb_rocksdb_format::FormatError,
    },
    /// An error reported by RocksDB.
    #[error("RocksDB database {path}: {message}")]
    Rocks {
        /// The database.
        path: PathBuf,
        /// RocksDB's message.
        message: String,
    },
    /// Any other I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// The tool's result type.
pub type Result<T, E = MigrateError> = std::result::Result<T, E>;

impl MigrateError {
    /// Classifies an I/O error on `path`: permission and full-disk errors
    /// get their own variants.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        let path = path.to_path_buf();
        match source.kind() {
            std::io::ErrorKind::PermissionDenied => MigrateError::PermissionDenied {
                path,
                detail: source.to_string(),
            },
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                MigrateError::DiskFull {
                    path,
                    detail: source.to_string(),
                }
            }
            _ => MigrateError::Io { path, source },
        }
    }

    /// Classifies an engine error on the database at `path`.
    pub fn engine(path: &Path, source: alexdb_engine::Error) -> Self {
        use alexdb_engine::Error as E;
        match source {
            E::Io { path: file, source } => match source.kind() {
                std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::StorageFull
                | std::io::ErrorKind::QuotaExceeded => MigrateError::io(&file, source),
                _ => MigrateError::Engine {
                    path: path.to_path_buf(),
                    source: E::Io { path: file, source },
                },
            },
            E::Locked(_) | E::LockedHere { .. } => MigrateError::InUse {
                path: path.to_path_buf(),
                holder: None,
            },
            E::NotADatabase { reason, .. } => MigrateError::NotADatabase {
                path: path.to_path_buf(),
                expected: "an AlexDB database",
                reason,
            },
            E::Poisoned(why) if is_disk_full_text(&why) => MigrateError::DiskFull {
                path: path.to_path_buf(),
                detail: why,
            },
            source => MigrateError::Engine {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// Classifies an error of the pure-Rust RocksDB reader on `path`.
    pub fn rocks_format(path: &Path, error: alexdb_rocksdb_format::FormatError) -> Self {
        use alexdb_rocksdb_format::FormatError as F;
        match error {
            F::Io { path, source } => MigrateError::io(&path, source),
            F::InUse { path, holder } => MigrateError::InUse { path, holder },
            source => MigrateError::RocksFormat {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    /// Classifies a RocksDB error on the database at `path`.
    #[cfg(feature = "librocksdb")]
    pub fn rocks(path: &Path, error: rocksdb::Error) -> Self {
        let message = error.into_string();
        let path = path.to_path_buf();
        let lower = message.to_ascii_lowercase();
        if lower.contains("permission denied") {
            MigrateError::PermissionDenied {
                path,
                detail: message,
            }
        } else if is_disk_full_text(&message) {
            MigrateError::DiskFull {
                path,
                detail: message,
            }
        } else if lower.contains("lock") && lower.contains("resource temporarily unavailable") {
            MigrateError::InUse { path, holder: None }
        } else {
            MigrateError::Rocks { path, message }
        }
    }

    /// A short, stable name of the variant, for the `--json` report.
    pub fn kind(&self) -> &'static str {
        match self {
            MigrateError::NotADatabase { .. } => "not_a_database",
            MigrateError::MissingColumnFamilies { .. } => "missing_column_families",
            MigrateError::InUse { .. } => "in_use",
            MigrateError::TargetNotEmpty { .. } => "target_not_empty",
            MigrateError::ResumeMismatch { .. } => "resume_mismatch",
            MigrateError::PermissionDenied { .. } => "permission_denied",
            MigrateError::DiskFull { .. } => "disk_full",
            MigrateError::BadI64Key { .. } => "bad_i64_key",
            MigrateError::VerificationFailed { .. } => "verification_failed",
            MigrateError::Engine { .. } => "engine",
            MigrateError::Rocks { .. } => "rocksdb",
            MigrateError::RocksFormat { .. } => "rocksdb_format",
            MigrateError::NotBuiltIn { .. } => "not_built_in",
            MigrateError::Io { .. } => "io",
        }
    }
}

/// Whether an error message reports a full file system (ENOSPC, EDQUOT).
fn is_disk_full_text(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("no space left") || lower.contains("disk quota exceeded")
}
