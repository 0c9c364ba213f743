//! The mark of the index checkpoint on disk: what it was cut at, so that a
//! close can tell whether a new one is worth writing.

use crate::format::index_checkpoint::Cut;

/// What a checkpoint was cut at: equal marks mean nothing changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CheckpointMark {
    pub(crate) cut: Cut,
    pub(crate) segments: Vec<u32>,
}

impl CheckpointMark {
    /// The mark of a checkpoint with this cut over these segments.
    pub(crate) fn new(cut: Cut, segments: Vec<u32>) -> Self {
        CheckpointMark { cut, segments }
    }
}
