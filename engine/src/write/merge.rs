//! Merge operands: a write that combines an operand with a key's current
//! value through a function the user registers per keyspace.
//!
//! The engine resolves a merge when it is written, under the writer lock:
//! the record stores the operand and the value it resolved to (see
//! `FORMAT.md`), so every read path serves a merge like a put, a snapshot
//! sees the value as of its sequence number, and compaction copies the
//! record on its own without the versions under it. A merge the function
//! refuses, or one written while the keyspace has no function, is stored
//! as such and makes reads of that version fail until the key is put or
//! deleted again.

use std::fmt;
use std::sync::Arc;

use crate::format::record::{MergeState, RecordKind};

/// Combines a key's existing value (if any) with one operand.
///
/// Operands of one key are applied one at a time, oldest first, so a
/// function over a list of operands must give the same result as applying
/// them one by one (the contract RocksDB also asks of merge operators).
pub trait MergeFunction: Send + Sync {
    /// The new value of `key`, or `None` if the operand cannot be applied
    /// (reads of the result then fail).
    fn merge(&self, key: &[u8], existing: Option<&[u8]>, operand: &[u8]) -> Option<Vec<u8>>;
}

impl<F> MergeFunction for F
where
    F: Fn(&[u8], Option<&[u8]>, &[u8]) -> Option<Vec<u8>> + Send + Sync,
{
    fn merge(&self, key: &[u8], existing: Option<&[u8]>, operand: &[u8]) -> Option<Vec<u8>> {
        self(key, existing, operand)
    }
}

/// A keyspace's merge function, shared.
#[derive(Clone)]
pub struct SharedMergeFunction(pub Arc<dyn MergeFunction>);

impl fmt::Debug for SharedMergeFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedMergeFunction")
    }
}

/// The value a key holds at some point, as far as a merge is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MergeBase {
    /// The key has no value.
    Absent,
    /// The key has this value.
    Value(Vec<u8>),
    /// The key's current version is a merge that could not be resolved.
    Unresolved(MergeState),
}

impl MergeBase {
    /// What a version of `kind` in `state` holding `value` gives a merge to
    /// build on.
    pub(crate) fn of(kind: RecordKind, state: MergeState, value: &[u8]) -> Self {
        match (kind, state) {
            (RecordKind::Delete | RecordKind::RangeDelete, _) => MergeBase::Absent,
            (_, MergeState::Resolved) => MergeBase::Value(value.to_vec()),
            (_, state) => MergeBase::Unresolved(state),
        }
    }
}

/// Resolves `operand` over `base` with `function`: the state to record and
/// the resolved value (empty unless resolved).
pub(crate) fn resolve(
    function: Option<&SharedMergeFunction>,
    key: &[u8],
    base: &MergeBase,
    operand: &[u8],
) -> (MergeState, Vec<u8>) {
    let Some(function) = function else {
        return (MergeState::NoFunction, Vec::new());
    };
    let existing = match base {
        MergeBase::Absent => None,
        MergeBase::Value(v) => Some(v.as_slice()),
        MergeBase::Unresolved(state) => return (*state, Vec::new()),
    };
    match function.0.merge(key, existing, operand) {
        Some(value) => (MergeState::Resolved, value),
        None => (MergeState::Failed, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append() -> SharedMergeFunction {
        SharedMergeFunction(Arc::new(
            |_: &[u8], existing: Option<&[u8]>, operand: &[u8]| {
                let mut v = existing.unwrap_or_default().to_vec();
                v.extend_from_slice(operand);
                Some(v)
            },
        ))
    }

    #[test]
    fn resolves_over_absent_and_present_values() {
        let f = append();
        assert_eq!(
            resolve(Some(&f), b"k", &MergeBase::Absent, b"a"),
            (MergeState::Resolved, b"a".to_vec())
        );
        assert_eq!(
            resolve(Some(&f), b"k", &MergeBase::Value(b"xy".to_vec()), b"z"),
            (MergeState::Resolved, b"xyz".to_vec())
        );
    }

    #[test]
    fn failures_stick_until_overwritten() {
        let refuse = SharedMergeFunction(Arc::new(|_: &[u8], _: Option<&[u8]>, _: &[u8]| None));
        let (state, _) = resolve(Some(&refuse), b"k", &MergeBase::Absent, b"a");
        assert_eq!(state, MergeState::Failed);
        let (state, _) = resolve(
            Some(&append()),
            b"k",
            &MergeBase::Unresolved(MergeState::Failed),
            b"a",
        );
        assert_eq!(state, MergeState::Failed);
        let (state, _) = resolve(None, b"k", &MergeBase::Absent, b"a");
        assert_eq!(state, MergeState::NoFunction);
    }
}
