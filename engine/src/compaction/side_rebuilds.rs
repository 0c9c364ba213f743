//! The compaction thread's other job: rebuilding large subtrees of the
//! keyspaces' indexes to the side (see `index::side_rebuild`), so that no
//! write holds the writer lock through a rebuild of millions of keys.
//!
//! The thread turns rebuilds to the side on for every keyspace it sees
//! (a database without the thread keeps rebuilding under the lock), and
//! runs the rebuilds writers asked for while it holds the compaction lock:
//! no segment is removed meanwhile, so a resolver over the newest segment
//! table resolves every location the index held since the rebuild began.

use std::cell::Cell;
use std::sync::Arc;

use crate::db::keyspace::Keyspace;
use crate::db::shared::Shared;
use crate::index::{KeyResolver, SIDE_REBUILD_KEYS};
use crate::segment::SegmentTable;

/// Sends `ks`'s large rebuilds to the side: for every keyspace of a
/// database with a compaction thread, from its open or creation on (turned
/// on only at the thread's next pass, a keyspace loaded right after it was
/// created rebuilt subtrees of 400,000 keys under the lock).
pub(crate) fn enable(ks: &Keyspace) {
    ks.index.set_side_rebuild_above(Some(SIDE_REBUILD_KEYS));
}

/// Runs every pending rebuild; returns how many were installed.
pub(crate) fn run(shared: &Shared) -> u64 {
    let _no_compaction = shared
        .compaction_lock
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut installed = 0;
    for ks in shared.keyspaces.load().iter() {
        enable(ks);
        while ks
            .index
            .rebuild_to_the_side(|| NewestTable::new(shared.segments.load_full()))
        {
            installed += 1;
        }
    }
    installed
}

/// Resolves locations through the segment table published when it was
/// made, remembering whether one was missing.
struct NewestTable {
    table: Arc<SegmentTable>,
    missed: Cell<bool>,
}

impl NewestTable {
    fn new(table: Arc<SegmentTable>) -> Self {
        NewestTable {
            table,
            missed: Cell::new(false),
        }
    }
}

impl KeyResolver for NewestTable {
    fn key(&self, payload: u64) -> &[u8] {
        crate::segment::resolver::key_in(&self.table, payload, &self.missed)
    }

    fn failed(&self) -> bool {
        self.missed.get()
    }
}
