//! Old versions moved by compaction while a snapshot could still see them.
//!
//! A compaction relocates every version it copies that a reader may still
//! reach by its old location: about as many entries as the records it
//! copies, for as long as a view older than the move lives. The map's
//! table is mapped on its own (`io::transient`), so that the memory of a
//! map pruned away goes back to the system at once, not to the compaction
//! thread's malloc arena.

use hashbrown::{DefaultHashBuilder, HashMap};

use crate::format::location::Location;
use crate::io::transient::{Transient, TransientVec, transient_vec};

/// The map's table.
type Moved = HashMap<Location, Relocation, DefaultHashBuilder, Transient>;

/// Where a moved old version went, and until when it must be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// The copy's new location.
    pub to: Location,
    /// Only snapshots older than this sequence number can need the version.
    pub needed_below: u64,
    /// Encoded size of the copy, counted dead when the entry is dropped (0
    /// for a moved delete: its copy was counted dead when written).
    pub bytes: u64,
}

/// An immutable map from old to new locations, published through
/// `arc-swap`; compaction publishes a new map when it changes.
#[derive(Clone, Debug, Default)]
pub struct Relocations {
    moved: Moved,
}

impl Relocations {
    /// Where the version once at `from` lives now, if it was moved
    /// (`Location::NONE`: the chain ends here).
    pub fn get(&self, from: Location) -> Option<Location> {
        self.moved.get(&from).map(|r| r.to)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.moved.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.moved.is_empty()
    }

    /// A copy with more entries (replacing entries for the same location).
    /// Chains of entries are followed by readers hop by hop, so an entry
    /// whose target moves again stays correct.
    pub fn with(&self, added: &[(Location, Relocation)]) -> Self {
        let mut moved = self.moved.clone();
        moved.extend(added.iter().copied());
        Relocations { moved }
    }

    /// Splits off the entries no snapshot can need any more, given the oldest
    /// live snapshot (`None`: no snapshot at all).
    pub fn prune(&self, oldest_snapshot: Option<u64>) -> (Self, TransientVec<Relocation>) {
        let mut kept = Moved::default();
        let mut dropped = transient_vec();
        for (from, r) in &self.moved {
            if oldest_snapshot.is_some_and(|s| s < r.needed_below) {
                kept.insert(*from, *r);
            } else {
                dropped.push(*r);
            }
        }
        (Relocations { moved: kept }, dropped)
    }

    /// Every (old, relocation) pair.
    pub fn iter(&self) -> impl Iterator<Item = (&Location, &Relocation)> {
        self.moved.iter()
    }
}
