//! The runner's one error type: a message a user can act on.

use std::fmt;

/// Anything that stops a benchmark: an engine error, an I/O error, a child
/// process that failed, or bad arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchError(pub String);

/// Shorthand for results in this crate.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

impl BenchError {
    /// An error with `context` prepended to this one's message.
    pub fn context(self, context: &str) -> Self {
        BenchError(format!("{context}: {}", self.0))
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl From<String> for BenchError {
    fn from(message: String) -> Self {
        BenchError(message)
    }
}

impl From<&str> for BenchError {
    fn from(message: &str) -> Self {
        BenchError(message.to_string())
    }
}

macro_rules! from_display {
    ($($ty:ty => $what:literal),* $(,)?) => {
        $(impl From<$ty> for BenchError {
            fn from(e: $ty) -> Self {
                BenchError(format!(concat!($what, ": {}"), e))
            }
        })*
    };
}

from_display! {
    std::io::Error => "I/O error",
    serde_json::Error => "JSON error",
    alexdb_engine::Error => "alexdb-engine",
    alexdb::Error => "alexdb",
    rocksdb::Error => "rocksdb",
    rusqlite::Error => "sqlite",
    heed::Error => "lmdb",
}
