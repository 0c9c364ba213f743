//! Merge operands: a write that combines an operand with a key's current
//! value through a function the user registers per keyspace.
//!
//! A merge is stored as its operand alone, on top of the key's *stack* of
//! operands (see `FORMAT.md`, "merge" under Records, and
//! `mvcc::merge_stack`): a read folds the stack over its base
//! value, so a merge costs what its operand costs, however large the value
//! grows. The writer resolves a merge instead (folds the stack and the
//! operand and stores the value with the operand) when the stack would pass
//! the keyspace's limit ([`DEFAULT_MERGE_STACK_LIMIT`]), when it would reach
//! into a segment other than the one the record goes to, when the key's
//! value is a failed merge, or when the value is small (a counter: see
//! `write/stacking.rs`); compaction folds every stack it copies. A merge
//! the function refuses, or one written while the keyspace has no function,
//! makes reads of that version fail until the key is put or deleted again.

use std::fmt;
use std::sync::Arc;

use crate::format::record::MergeState;

/// The most operand records a key's stack holds unless the keyspace sets
/// its own limit ([`crate::Db::set_merge_stack_limit`]): a read folds at
/// most this many operands, and a merge that would pass it resolves the
/// stack, writing the value (so writes of a growing value cost about
/// 1/32 of the value each on average, and a read folds 32 operands at
/// most).
pub const DEFAULT_MERGE_STACK_LIMIT: u16 = 32;

/// Combines a key's existing value (if any) with operands, oldest first.
///
/// A key's operands may be applied in one call or in several (a call with
/// the result of another as `existing`), so a function over a list of
/// operands must give the same result as applying them one by one (the
/// contract RocksDB also asks of merge operators).
pub trait MergeFunction: Send + Sync {
    /// The new value of `key`, or `None` if the operand cannot be applied
    /// (reads of the result then fail).
    fn merge(&self, key: &[u8], existing: Option<&[u8]>, operand: &[u8]) -> Option<Vec<u8>>;

    /// The new value of `key` after `operands`, oldest first, or `None` if
    /// they cannot be applied. By default [`Self::merge`] applies them one
    /// at a time; a function that can take them together (an append that
    /// sizes its result once) should.
    fn merge_many(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Option<Vec<u8>> {
        let (first, rest) = operands.split_first()?;
        let mut value = self.merge(key, existing, first)?;
        for operand in rest {
            value = self.merge(key, Some(&value), operand)?;
        }
        Some(value)
    }
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

/// Applies `operands` (oldest first) to `existing` with `function`: the
/// state to record and the resolved value (empty unless resolved).
pub(crate) fn apply(
    function: Option<&SharedMergeFunction>,
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &[&[u8]],
) -> (MergeState, Vec<u8>) {
    let Some(function) = function else {
        return (MergeState::NoFunction, Vec::new());
    };
    match function.0.merge_many(key, existing, operands) {
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
    fn applies_over_absent_and_present_values() {
        let f = append();
        assert_eq!(
            apply(Some(&f), b"k", None, &[b"a"]),
            (MergeState::Resolved, b"a".to_vec())
        );
        assert_eq!(
            apply(Some(&f), b"k", Some(b"xy"), &[b"z"]),
            (MergeState::Resolved, b"xyz".to_vec())
        );
        assert_eq!(
            apply(Some(&f), b"k", Some(b"x"), &[b"y", b"z"]),
            (MergeState::Resolved, b"xyz".to_vec())
        );
    }

    #[test]
    fn a_refusal_or_no_function_is_recorded_as_such() {
        let refuse = SharedMergeFunction(Arc::new(|_: &[u8], _: Option<&[u8]>, _: &[u8]| None));
        let (state, value) = apply(Some(&refuse), b"k", None, &[b"a", b"b"]);
        assert_eq!((state, value.len()), (MergeState::Failed, 0));
        let (state, _) = apply(None, b"k", None, &[b"a"]);
        assert_eq!(state, MergeState::NoFunction);
    }

    #[test]
    fn the_default_merge_many_stops_at_the_first_refusal() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let refuse_b = |_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (operand != b"b").then(|| [old.unwrap_or_default(), operand].concat())
        };
        assert_eq!(refuse_b.merge_many(b"k", None, &[b"a", b"b", b"c"]), None);
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
