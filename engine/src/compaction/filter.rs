//! Compaction filters: a keyspace's function that compaction asks about
//! each key it rewrites, which may keep the key, remove it, change its
//! value, or remove it and the keys after it up to a bound (RocksDB's
//! `CompactionFilter`, whose rules it follows; see `docs/design.md`,
//! "Compaction filters").
//!
//! Set one with [`crate::Db::set_compaction_filter`]. At the start of each
//! compaction that holds keys of the keyspace, compaction calls
//! [`CompactionFilter::start`] with what the compaction is
//! ([`FilterContext`]) and asks the [`FilterRun`] it gets about each key,
//! in key order, whose newest version is a put in that compaction's input:
//!
//! * The filter sees each key's newest version only, whatever snapshots
//!   are open (as RocksDB does since 6.0, which ignores snapshots for
//!   filters): an open snapshot that saw the version sees what the filter
//!   decided once the compaction is installed. Older versions kept for
//!   snapshots are copied as they are, never shown to the filter.
//! * [`Decision::Remove`] turns the version into a delete of the same
//!   sequence number, so older versions of the key never come back (not
//!   from a segment outside the compaction, not after a reopen); the delete
//!   itself is dropped at once when nothing older survives anywhere.
//! * [`Decision::Change`] keeps the version, with the new value.
//! * [`Decision::RemoveAndSkipUntil`] removes the key and every key after
//!   it below the bound that the compaction holds, without asking the
//!   filter about them; a bound at or below the key keeps it.
//! * Deletes and merges are never shown to the filter (merges are stored
//!   with their resolved value, not as operands: see `write/merge.rs`); a
//!   key in a `RemoveAndSkipUntil` range is removed whatever its kind.
//!
//! What a filter decided is durable as the compaction is: the output the
//! MANIFEST names holds it, the inputs are gone, and recovery rebuilds the
//! index from the output. A crash before the compaction commits leaves the
//! inputs, which the next compaction filters again.

use crate::db::keyspace::KeyspaceId;

/// What a filter decides about one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Keep the key's version as it is.
    Keep,
    /// Remove the key (its version becomes a delete).
    Remove,
    /// Keep the key with this value instead (at most
    /// [`crate::MAX_VALUE_BYTES`]; a longer one fails the compaction).
    Change(Vec<u8>),
    /// Remove the key and every key after it, below this one, that the
    /// compaction holds, without asking the filter about them. A bound at
    /// or below the key keeps the key, as in RocksDB.
    RemoveAndSkipUntil(Vec<u8>),
}

/// What a compaction is, as told to a filter when a run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterContext {
    /// The keyspace whose keys the run decides.
    pub keyspace: KeyspaceId,
    /// The compaction rewrites every segment that holds data: the whole
    /// database is in its inputs (RocksDB's `is_full_compaction`).
    pub full: bool,
    /// No segment outside the compaction holds a version older than the
    /// ones it rewrites: every sealed segment is an input, and only the
    /// active log segment (newer writes) is left out.
    pub bottommost: bool,
    /// The compaction was asked for ([`crate::Db::compact`]), rather than
    /// started by the background thread or
    /// [`crate::Db::wait_for_compaction`].
    pub manual: bool,
}

/// A keyspace's compaction filter: makes a [`FilterRun`] for each
/// compaction (RocksDB's filter factory, which may also hand out one
/// stateless filter every time).
pub trait CompactionFilter: Send + Sync {
    /// Starts a run over one compaction's keys of the keyspace. The run is
    /// used on the compaction's thread, in key order, and dropped when the
    /// compaction has asked about its last key of the keyspace.
    fn start(&self, context: &FilterContext) -> Box<dyn FilterRun + '_>;
}

/// One compaction's filter over one keyspace.
pub trait FilterRun {
    /// Decides about `key`, whose newest version is a put of `value`.
    fn decide(&mut self, key: &[u8], value: &[u8]) -> Decision;
}

impl<F: FnMut(&[u8], &[u8]) -> Decision> FilterRun for F {
    fn decide(&mut self, key: &[u8], value: &[u8]) -> Decision {
        self(key, value)
    }
}

impl<F> CompactionFilter for F
where
    F: Fn(&[u8], &[u8]) -> Decision + Send + Sync,
{
    fn start(&self, _context: &FilterContext) -> Box<dyn FilterRun + '_> {
        Box::new(move |key: &[u8], value: &[u8]| self(key, value))
    }
}

/// A keyspace's filter as the keyspace keeps it (none, or one shared with
/// the compactions that run it).
#[derive(Clone, Default)]
pub(crate) struct FilterSlot(pub(crate) Option<std::sync::Arc<dyn CompactionFilter>>);

impl std::fmt::Debug for FilterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(_) => f.write_str("FilterSlot(set)"),
            None => f.write_str("FilterSlot(none)"),
        }
    }
}
