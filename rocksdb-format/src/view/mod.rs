//! What a RocksDB reader sees: every level's tables and the WAL's
//! unflushed writes merged by internal key and resolved per user key.

pub mod level;
pub mod merging;
pub mod resolve;
pub mod tombstones;

pub use resolve::{FamilyIter, MergeFn};
