//! Multi-version concurrency control.
//!
//! Every write gets a sequence number; a batch's records get consecutive
//! numbers and become visible together when the writer publishes the
//! batch's last number as the *visible sequence*. Each record points to the
//! key's previous version (its `prev` location), so the log itself holds
//! the version chains: a read at snapshot `s` starts at the index's newest
//! version and follows `prev` until it finds a record with sequence ≤ `s`.
//!
//! Snapshots are registered in [`SnapshotRegistry`] so compaction knows
//! which old versions must survive. When compaction moves an old version
//! that a live snapshot can still see, the move is recorded in the
//! [`Relocations`] map, which chain walks consult when a `prev` location
//! points into a segment that no longer exists.

pub mod key_order;
pub(crate) mod merge_stack;
pub mod range_tombstones;
mod registry;
mod relocation;
mod restarts;
pub mod snapshot_guard;

pub use registry::{Holder, SnapshotRegistry, SnapshotSet};
pub use relocation::{Relocation, Relocations};
pub(crate) use restarts::{Attempt, Retry, through_loaded_table};
