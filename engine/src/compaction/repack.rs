//! The compaction thread's third job: packing the index leaves that writes
//! made after the open, once a keyspace has stopped taking new keys.
//!
//! An open builds the index with packed leaves (about 6 bytes a key, see
//! `index::packed_leaf`); the leaves splits and rebuilds make afterwards are
//! data nodes (about 20 bytes a key), which take new keys cheaply. A
//! database filled by writes would keep those until its next open. Here,
//! once a keyspace's key count has not changed for [`QUIET`], its data
//! nodes are packed in place ([`crate::index::AlexIndex::pack_leaves`],
//! under the index's writer lock, reading no key), once per such quiet
//! spell: a keyspace that keeps taking keys keeps its data nodes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::db::keyspace::KeyspaceId;
use crate::db::shared::Shared;

/// How long a keyspace's key count must stay unchanged before its data
/// nodes are packed.
pub(crate) const QUIET: Duration = Duration::from_secs(2);

/// What the compaction thread saw of each keyspace's key count.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    seen: HashMap<KeyspaceId, Seen>,
}

/// A keyspace's key count when last seen changed, and whether its leaves
/// were packed since.
#[derive(Debug)]
struct Seen {
    keys: usize,
    since: Instant,
    packed: bool,
}

/// Packs the data nodes of every keyspace (of a database that packs its
/// index) whose key count stayed unchanged for [`QUIET`] since it last
/// changed, if not packed since; returns how many leaves were packed.
pub(crate) fn run(shared: &Shared, watch: &mut Watch) -> usize {
    if !shared.options.pack_index_when_quiet {
        return 0;
    }
    let now = Instant::now();
    let keyspaces = shared.keyspaces.load();
    watch
        .seen
        .retain(|id, _| keyspaces.iter().any(|ks| ks.id() == *id));
    let mut packed = 0;
    for ks in keyspaces.iter() {
        let keys = ks.index.len();
        let seen = watch.seen.entry(ks.id()).or_insert(Seen {
            keys,
            since: now,
            packed: false,
        });
        if seen.keys != keys {
            *seen = Seen {
                keys,
                since: now,
                packed: false,
            };
        } else if !seen.packed && now.duration_since(seen.since) >= QUIET {
            packed += ks.index.pack_leaves();
            seen.packed = true;
        }
    }
    packed
}
