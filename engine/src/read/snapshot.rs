//! Snapshots: a consistent, frozen view of the whole database.

use std::sync::Arc;

use crate::db::keyspace::{Keyspace, KeyspaceId};
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::mvcc::Holder;
use crate::mvcc::snapshot_guard::SnapshotGuard;
use crate::read::iter::{Cursor, KeyRange};
use crate::read::{self, PinnedValue, ValueRef};
use crate::write::batch::check_key;

/// A frozen view of every keyspace at one sequence number: reads through
/// it see exactly the state when it was taken, whatever is written, deleted
/// or compacted afterwards. Owned and `Send + Sync`.
///
/// A keyspace dropped after the snapshot was taken is not part of the view:
/// reads of it fail with [`Error::InvalidArgument`] (the drop frees the
/// keyspace's index at once, and compaction its records).
#[derive(Debug)]
pub struct Snapshot {
    guard: Arc<SnapshotGuard>,
}

impl Snapshot {
    pub(crate) fn new(shared: &Arc<Shared>) -> Self {
        Self::held_by(shared, Holder::Snapshot)
    }

    /// A snapshot registered for `holder`.
    pub(crate) fn held_by(shared: &Arc<Shared>, holder: Holder) -> Self {
        Snapshot {
            guard: Arc::new(SnapshotGuard::register(shared, holder)),
        }
    }

    /// The sequence number the view is frozen at.
    pub fn seq(&self) -> u64 {
        self.guard.seq
    }

    /// Reads `key` from `keyspace` as of the snapshot, without copying.
    pub fn get(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<ValueRef>> {
        Ok(self.get_pinned(keyspace, key)?.map(|v| v.to_value_ref()))
    }

    /// Reads `key` as of the snapshot, without copying and without touching
    /// any shared reference count (see [`PinnedValue`]).
    pub fn get_pinned(&self, keyspace: KeyspaceId, key: &[u8]) -> Result<Option<PinnedValue>> {
        let shared = &self.guard.shared;
        let keyspaces = shared.keyspaces.load();
        let ks = keyspaces.get(keyspace).ok_or_else(|| missing(keyspace))?;
        read::get_pinned(shared, ks, key, Some(self.guard.seq))
    }

    /// Reads every key of `keys` from `keyspace` as of the snapshot and
    /// hands each result to `each`, with the key's position in `keys`, in
    /// order; a value is borrowed from the map for the call only. Faster
    /// per key than [`Self::get_pinned`] in a loop: the index lookups of
    /// several keys go down the tree together, so their cache misses
    /// overlap. Fails only if `keyspace` does not exist; a key over the
    /// maximum size gets its own error.
    pub fn get_many_with<F>(&self, keyspace: KeyspaceId, keys: &[&[u8]], mut each: F) -> Result<()>
    where
        F: FnMut(usize, Result<Option<&[u8]>>),
    {
        self.read_many(keyspace, keys, &mut |at, found| match found {
            Ok(Some(f)) => each(at, Ok(Some(f.bytes()))),
            Ok(None) => each(at, Ok(None)),
            Err(e) => each(at, Err(e)),
        })
    }

    /// [`Self::get_many_with`], collecting a handle on each value found
    /// (each keeps its segment mapped, as [`Self::get`]'s does).
    pub fn get_many(
        &self,
        keyspace: KeyspaceId,
        keys: &[&[u8]],
    ) -> Result<Vec<Result<Option<ValueRef>>>> {
        let mut values = Vec::with_capacity(keys.len());
        self.read_many(keyspace, keys, &mut |_, found| {
            values.push(found.map(|f| f.as_ref().map(read::Found::to_value_ref)));
        })?;
        Ok(values)
    }

    /// Reads `keys` of `keyspace` as of the snapshot, batched unless a key
    /// is over the size limit, handing each result to `each`.
    fn read_many(
        &self,
        keyspace: KeyspaceId,
        keys: &[&[u8]],
        each: &mut read::EachFound<'_>,
    ) -> Result<()> {
        let shared = &self.guard.shared;
        let keyspaces = shared.keyspaces.load();
        let ks = keyspaces.get(keyspace).ok_or_else(|| missing(keyspace))?;
        let seq = self.guard.seq;
        if keys.iter().all(|key| check_key(key).is_ok()) {
            read::get_many_with(shared, ks, keys, seq, each);
            return Ok(());
        }
        for (at, key) in keys.iter().enumerate() {
            let read = check_key(key).and_then(|()| read::get_pinned(shared, ks, key, Some(seq)));
            read::hand_over(at, read, each);
        }
        Ok(())
    }

    /// A cursor over `keyspace` within `range`, as of the snapshot.
    pub fn cursor(&self, keyspace: KeyspaceId, range: KeyRange) -> Result<Cursor> {
        let ks = keyspace_of(&self.guard.shared, keyspace)?;
        let guard = SnapshotGuard::register_at(&self.guard.shared, self.guard.seq, Holder::Cursor);
        Ok(Cursor::new(guard, ks, range))
    }
}

/// Finds a live keyspace by id.
pub(crate) fn keyspace_of(shared: &Shared, id: KeyspaceId) -> Result<Arc<Keyspace>> {
    shared
        .keyspaces
        .load()
        .get(id)
        .cloned()
        .ok_or_else(|| missing(id))
}

/// The error for an unknown or dropped keyspace.
pub(crate) fn missing(id: KeyspaceId) -> Error {
    Error::InvalidArgument(format!("keyspace {} does not exist (dropped?)", id.0))
}
