//! One stored version of a key, as tables and the WAL hold it.

use std::cmp::Ordering;

use crate::internal_key::{self, ValueKind};

/// A key's version: user key, sequence number, kind and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The user key.
    pub user_key: Vec<u8>,
    /// The sequence number.
    pub sequence: u64,
    /// What the entry does.
    pub kind: ValueKind,
    /// The value or merge operand (empty for deletions).
    pub value: Vec<u8>,
}

impl Entry {
    /// Internal key order: user key ascending, newest first.
    pub fn cmp_internal(&self, other: &Entry) -> Ordering {
        internal_key::compare(
            (&self.user_key, self.sequence, self.kind),
            (&other.user_key, other.sequence, other.kind),
        )
    }
}
