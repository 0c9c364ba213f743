//! How a database was opened: read-write, read-only or as a secondary.

/// How a database is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads and writes.
    ReadWrite,
    /// Reads only, without the lock (`open_for_read_only`).
    ReadOnly,
    /// Reads only, without the lock, and catches up with the primary on
    /// request (`open_as_secondary`).
    Secondary,
}
