//! A k-way merge of sorted entry streams into one stream in internal-key
//! order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::entry::Entry;
use crate::error::Result;

/// A sorted stream of entries.
pub type EntryStream<'a> = Box<dyn Iterator<Item = Result<Entry>> + 'a>;

/// The head of one stream in the heap, ordered so the smallest internal key
/// pops first.
struct Head {
    entry: Entry,
    source: usize,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .entry
            .cmp_internal(&self.entry)
            .then_with(|| other.source.cmp(&self.source))
    }
}

/// Merges streams, each sorted in internal-key order.
pub struct MergingIter<'a> {
    sources: Vec<EntryStream<'a>>,
    heap: BinaryHeap<Head>,
    started: bool,
    failed: bool,
}

impl<'a> MergingIter<'a> {
    /// A merge of `sources`.
    pub fn new(sources: Vec<EntryStream<'a>>) -> Self {
        MergingIter {
            sources,
            heap: BinaryHeap::new(),
            started: false,
            failed: false,
        }
    }

    fn refill(&mut self, source: usize) -> Result<()> {
        if let Some(next) = self.sources[source].next() {
            self.heap.push(Head {
                entry: next?,
                source,
            });
        }
        Ok(())
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        for i in 0..self.sources.len() {
            self.refill(i)?;
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<Entry>> {
        if !self.started {
            self.start()?;
        }
        let Some(head) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill(head.source)?;
        Ok(Some(head.entry))
    }
}

impl Iterator for MergingIter<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let step = self.step();
        if step.is_err() {
            self.failed = true;
        }
        step.transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internal_key::ValueKind;

    fn e(key: &str, seq: u64) -> Result<Entry> {
        Ok(Entry {
            user_key: key.as_bytes().to_vec(),
            sequence: seq,
            kind: ValueKind::Value,
            value: Vec::new(),
        })
    }

    #[test]
    fn merges_newest_first_within_a_key() {
        let a: EntryStream<'_> = Box::new(vec![e("a", 1), e("c", 5)].into_iter());
        let b: EntryStream<'_> = Box::new(vec![e("a", 7), e("b", 2)].into_iter());
        let got: Vec<(Vec<u8>, u64)> = MergingIter::new(vec![a, b])
            .map(|r| r.map(|e| (e.user_key, e.sequence)).unwrap())
            .collect();
        let want = [("a", 7), ("a", 1), ("b", 2), ("c", 5)];
        assert_eq!(got, want.map(|(k, s)| (k.as_bytes().to_vec(), s)).to_vec());
    }
}
