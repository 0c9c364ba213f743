//! Building nodes from the model keys the index already holds.
//!
//! Every data node stores each entry's model key under its projection.
//! When nodes are rebuilt (a bulk load of a subtree, a split), the new
//! nodes' model keys follow from the stored ones whenever the new
//! projection is the old one or a prefix of it (see
//! [`Projection::reprojection_from`]), and only the first and last key of
//! each new node (for its projection) and the entries whose model keys do
//! not follow are read through the [`KeyResolver`]. In the engine every
//! resolved key is a random read of the log: once the log outgrows the page
//! cache (100M keys), a rebuild that read every key at every level read the
//! disk for minutes.

use std::borrow::Cow;
use std::ops::Range;

use super::KeyResolver;
use super::data_node::DataNode;
use super::projection::{Projection, Reprojection};

/// `from` of an entry whose model key is not known.
const UNKNOWN: u32 = u32::MAX;

/// Entries gathered from data nodes in key order, with the model keys they
/// had there.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// The entries' payloads.
    payloads: Vec<u64>,
    /// Each entry's model key under `projs[from[i]]`.
    mks: Vec<u64>,
    /// Index into `projs` per entry, or `UNKNOWN`.
    from: Vec<u32>,
    /// The projections of the nodes the entries came from (a node with the
    /// same projection as the one before adds none).
    projs: Vec<Projection>,
}

impl Collected {
    /// An empty collection with room for `n` entries.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Collected {
            payloads: Vec::with_capacity(n),
            mks: Vec::with_capacity(n),
            from: Vec::with_capacity(n),
            projs: Vec::new(),
        }
    }

    /// Appends the entries of `node`, which must all be above the ones
    /// collected so far (or be removed by [`Self::dedup`]).
    pub(crate) fn push_node(&mut self, node: &DataNode) {
        if self.projs.last() != Some(&node.proj) {
            self.projs.push(node.proj.clone());
        }
        let from = u32::try_from(self.projs.len() - 1).unwrap_or(UNKNOWN);
        for slot in node.occupied() {
            self.payloads.push(slot.payload());
            self.mks.push(slot.mk);
            self.from.push(from);
        }
    }

    /// Appends entries whose model keys are not known (a packed leaf's),
    /// above the ones collected so far.
    pub(crate) fn push_unknown(&mut self, payloads: &[u64]) {
        self.payloads.extend_from_slice(payloads);
        self.mks.extend(payloads.iter().map(|_| 0));
        self.from.extend(payloads.iter().map(|_| UNKNOWN));
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.payloads.len()
    }

    /// The entries, their keys read through `resolver`.
    pub(crate) fn entries<'a, R>(&'a self, resolver: &'a R) -> Entries<'a, R> {
        Entries {
            handles: Handles::Listed(&self.payloads),
            resolver,
            known: Some(Known {
                mks: &self.mks,
                from: &self.from,
                projs: &self.projs,
            }),
        }
    }

    /// Drops every entry whose key is not above the last kept one's (a node
    /// read twice across a concurrent split). Compares model keys where two
    /// entries share a projection and reads keys through `resolver` only
    /// where that cannot decide.
    pub(crate) fn dedup<R: KeyResolver>(&mut self, resolver: &R) {
        let mut kept = 0;
        for i in 0..self.len() {
            if kept == 0 || self.is_above(i, kept - 1, resolver) {
                self.payloads[kept] = self.payloads[i];
                self.mks[kept] = self.mks[i];
                self.from[kept] = self.from[i];
                kept += 1;
            }
        }
        self.payloads.truncate(kept);
        self.mks.truncate(kept);
        self.from.truncate(kept);
    }

    /// Whether entry `i`'s key is above entry `j`'s.
    fn is_above<R: KeyResolver>(&self, i: usize, j: usize, resolver: &R) -> bool {
        let (fi, fj) = (self.from[i], self.from[j]);
        let comparable =
            fi != UNKNOWN && fj != UNKNOWN && self.projs[fi as usize] == self.projs[fj as usize];
        if comparable {
            // Model keys are monotone in the key under one projection.
            match self.mks[i].cmp(&self.mks[j]) {
                std::cmp::Ordering::Greater => return true,
                std::cmp::Ordering::Less => return false,
                std::cmp::Ordering::Equal if self.payloads[i] == self.payloads[j] => return false,
                std::cmp::Ordering::Equal => {}
            }
        }
        resolver.key(self.payloads[i]) > resolver.key(self.payloads[j])
    }
}

/// What is known of a run of entries' keys: parallel to their handles.
#[derive(Clone, Copy, Debug)]
struct Known<'a> {
    mks: &'a [u64],
    from: &'a [u32],
    projs: &'a [Projection],
}

/// The handles of a run of entries: listed, or (for entries given by
/// position, as an index checkpoint's) the consecutive numbers of a range,
/// which take no memory.
#[derive(Clone, Copy, Debug)]
enum Handles<'a> {
    Listed(&'a [u64]),
    /// Handles `start..end`.
    Counting {
        start: u64,
        end: u64,
    },
}

impl Handles<'_> {
    /// Number of handles.
    fn len(&self) -> usize {
        match self {
            Handles::Listed(h) => h.len(),
            Handles::Counting { start, end } => (end - start) as usize,
        }
    }

    /// Handle number `i`.
    fn get(&self, i: usize) -> u64 {
        match self {
            Handles::Listed(h) => h[i],
            Handles::Counting { start, .. } => {
                debug_assert!(i < self.len());
                start + i as u64
            }
        }
    }

    /// The handles numbered `range`.
    fn slice(&self, range: Range<usize>) -> Self {
        match self {
            Handles::Listed(h) => Handles::Listed(&h[range]),
            Handles::Counting { start, .. } => {
                assert!(range.start <= range.end && range.end <= self.len());
                Handles::Counting {
                    start: start + range.start as u64,
                    end: start + range.end as u64,
                }
            }
        }
    }
}

/// Entries to build nodes from: handles in key order, each turned into its
/// full key through the resolver, and the model keys known for them, if
/// any.
#[derive(Debug)]
pub(crate) struct Entries<'a, R> {
    handles: Handles<'a>,
    resolver: &'a R,
    known: Option<Known<'a>>,
}

impl<R> Clone for Entries<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Entries<'_, R> {}

impl<'a, R: KeyResolver> Entries<'a, R> {
    /// Entries of which only the handles are known.
    pub(crate) fn unknown(handles: &'a [u64], resolver: &'a R) -> Self {
        Entries {
            handles: Handles::Listed(handles),
            resolver,
            known: None,
        }
    }

    /// `n` entries given by position: handles `0..n`.
    pub(crate) fn by_position(n: usize, resolver: &'a R) -> Self {
        Entries {
            handles: Handles::Counting {
                start: 0,
                end: n as u64,
            },
            resolver,
            known: None,
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// The entries' handles (borrowed when listed).
    pub(crate) fn handles(&self) -> Cow<'a, [u64]> {
        match self.handles {
            Handles::Listed(h) => Cow::Borrowed(h),
            Handles::Counting { start, end } => Cow::Owned((start..end).collect()),
        }
    }

    /// The handle of entry `i`.
    pub(crate) fn handle(&self, i: usize) -> u64 {
        self.handles.get(i)
    }

    /// The full key of entry `i`.
    pub(crate) fn key(&self, i: usize) -> &'a [u8] {
        self.resolver.key(self.handles.get(i))
    }

    /// The entries in `range`.
    pub(crate) fn slice(&self, range: Range<usize>) -> Self {
        Entries {
            handles: self.handles.slice(range.clone()),
            resolver: self.resolver,
            known: self.known.map(|k| Known {
                mks: &k.mks[range.clone()],
                from: &k.from[range],
                projs: k.projs,
            }),
        }
    }

    /// The projection of a node built from these entries (reads the first
    /// and last key).
    pub(crate) fn projection(&self) -> Projection {
        match self.len() {
            0 => Projection::default(),
            n => Projection::for_range(self.key(0), self.key(n - 1)),
        }
    }

    /// Every entry's model key under `proj`: from the known model keys
    /// where they determine it, else from the key.
    pub(crate) fn model_keys(&self, proj: &Projection) -> Vec<u64> {
        let Some(known) = self.known else {
            return (0..self.len())
                .map(|i| proj.model_key(self.key(i)))
                .collect();
        };
        // Entries come from few nodes in runs: one reprojection per run.
        let mut run: Option<(u32, Reprojection)> = None;
        (0..self.len())
            .map(|i| {
                let from = known.from[i];
                let how = match run {
                    Some((f, how)) if f == from => how,
                    _ => {
                        let how = known
                            .projs
                            .get(from as usize)
                            .map_or(Reprojection::Unknown, |p| proj.reprojection_from(p));
                        run = Some((from, how));
                        how
                    }
                };
                how.apply(known.mks[i])
                    .unwrap_or_else(|| proj.model_key(self.key(i)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::data_node::tests::Keys;
    use super::*;

    /// A resolver that counts its reads.
    struct Counting<'k> {
        keys: &'k Keys,
        reads: std::cell::Cell<usize>,
    }

    impl KeyResolver for Counting<'_> {
        fn key(&self, payload: u64) -> &[u8] {
            self.reads.set(self.reads.get() + 1);
            self.keys.key(payload)
        }
    }

    fn node(keys: &Keys, payloads: &[u64]) -> DataNode {
        DataNode::from_entries(Entries::unknown(payloads, keys), None)
    }

    /// Keys with a long shared prefix, some shorter than the prefix plus 8
    /// bytes, some with trailing zero bytes, some far longer.
    fn shaped_keys() -> Keys {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for i in 0..300u32 {
            let mut k = b"tenant:0042:user:".to_vec();
            k.extend_from_slice(&(i / 3).to_be_bytes());
            match i % 3 {
                0 => {}
                1 => k.extend_from_slice(&[0, 0]),
                _ => k.extend_from_slice(&[9; 13]),
            }
            keys.push(k);
        }
        keys.push(b"tenant:0043".to_vec());
        keys.push(b"tenant:0042".to_vec());
        keys.sort();
        Keys(keys)
    }

    /// The model keys reused from nodes equal the ones computed from the
    /// keys, under the nodes' own projections, shorter ones and longer ones.
    #[test]
    fn known_model_keys_are_the_keys_model_keys() {
        let keys = shaped_keys();
        // The two outliers (the first and last key) in nodes of their own.
        let n = keys.0.len() as u64;
        let mut collected = Collected::default();
        collected.push_node(&node(&keys, &[0]));
        for chunk in (1..n - 1).collect::<Vec<_>>().chunks(37) {
            collected.push_node(&node(&keys, chunk));
        }
        collected.push_node(&node(&keys, &[n - 1]));
        let counting = Counting {
            keys: &keys,
            reads: 0.into(),
        };
        let entries = collected.entries(&counting);
        let prefixes: [&[u8]; 6] = [
            b"",
            b"ten",
            b"tenant:0042:",
            b"tenant:0042:user:",
            b"tenant:0042:user:\0\0\0\x05",
            b"x",
        ];
        for prefix in prefixes {
            // Keys sharing `prefix` and two more bytes: `prefix` itself.
            let proj = Projection::for_range(
                &[prefix, b"\0\0\0"].concat(),
                &[prefix, b"\0\0\x01"].concat(),
            );
            for range in [0..entries.len(), 10..20, 37..74] {
                let part = entries.slice(range.clone());
                let expected: Vec<u64> = range
                    .clone()
                    .map(|i| proj.model_key(keys.key(i as u64)))
                    .collect();
                assert_eq!(part.model_keys(&proj), expected, "{prefix:?} {range:?}");
            }
        }
        // Without the two outliers, the set's own projection is a prefix of
        // every node's, at most 8 bytes shorter: two reads, for it.
        let inner = entries.slice(1..entries.len() - 1);
        let before = counting.reads.get();
        let proj = inner.projection();
        inner.model_keys(&proj);
        assert_eq!(counting.reads.get() - before, 2);
    }

    /// Dedup keeps the first of each key and drops whatever is not above
    /// the last kept key, like a scan of full keys does.
    #[test]
    fn dedup_matches_a_comparison_of_full_keys() {
        let keys = shaped_keys();
        let n = keys.0.len() as u64;
        let mut collected = Collected::default();
        // Nodes read across concurrent splits: overlapping runs.
        for (from, to) in [(0, 40), (30, 90), (90, 91), (85, 200), (200, n)] {
            let payloads: Vec<u64> = (from..to).collect();
            collected.push_node(&node(&keys, &payloads));
        }
        collected.dedup(&keys);
        assert_eq!(collected.payloads, (0..n).collect::<Vec<_>>());
        let entries = collected.entries(&keys);
        let proj = entries.projection();
        let expected: Vec<u64> = (0..n).map(|p| proj.model_key(keys.key(p))).collect();
        assert_eq!(entries.model_keys(&proj), expected);
    }
}
