//! Translation of engine errors into RocksDB status messages.
//!
//! Each engine error becomes the message RocksDB gives for the same
//! situation, so code that matches on [`crate::ErrorKind`] or on the text
//! (`"Invalid argument: ..."`, `".../LOCK: ..."`) behaves the same.

use std::path::Path;

use alexdb_engine::Error as EngineError;
use alexdb_engine::key_locks::LockError;

use crate::Error;

/// The message RocksDB gives when another handle holds `lock_path`.
pub(crate) fn lock_error(lock_path: &Path) -> Error {
    Error::io(format_args!(
        "While lock file: {}: Resource temporarily unavailable",
        rocksdb_path(lock_path)
    ))
}

/// `path` as RocksDB names a file of a database directory in its messages:
/// the directory, `/`, the file's name, on every platform (RocksDB builds
/// the name as `dbname + "/LOCK"`; a Windows path joins with `\`).
pub(crate) fn rocksdb_path(path: &Path) -> String {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => {
            format!("{}/{}", dir.display(), name.to_string_lossy())
        }
        _ => path.display().to_string(),
    }
}

/// RocksDB's message for a lock this process already holds through the
/// same path.
pub(crate) fn held_here_error(lock_path: &Path, acquired_unix_secs: u64, thread: u64) -> Error {
    Error::io(format_args!(
        "lock hold by current process, acquire time {acquired_unix_secs} acquiring thread \
         {thread}: {}: No locks available",
        rocksdb_path(lock_path)
    ))
}

/// RocksDB's message for opening a missing database without `create_if_missing`.
pub(crate) fn missing_db_error(dir: &Path) -> Error {
    Error::invalid_argument(format_args!(
        "{}/CURRENT: does not exist (create_if_missing is false)",
        dir.display()
    ))
}

/// Converts an engine error into the equivalent RocksDB status.
pub(crate) fn from_engine(error: EngineError) -> Error {
    from_engine_ref(&error)
}

/// Converts a borrowed engine error into the equivalent RocksDB status.
pub(crate) fn from_engine_ref(error: &EngineError) -> Error {
    match error {
        EngineError::Locked(lock_path) => lock_error(lock_path),
        EngineError::LockedHere {
            path,
            acquired_unix_secs,
            thread,
        } => held_here_error(path, *acquired_unix_secs, *thread),
        EngineError::NotFound(dir) => missing_db_error(dir),
        EngineError::AlreadyExists(dir) => Error::invalid_argument(format_args!(
            "{}: exists (error_if_exists is true)",
            dir.display()
        )),
        EngineError::InvalidArgument(detail) => Error::invalid_argument(detail),
        EngineError::Corruption { .. } => Error::corruption(error),
        // RocksDB's texts: `Status::Corruption(kMergeOperatorFailed)` and
        // the iterator's missing-operator status.
        EngineError::MergeFailed {
            no_function: false, ..
        } => Error::corruption("Merge operator failed"),
        EngineError::MergeFailed {
            no_function: true, ..
        } => Error::invalid_argument("merge_operator_ must be set."),
        EngineError::NotADatabase { .. } => Error::invalid_argument(error),
        EngineError::Io { .. } | EngineError::Poisoned(_) => Error::io(error),
        // What a read-only handle says to every write (a secondary's own
        // write calls say "secondary mode" before reaching the engine).
        EngineError::ReadOnly(_) => {
            Error::not_supported("Not supported operation in read only mode.")
        }
        // RocksDB's write conflict is a bare `Status::Busy()`.
        EngineError::Conflict { .. } => Error::busy(""),
        // RocksDB's `Status::Incomplete("Write stall")`.
        EngineError::WriteStall => Error::incomplete("Write stall"),
        EngineError::TryAgain(detail) => Error::try_again(detail),
        EngineError::HistoryGone { .. } => {
            Error::not_found(format_args!("Gap in sequence numbers ({error})"))
        }
        other => Error::io(other),
    }
}

/// RocksDB's status for a key lock that was not granted.
pub(crate) fn from_lock_error(error: &LockError) -> Error {
    match error {
        LockError::TimedOut => Error::timed_out("Timeout waiting to lock key"),
        LockError::Deadlock => Error::busy("Deadlock"),
        LockError::LimitReached(_) => {
            Error::busy("Failed to acquire lock due to max_num_locks limit")
        }
        other => Error::busy(other),
    }
}

/// `Result` conversion shorthand.
pub(crate) trait IntoRocks<T> {
    /// Maps the engine error, if any, to a RocksDB status.
    fn rocks(self) -> Result<T, Error>;
}

impl<T> IntoRocks<T> for Result<T, EngineError> {
    fn rocks(self) -> Result<T, Error> {
        self.map_err(from_engine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// A write made with `no_slowdown` while writes are slowed fails as
    /// RocksDB's does: `Status::Incomplete("Write stall")`.
    #[test]
    fn a_refused_slow_write_is_rocksdbs_write_stall() {
        let error = from_engine(EngineError::WriteStall);
        assert_eq!(error.kind(), ErrorKind::Incomplete);
        assert_eq!(error.to_string(), "Result incomplete: Write stall");
    }
}
