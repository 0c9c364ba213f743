//! The write path, in the order a batch takes it.
//!
//! A [`batch`] is queued ([`queue`], led by [`leader`]); the queue's leader forms a [`group`],
//! whose batches are planned ([`plan`]: merges stacked or resolved by
//! [`stacking`] with the functions of [`merge`], range deletes resolved) and checked for conflicts ([`conflicts`], for
//! transactions; [`key_locks`] for pessimistic ones and [`prepared`] for
//! two-phase commits). The [`log_writer`] appends the group to the active
//! log segment, applies it to the index and rotates segments; [`durable`]
//! syncs it as a group commit; [`throttle`] slows writers while compaction
//! is behind.

pub mod batch;
pub(crate) mod conflicts;
pub(crate) mod durable;
pub(crate) mod group;
pub mod key_locks;
pub(crate) mod leader;
pub(crate) mod log_writer;
pub mod merge;
pub(crate) mod plan;
pub(crate) mod prepared;
pub(crate) mod queue;
pub(crate) mod stacking;
pub(crate) mod throttle;
pub(crate) mod writer;
