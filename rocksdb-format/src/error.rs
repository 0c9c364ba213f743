//! The crate's error type.

use std::path::PathBuf;

/// What went wrong reading a RocksDB directory or one of its files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The bytes do not follow RocksDB's format: the file is damaged or
    /// was not written by RocksDB.
    #[error("corrupt {what}: {detail}")]
    Corrupt {
        /// Which structure was being decoded (a file name or a block kind).
        what: String,
        /// What was wrong with it.
        detail: String,
    },
    /// A stored checksum does not match the bytes it protects.
    #[error("checksum mismatch in {what}: stored {expected:#010x}, computed {got:#010x}")]
    ChecksumMismatch {
        /// Which structure failed the check.
        what: String,
        /// The checksum computed over the bytes read.
        got: u32,
        /// The checksum stored in the file.
        expected: u32,
    },
    /// The database uses a RocksDB feature this reader does not implement;
    /// nothing is read rather than part of it. Use the librocksdb-backed
    /// reader for such databases.
    #[error("unsupported RocksDB feature: {feature}")]
    Unsupported {
        /// The feature, named as RocksDB documents it.
        feature: String,
    },
    /// The data holds merge operands but no merge function was given.
    #[error(
        "column family `{family}` holds merge operands; pass the merge operator \
         (`{operator}`) as a merge function to read it"
    )]
    MergeOperatorRequired {
        /// The column family.
        family: String,
        /// The merge operator name recorded in the OPTIONS file, if any.
        operator: String,
    },
    /// The caller's merge function returned `None` (a failed merge).
    #[error("the merge function failed for a key of {key_len} bytes in column family `{family}`")]
    MergeFailed {
        /// The column family.
        family: String,
        /// Length of the key whose merge failed.
        key_len: usize,
    },
    /// No column family has this name.
    #[error("no column family named `{0}`")]
    NoSuchFamily(String),
    /// A live process holds the database (see [`crate::lock`]).
    #[error("{path} is in use by another process{}", .holder.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    InUse {
        /// The database directory.
        path: PathBuf,
        /// The holder's process id, when the lock tells it.
        holder: Option<i32>,
    },
}

impl FormatError {
    /// A [`FormatError::Corrupt`] for `what` with `detail`.
    pub fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> Self {
        FormatError::Corrupt {
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// A [`FormatError::Unsupported`] naming `feature`.
    pub fn unsupported(feature: impl Into<String>) -> Self {
        FormatError::Unsupported {
            feature: feature.into(),
        }
    }

    /// A [`FormatError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        FormatError::Io {
            path: path.into(),
            source,
        }
    }
}

/// This crate's result type.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;
