//! The read path: point reads ([`get`]), snapshots ([`snapshot`]), cursors
//! ([`iter`]) and the log read back as batches ([`log_reader`]).

mod get;
pub mod iter;
pub mod log_reader;
pub mod snapshot;

pub(crate) use get::*;
pub use get::{PinnedValue, ValueRef};
