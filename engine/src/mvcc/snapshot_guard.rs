//! A snapshot's registration: the sequence number a view is frozen at,
//! held in the snapshot registry so that compaction keeps every version
//! the view can see, and released when the last holder lets go.

use std::sync::Arc;

use crate::db::shared::Shared;
use crate::mvcc::Holder;

/// A registration in the snapshot registry, released on drop. Holds an
/// `Arc` of the database (never an epoch guard), so it may live as long as
/// the caller likes; compaction keeps the versions it can see.
#[derive(Debug)]
pub struct SnapshotGuard {
    pub(crate) shared: Arc<Shared>,
    pub(crate) seq: u64,
    holder: Holder,
}

impl SnapshotGuard {
    pub(crate) fn register(shared: &Arc<Shared>, holder: Holder) -> Self {
        let seq = shared.snapshots.register(&shared.visible_seq, holder);
        SnapshotGuard {
            shared: shared.clone(),
            seq,
            holder,
        }
    }

    /// A second registration at `seq`, which an existing registration
    /// holds already (a snapshot's cursor).
    pub(crate) fn register_at(shared: &Arc<Shared>, seq: u64, holder: Holder) -> Self {
        shared.snapshots.register_at(seq, holder);
        SnapshotGuard {
            shared: shared.clone(),
            seq,
            holder,
        }
    }

    /// The sequence number the view is frozen at.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for SnapshotGuard {
    fn drop(&mut self) {
        self.shared.snapshots.release(self.seq, self.holder);
    }
}
