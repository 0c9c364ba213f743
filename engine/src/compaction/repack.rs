//! The compaction thread's third job: once a keyspace's index has been
//! left alone for a while, packing the index leaves writes made after the
//! open and giving the index heap's free memory back to the system.
//!
//! An open builds the index with packed leaves (about 6 bytes a key, see
//! `index::packed_leaf`); the leaves splits and rebuilds make afterwards are
//! data nodes (about 20 bytes a key), which take new keys cheaply. A
//! database filled by writes would keep those until its next open. Here,
//! once no write has changed a keyspace's index for [`QUIET`] (no key
//! added, removed or repointed: overwrites and compaction's moves count,
//! see [`crate::index::AlexIndex::changes`]), its data nodes are packed in
//! place ([`crate::index::AlexIndex::pack_leaves`], under the index's
//! writer lock, reading no key), once per such quiet spell: a keyspace
//! that keeps taking writes keeps its data nodes.
//!
//! Either way the heap then holds free blocks: the data nodes a load
//! copied as they grew, the ones packing replaced. Most lie in pages other
//! blocks still use, so they stay resident (a 1M-key store filled by puts
//! held 2.4 bytes free for each byte in use). In the same quiet spell,
//! if the heap holds more than a quarter of its used bytes free
//! ([`TRIM_WHEN_FREE_ABOVE_USED_OVER`]), every 4 KiB page of it that
//! holds only free blocks goes back to the system
//! ([`crate::index::trim_node_heap`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::db::keyspace::KeyspaceId;
use crate::db::shared::Shared;

/// How long a keyspace's index must stay unchanged before its data nodes
/// are packed and the heap trimmed.
pub(crate) const QUIET: Duration = Duration::from_secs(2);

/// The heap is trimmed when its free resident bytes exceed its used bytes
/// divided by this: trimming splits the huge pages it touches, which
/// costs lookups a little, so a heap with little to give back keeps them.
pub(crate) const TRIM_WHEN_FREE_ABOVE_USED_OVER: usize = 4;

/// What the compaction thread saw of each keyspace's index changes.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    seen: HashMap<KeyspaceId, Seen>,
}

/// A keyspace's index change count when last seen changed, and whether
/// its quiet spell was acted on (leaves packed, heap trimmed) since.
#[derive(Debug)]
struct Seen {
    changes: u64,
    since: Instant,
    settled: bool,
}

/// For every keyspace whose index stayed unchanged for [`QUIET`]
/// since it last changed, once per such spell: packs its data nodes (in a
/// database that packs its index when quiet), then trims the index heap
/// if it holds enough free memory. Returns how many leaves were packed.
pub(crate) fn run(shared: &Shared, watch: &mut Watch) -> usize {
    let now = Instant::now();
    let keyspaces = shared.keyspaces.load();
    watch
        .seen
        .retain(|id, _| keyspaces.iter().any(|ks| ks.id() == *id));
    let mut packed = 0;
    for ks in keyspaces.iter() {
        let changes = ks.index.changes();
        let seen = watch.seen.entry(ks.id()).or_insert(Seen {
            changes,
            since: now,
            settled: false,
        });
        if seen.changes != changes {
            *seen = Seen {
                changes,
                since: now,
                settled: false,
            };
        } else if !seen.settled && now.duration_since(seen.since) >= QUIET {
            if shared.options.pack_index_when_quiet {
                packed += ks.index.pack_leaves();
            }
            crate::index::trim_node_heap(TRIM_WHEN_FREE_ABOVE_USED_OVER);
            crate::io::transient::return_free_malloc_memory();
            seen.settled = true;
        }
    }
    packed
}
