//! From the merged versions of each key to what a reader sees: the newest
//! version wins, deletions and covering range tombstones hide older
//! versions, and merge operands are folded by the caller's merge function.

use crate::entry::Entry;
use crate::error::{FormatError, Result};
use crate::internal_key::ValueKind;
use crate::view::merging::MergingIter;
use crate::view::tombstones::TombstoneSweep;

/// A merge function: `(key, existing value, operands oldest first)` → the
/// merged value, or `None` if the merge fails.
pub type MergeFn = dyn Fn(&[u8], Option<&[u8]>, &[&[u8]]) -> Option<Vec<u8>> + Send + Sync;

/// The live `(key, value)` pairs of one column family, in key order.
pub struct FamilyIter<'a> {
    merged: MergingIter<'a>,
    tombstones: TombstoneSweep,
    merge: Option<&'a MergeFn>,
    family: String,
    operator: String,
    lower: Option<Vec<u8>>,
    peeked: Option<Entry>,
    failed: bool,
}

impl<'a> FamilyIter<'a> {
    /// Resolves `merged` under `tombstones`, folding merges with `merge`;
    /// keys below `lower` are skipped. `family` and `operator` name the
    /// family and its merge operator in errors.
    pub fn new(
        merged: MergingIter<'a>,
        tombstones: TombstoneSweep,
        merge: Option<&'a MergeFn>,
        family: String,
        operator: String,
        lower: Option<Vec<u8>>,
    ) -> Self {
        FamilyIter {
            merged,
            tombstones,
            merge,
            family,
            operator,
            lower,
            peeked: None,
            failed: false,
        }
    }

    fn pull(&mut self) -> Result<Option<Entry>> {
        match self.peeked.take() {
            Some(e) => Ok(Some(e)),
            None => self.merged.next().transpose(),
        }
    }

    /// All versions of the next key, newest first.
    fn next_group(&mut self) -> Result<Option<Vec<Entry>>> {
        let Some(first) = self.pull()? else {
            return Ok(None);
        };
        let mut group = vec![first];
        while let Some(e) = self.merged.next().transpose()? {
            if e.user_key != group[0].user_key {
                self.peeked = Some(e);
                break;
            }
            group.push(e);
        }
        Ok(Some(group))
    }

    fn step(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        while let Some(mut group) = self.next_group()? {
            let key = &group[0].user_key;
            if self.lower.as_ref().is_some_and(|l| key < l) {
                continue;
            }
            let covered = self.tombstones.covering_sequence(key);
            if group[0].kind == ValueKind::Value && group[0].sequence >= covered {
                // The common case: the newest version is a plain value.
                let newest = group.swap_remove(0);
                return Ok(Some((newest.user_key, newest.value)));
            }
            if let Some(value) = self.resolve(&group, covered)? {
                let key = group
                    .into_iter()
                    .next()
                    .map(|e| e.user_key)
                    .unwrap_or_default();
                return Ok(Some((key, value)));
            }
        }
        Ok(None)
    }

    /// The visible value of one key from its versions, newest first.
    fn resolve(&self, group: &[Entry], covered: u64) -> Result<Option<Vec<u8>>> {
        let mut operands: Vec<&[u8]> = Vec::new();
        let mut base: Option<&[u8]> = None;
        for e in group {
            if e.sequence < covered {
                break;
            }
            match e.kind {
                ValueKind::Value => {
                    base = Some(&e.value);
                    break;
                }
                ValueKind::Merge => operands.push(&e.value),
                ValueKind::Delete | ValueKind::SingleDelete | ValueKind::RangeDelete => break,
            }
        }
        if operands.is_empty() {
            return Ok(base.map(<[u8]>::to_vec));
        }
        operands.reverse();
        self.fold(&group[0].user_key, base, &operands).map(Some)
    }

    fn fold(&self, key: &[u8], base: Option<&[u8]>, operands: &[&[u8]]) -> Result<Vec<u8>> {
        let Some(merge) = self.merge else {
            return Err(FormatError::MergeOperatorRequired {
                family: self.family.clone(),
                operator: self.operator.clone(),
            });
        };
        merge(key, base, operands).ok_or_else(|| FormatError::MergeFailed {
            family: self.family.clone(),
            key_len: key.len(),
        })
    }
}

impl Iterator for FamilyIter<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let step = self.step();
        self.failed = step.is_err();
        step.transpose()
    }
}
