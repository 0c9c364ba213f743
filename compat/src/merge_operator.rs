//! Merge operators: user functions that combine a key's existing value with
//! the operands written by `merge`, set with
//! `Options::set_merge_operator_associative` or `Options::set_merge_operator`.
//!
//! A merge function receives the key, the existing value (if any) and the
//! operands, oldest first, and returns the new value, or `None` to report a
//! failed merge (a read of that key then fails with an error).

use std::fmt;
use std::sync::Arc;

/// The shape of a merge function.
pub trait MergeFn:
    Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync + 'static
{
}

impl<F> MergeFn for F where
    F: Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync + 'static
{
}

/// The operands of one merge, oldest first.
pub struct MergeOperands {
    operands: Vec<Box<[u8]>>,
}

impl MergeOperands {
    /// Collects the operands of a merge, oldest first.
    pub(crate) fn new<I, T>(operands: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        Self {
            operands: operands
                .into_iter()
                .map(|operand| Box::from(operand.as_ref()))
                .collect(),
        }
    }

    /// The number of operands.
    pub fn len(&self) -> usize {
        self.operands.len()
    }

    /// Whether there are no operands.
    pub fn is_empty(&self) -> bool {
        self.operands.is_empty()
    }

    /// Iterates over the operands, oldest first.
    pub fn iter(&self) -> MergeOperandsIter<'_> {
        MergeOperandsIter {
            inner: self.operands.iter(),
        }
    }
}

impl fmt::Debug for MergeOperands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An iterator over [`MergeOperands`].
pub struct MergeOperandsIter<'a> {
    inner: std::slice::Iter<'a, Box<[u8]>>,
}

impl<'a> Iterator for MergeOperandsIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        self.inner.next().map(|operand| &**operand)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl ExactSizeIterator for MergeOperandsIter<'_> {}

impl<'a> IntoIterator for &'a MergeOperands {
    type Item = &'a [u8];
    type IntoIter = MergeOperandsIter<'a>;

    fn into_iter(self) -> MergeOperandsIter<'a> {
        self.iter()
    }
}

/// A merge function as stored in the options.
pub(crate) type SharedMergeFn =
    Arc<dyn Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync>;

/// A named merge operator: its full-merge function and its partial-merge
/// function (the same one for an associative operator).
#[derive(Clone)]
pub(crate) struct MergeOperator {
    pub(crate) name: String,
    pub(crate) full_merge: SharedMergeFn,
    /// Kept for the operator's shape; AlexDB folds operands with the
    /// full-merge function only (see [`Self::engine_function`]), always
    /// over the key's base value, so operands are never combined without it.
    #[allow(dead_code, reason = "operands are always folded over their base")]
    pub(crate) partial_merge: SharedMergeFn,
}

impl MergeOperator {
    /// The engine's merge function for this operator: the full merge of the
    /// key's value with the operands the engine folds together (a key's
    /// stack on a read, in compaction or when a merge resolves it), oldest
    /// first, in one call as RocksDB makes it.
    pub(crate) fn engine_function(&self) -> Arc<dyn alexdb_engine::MergeFunction> {
        Arc::new(FullMerge(self.full_merge.clone()))
    }
}

/// A full-merge function as the engine calls it.
struct FullMerge(SharedMergeFn);

impl alexdb_engine::MergeFunction for FullMerge {
    fn merge(&self, key: &[u8], existing: Option<&[u8]>, operand: &[u8]) -> Option<Vec<u8>> {
        (self.0)(key, existing, &MergeOperands::new([operand]))
    }

    fn merge_many(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Option<Vec<u8>> {
        (self.0)(key, existing, &MergeOperands::new(operands.iter().copied()))
    }
}

impl fmt::Debug for MergeOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergeOperator")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
