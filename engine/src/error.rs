//! The engine's error type.

use std::path::PathBuf;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is out of range: a key or value over the maximum size,
    /// an unknown or dropped keyspace, an empty keyspace name.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Stored data failed verification: a checksum mismatch, a torn record
    /// outside the active segment's tail, an impossible length.
    #[error("corruption in {file} at offset {offset}: {reason}")]
    Corruption {
        /// The file holding the damaged bytes.
        file: PathBuf,
        /// Byte offset of the damaged record or header within the file.
        offset: u64,
        /// What check failed.
        reason: String,
    },
    /// The path exists but does not hold an AlexDB database.
    #[error("{path} is not an AlexDB database: {reason}")]
    NotADatabase {
        /// The path given to `open`.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// The database does not exist and `create_if_missing` is off.
    #[error("database {0} does not exist (create_if_missing is false)")]
    NotFound(PathBuf),
    /// The database exists and `error_if_exists` is on.
    #[error("database {0} already exists (error_if_exists is true)")]
    AlreadyExists(PathBuf),
    /// Another process holds the database lock.
    #[error("lock {0}: the database is already open in another process")]
    Locked(PathBuf),
    /// Another handle of this process holds the database lock (see
    /// [`crate::db::dir_lock`]).
    #[error(
        "lock {path}: the database is already open in this process (since {acquired_unix_secs}, by thread {thread})"
    )]
    LockedHere {
        /// The lock file.
        path: PathBuf,
        /// When the holder took it, in seconds since the Unix epoch.
        acquired_unix_secs: u64,
        /// The number of the thread that took it.
        thread: u64,
    },
    /// An earlier write or fsync failed; the handle refuses writes until the
    /// database is reopened, because a failed fsync cannot be retried safely.
    #[error("the database refuses writes after an earlier I/O failure: {0}; reopen it to recover")]
    Poisoned(String),
    /// The handle was opened read-only ([`crate::Db::open_read_only`]): it
    /// never writes to the directory, so every write, sync, compaction and
    /// keyspace change is refused. Open the database normally to write.
    #[error("the database {0} is open read-only: writes are refused")]
    ReadOnly(PathBuf),
    /// The version read is a merge that could not be resolved when it was
    /// written: the merge function refused it, or the keyspace had none.
    /// Reads of the key fail until it is put or deleted again.
    #[error("{}", merge_failure_text(*.no_function))]
    MergeFailed {
        /// The key read.
        key: Vec<u8>,
        /// Whether the keyspace had no merge function (otherwise the
        /// function refused an operand).
        no_function: bool,
    },
    /// A key watched by [`crate::Db::write_unless_changed`] or
    /// [`crate::Db::check_unchanged`] was written after the sequence number
    /// the caller read it at; nothing was written.
    #[error(
        "key {key:?} of keyspace {keyspace} was written at sequence {newest_seq}, after sequence {since_seq}"
    )]
    Conflict {
        /// The keyspace of the key.
        keyspace: u32,
        /// The key.
        key: Vec<u8>,
        /// The sequence number the caller read the key at.
        since_seq: u64,
        /// The sequence number of the key's newest version.
        newest_seq: u64,
    },
    /// The log no longer holds the batches asked for: compaction replaced
    /// the log segments that held them.
    #[error("the log no longer holds sequence number {requested}: the oldest kept is {oldest}")]
    HistoryGone {
        /// The first sequence number asked for.
        requested: u64,
        /// The oldest sequence number the log still holds after it.
        oldest: u64,
    },
    /// A write made with `WriteOptions::no_slowdown` while writes are slowed
    /// (compaction is behind); nothing was written.
    #[error("write stall: writes are slowed while compaction catches up")]
    WriteStall,
    /// The operation kept meeting concurrent compaction or writes for
    /// longer than a retry is worth (or its keyspace was dropped under it):
    /// nothing the caller did was wrong, and trying again may succeed.
    #[error("try again: {0}")]
    TryAgain(String),
    /// An operating-system I/O error, with the file it concerns.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

fn merge_failure_text(no_function: bool) -> &'static str {
    if no_function {
        "merge written while the keyspace had no merge function"
    } else {
        "the merge function failed"
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A corruption error at `offset` of `file`.
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// Whether this error reports damaged data.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}
