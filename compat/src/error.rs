//! The error type of the rocksdb API: a status message, classified by its prefix.
//!
//! RocksDB reports every failure as a `Status` rendered to text, such as
//! `"Invalid argument: Column families not opened: cf1"`. The rocksdb crate
//! keeps only that text, and [`Error::kind`] recovers the category from the
//! part before the first `':'`. AlexDB builds its messages with the same
//! prefixes, so code that matches on [`ErrorKind`] or on message text behaves
//! the same against either crate.

use std::fmt;

/// The category of an [`Error`], derived from its message prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `"NotFound"`: a key, file or column family does not exist.
    NotFound,
    /// `"Corruption"`: stored data failed validation.
    Corruption,
    /// `"Not implemented"`: the operation is not supported.
    NotSupported,
    /// `"Invalid argument"`: the caller passed something that cannot be used.
    InvalidArgument,
    /// `"IO error"`: the file system reported a failure.
    IOError,
    /// `"Merge in progress"`.
    MergeInProgress,
    /// `"Result incomplete"`: the answer needs data the read was not allowed to fetch.
    Incomplete,
    /// `"Shutdown in progress"`.
    ShutdownInProgress,
    /// `"Operation timed out"`.
    TimedOut,
    /// `"Operation aborted"`.
    Aborted,
    /// `"Resource busy"`: for example a transaction conflict.
    Busy,
    /// `"Operation expired"`.
    Expired,
    /// `"Operation failed. Try again."`.
    TryAgain,
    /// `"Compaction too large"`.
    CompactionTooLarge,
    /// `"Column family dropped"`.
    ColumnFamilyDropped,
    /// Any other message.
    Unknown,
}

impl ErrorKind {
    /// The status prefix RocksDB writes before the detail of a message of this kind.
    fn prefix(self) -> &'static str {
        match self {
            Self::NotFound => "NotFound",
            Self::Corruption => "Corruption",
            Self::NotSupported => "Not implemented",
            Self::InvalidArgument => "Invalid argument",
            Self::IOError => "IO error",
            Self::MergeInProgress => "Merge in progress",
            Self::Incomplete => "Result incomplete",
            Self::ShutdownInProgress => "Shutdown in progress",
            Self::TimedOut => "Operation timed out",
            Self::Aborted => "Operation aborted",
            Self::Busy => "Resource busy",
            Self::Expired => "Operation expired",
            Self::TryAgain => "Operation failed. Try again.",
            Self::CompactionTooLarge => "Compaction too large",
            Self::ColumnFamilyDropped => "Column family dropped",
            Self::Unknown => "Unknown",
        }
    }

    /// Every kind that has a prefix of its own, for the reverse lookup.
    const PREFIXED: [Self; 15] = [
        Self::NotFound,
        Self::Corruption,
        Self::NotSupported,
        Self::InvalidArgument,
        Self::IOError,
        Self::MergeInProgress,
        Self::Incomplete,
        Self::ShutdownInProgress,
        Self::TimedOut,
        Self::Aborted,
        Self::Busy,
        Self::Expired,
        Self::TryAgain,
        Self::CompactionTooLarge,
        Self::ColumnFamilyDropped,
    ];
}

/// An error from any operation: a RocksDB-style status message.
///
/// `Display` prints the message unchanged; [`Error::kind`] classifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

#[allow(
    dead_code,
    reason = "one constructor per RocksDB status; not every status is produced yet"
)]
impl Error {
    /// Wraps a complete message, which should already carry a status prefix.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// Builds `"<prefix>: <detail>"` for `kind`, exactly as RocksDB's
    /// `Status::ToString` does (an empty detail still leaves `"<prefix>: "`).
    pub(crate) fn with_kind(kind: ErrorKind, detail: impl fmt::Display) -> Self {
        Self::new(format!("{}: {detail}", kind.prefix()))
    }

    /// `"NotFound: <detail>"`.
    pub(crate) fn not_found(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::NotFound, detail)
    }

    /// `"Corruption: <detail>"`.
    pub(crate) fn corruption(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::Corruption, detail)
    }

    /// `"Not implemented: <detail>"`.
    pub(crate) fn not_supported(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::NotSupported, detail)
    }

    /// `"Invalid argument: <detail>"`.
    pub(crate) fn invalid_argument(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::InvalidArgument, detail)
    }

    /// `"IO error: <detail>"`.
    pub(crate) fn io(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::IOError, detail)
    }

    /// `"Resource busy: <detail>"`.
    pub(crate) fn busy(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::Busy, detail)
    }

    /// `"Result incomplete: <detail>"`.
    pub(crate) fn incomplete(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::Incomplete, detail)
    }

    /// `"Operation aborted: <detail>"`.
    pub(crate) fn aborted(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::Aborted, detail)
    }

    /// `"Operation timed out: <detail>"`.
    pub(crate) fn timed_out(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::TimedOut, detail)
    }

    /// `"Operation failed. Try again.: <detail>"`.
    pub(crate) fn try_again(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::TryAgain, detail)
    }

    /// `"Shutdown in progress: <detail>"`.
    pub(crate) fn shutdown_in_progress(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::ShutdownInProgress, detail)
    }

    /// `"Column family dropped: <detail>"`.
    pub(crate) fn column_family_dropped(detail: impl fmt::Display) -> Self {
        Self::with_kind(ErrorKind::ColumnFamilyDropped, detail)
    }

    /// Consumes the error and returns its message.
    pub fn into_string(self) -> String {
        self.message
    }

    /// Classifies the error by the text before the first `':'` of its message.
    pub fn kind(&self) -> ErrorKind {
        let head = self.message.split(':').next().unwrap_or("");
        ErrorKind::PREFIXED
            .into_iter()
            .find(|kind| kind.prefix() == head)
            .unwrap_or(ErrorKind::Unknown)
    }
}

impl AsRef<str> for Error {
    fn as_ref(&self) -> &str {
        &self.message
    }
}

impl From<Error> for String {
    fn from(error: Error) -> String {
        error.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message.fmt(f)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::{Error, ErrorKind};

    #[test]
    fn constructors_round_trip_through_kind() {
        assert_eq!(Error::not_found("k").kind(), ErrorKind::NotFound);
        assert_eq!(Error::corruption("x").kind(), ErrorKind::Corruption);
        assert_eq!(Error::not_supported("x").kind(), ErrorKind::NotSupported);
        assert_eq!(
            Error::invalid_argument("x").kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(Error::io("x").kind(), ErrorKind::IOError);
        assert_eq!(Error::busy("x").kind(), ErrorKind::Busy);
        assert_eq!(Error::incomplete("x").kind(), ErrorKind::Incomplete);
        assert_eq!(Error::aborted("x").kind(), ErrorKind::Aborted);
        assert_eq!(Error::timed_out("x").kind(), ErrorKind::TimedOut);
        assert_eq!(Error::try_again("x").kind(), ErrorKind::TryAgain);
        assert_eq!(
            Error::shutdown_in_progress("x").kind(),
            ErrorKind::ShutdownInProgress
        );
        assert_eq!(
            Error::column_family_dropped("x").kind(),
            ErrorKind::ColumnFamilyDropped
        );
    }

    #[test]
    fn kind_reads_rocksdb_status_prefixes() {
        let cases = [
            ("NotFound: ", ErrorKind::NotFound),
            ("Corruption: bad block", ErrorKind::Corruption),
            ("Not implemented: x", ErrorKind::NotSupported),
            (
                "Invalid argument: Column families not opened: a",
                ErrorKind::InvalidArgument,
            ),
            (
                "IO error: While lock file: /d/LOCK: Resource temporarily unavailable",
                ErrorKind::IOError,
            ),
            ("Merge in progress: ", ErrorKind::MergeInProgress),
            ("Result incomplete: ", ErrorKind::Incomplete),
            ("Shutdown in progress: ", ErrorKind::ShutdownInProgress),
            (
                "Operation timed out: Timeout waiting to lock key",
                ErrorKind::TimedOut,
            ),
            ("Operation aborted: ", ErrorKind::Aborted),
            ("Resource busy: ", ErrorKind::Busy),
            ("Operation expired: ", ErrorKind::Expired),
            ("Operation failed. Try again.: ", ErrorKind::TryAgain),
            ("Compaction too large: ", ErrorKind::CompactionTooLarge),
            ("Column family dropped: ", ErrorKind::ColumnFamilyDropped),
            ("Unknown code(99): ", ErrorKind::Unknown),
            ("NotFound", ErrorKind::NotFound),
            ("", ErrorKind::Unknown),
        ];
        for (message, kind) in cases {
            assert_eq!(Error::new(message).kind(), kind, "{message:?}");
        }
    }

    #[test]
    fn message_text_matches_rocksdb_status() {
        assert_eq!(
            Error::io("While lock file: /d/LOCK: busy").to_string(),
            "IO error: While lock file: /d/LOCK: busy"
        );
        assert_eq!(Error::not_found("").to_string(), "NotFound: ");
        assert_eq!(Error::new("plain text").kind(), ErrorKind::Unknown);
    }
}
