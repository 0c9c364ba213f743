//! The set of live segments, published as an immutable value through
//! `arc-swap`: readers load it without locking; writers publish a new one.

use std::sync::Arc;

use super::Segment;
use crate::format::location::Location;

/// An immutable, id-sorted list of live segments.
#[derive(Debug, Default, Clone)]
pub struct SegmentTable {
    segments: Vec<Arc<Segment>>,
    /// The segments' ids, in the same order: [`SegmentTable::get`] (once
    /// per read, and per entry at open) searches these in one array instead
    /// of following a pointer to each segment it compares.
    ids: Vec<u32>,
}

impl SegmentTable {
    /// Adds `bytes` to the dead bytes of the segment holding `loc` (none if
    /// the table no longer holds it).
    pub(crate) fn add_dead_at(&self, loc: Location, bytes: u64) {
        if let Some(segment) = self.get(loc.segment()) {
            segment.add_dead(bytes);
        }
    }

    /// Adds the size of the record at `loc` to its segment's dead bytes:
    /// the one place a replaced or removed version is counted dead.
    pub(crate) fn account_dead(&self, loc: Location) {
        if let Some(segment) = self.get(loc.segment())
            && let Ok(record) = segment.record_at(loc.offset(), false)
        {
            segment.add_dead(record.encoded_len as u64);
        }
    }

    /// Whether the segments' maps are advised random access (a database
    /// larger than memory, see `segment::map_advice`: every map is advised
    /// alike, so the first segment tells).
    pub(crate) fn read_at_random(&self) -> bool {
        self.segments.first().is_some_and(|s| s.read_at_random())
    }

    /// A table of the given segments (sorted here by id).
    pub fn new(mut segments: Vec<Arc<Segment>>) -> Self {
        segments.sort_by_key(|s| s.id());
        let ids = segments.iter().map(|s| s.id()).collect();
        SegmentTable { segments, ids }
    }

    /// The segment with this id, if it is live.
    pub fn get(&self, id: u32) -> Option<&Arc<Segment>> {
        self.ids.binary_search(&id).ok().map(|i| &self.segments[i])
    }

    /// Every live segment, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Segment>> {
        self.segments.iter()
    }

    /// Number of live segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether there are no segments.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// A copy of this table with `segment` added.
    pub fn with(&self, segment: Arc<Segment>) -> Self {
        let mut segments = self.segments.clone();
        segments.push(segment);
        Self::new(segments)
    }

    /// A copy of this table without the segments whose ids are listed.
    pub fn without(&self, ids: &[u32]) -> Self {
        let segments = self
            .segments
            .iter()
            .filter(|s| !ids.contains(&s.id()))
            .cloned()
            .collect();
        Self::new(segments)
    }
}
