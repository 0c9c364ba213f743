//! Lock-free ordered scans.
//!
//! A scan descends once to the leaf holding its start, remembering the path,
//! then walks leaves in slot order by climbing that path. Concurrent writes
//! may relink slots while it walks, so a leaf it reaches can hold entries it
//! has already returned (a node's replacement holds the node's entries):
//! every leaf is therefore entered by seeking past the last entry returned.
//! Nothing is returned twice or out of order, and entries present for the
//! whole scan are found: every slot, when read, leads to a node holding all
//! entries routed there.

use std::ops::Bound;

use crossbeam_epoch::Guard;
use smallvec::SmallVec;

use super::inner_node::InnerNode;
use super::leaf::Leaf;
use super::node::{Link, Node, NodeRef};
use super::{KeyResolver, ScanDirection};

/// An inner node on the scan's path, the slot taken and the child there.
struct Level<'g> {
    inner: &'g InnerNode,
    slot: usize,
    child: NodeRef<'g>,
}

/// The inner nodes above the scan's leaf, root first: inline for trees up
/// to 8 levels deep, so a short scan allocates nothing for it.
type Path<'g> = SmallVec<[Level<'g>; 8]>;

/// See [`super::AlexIndex::collect`].
pub(crate) fn collect<R: KeyResolver>(
    root: &Link,
    from: Bound<&[u8]>,
    dir: ScanDirection,
    limit: usize,
    resolver: &R,
    guard: &Guard,
    out: &mut Vec<u64>,
) {
    if limit == 0 {
        return;
    }
    let mut path = Path::new();
    let mut leaf = descend(root.load(guard), from, dir, guard, &mut path);
    let mut last: Option<u64> = None;
    let mut taken = 0;
    loop {
        let bound = match last {
            Some(p) => Bound::Excluded(resolver.key(p)),
            None => from,
        };
        let mut pos = start(leaf, bound, dir, limit - taken, resolver);
        while let Some(p) = pos {
            let payload = leaf.payload_at(p);
            out.push(payload);
            last = Some(payload);
            taken += 1;
            if taken == limit {
                return;
            }
            pos = match dir {
                ScanDirection::Forward => leaf.next_occupied(p + 1),
                ScanDirection::Reverse => leaf.prev_occupied(p),
            };
        }
        match next_leaf(&mut path, dir, guard) {
            Some(next) => leaf = next,
            None => return,
        }
    }
}

/// Descends from `node` to the leaf where `from` starts, pushing the path.
fn descend<'g>(
    mut node: NodeRef<'g>,
    from: Bound<&[u8]>,
    dir: ScanDirection,
    guard: &'g Guard,
    path: &mut Path<'g>,
) -> Leaf<'g> {
    loop {
        match node.get() {
            Node::Data(data) => return Leaf::Dense(data),
            Node::Packed(packed) => return Leaf::Packed(packed),
            Node::Inner(inner) => {
                let slot = match (from, dir) {
                    (Bound::Included(k) | Bound::Excluded(k), _) => inner.route_hinting(k),
                    (Bound::Unbounded, ScanDirection::Forward) => 0,
                    (Bound::Unbounded, ScanDirection::Reverse) => inner.slots() - 1,
                };
                node = inner.child(slot, guard);
                path.push(Level {
                    inner,
                    slot,
                    child: node,
                });
            }
        }
    }
}

/// The leaf after (or before, in reverse) the current one, climbing the
/// path as far as needed and descending to the first (last) leaf below.
fn next_leaf<'g>(path: &mut Path<'g>, dir: ScanDirection, guard: &'g Guard) -> Option<Leaf<'g>> {
    while let Some(level) = path.last_mut() {
        let (inner, child) = (level.inner, level.child);
        let mut slot = level.slot;
        let next = loop {
            let step = match dir {
                ScanDirection::Forward => (slot + 1 < inner.slots()).then(|| slot + 1),
                ScanDirection::Reverse => slot.checked_sub(1),
            };
            match step {
                Some(s) if inner.child(s, guard).ptr_eq(child) => slot = s,
                other => break other,
            }
        };
        match next {
            Some(s) => {
                level.slot = s;
                level.child = inner.child(s, guard);
                let node = level.child;
                return Some(descend(node, Bound::Unbounded, dir, guard, path));
            }
            None => {
                path.pop();
            }
        }
    }
    None
}

/// Records hinted to the CPU when a scan starts at a key (see [`start`]).
const PREFETCHED_AT_SEEK: usize = 16;

/// The first occupied slot of `leaf` to return for `bound`. Seeking a key
/// compares it with the record of the entry found, a cache miss; the
/// records of the `wanted` entries from there are hinted first, so that
/// their misses overlap it instead of following it.
fn start<R: KeyResolver>(
    leaf: Leaf<'_>,
    bound: Bound<&[u8]>,
    dir: ScanDirection,
    wanted: usize,
    resolver: &R,
) -> Option<usize> {
    let key = match bound {
        Bound::Unbounded => {
            return match dir {
                ScanDirection::Forward => leaf.next_occupied(0),
                ScanDirection::Reverse => leaf.prev_occupied(leaf.end()),
            };
        }
        Bound::Included(k) | Bound::Excluded(k) => k,
    };
    let prefetched = wanted.min(PREFETCHED_AT_SEEK);
    let (ge, equal) = match leaf {
        Leaf::Dense(data) => {
            let mk = data.model_key(key);
            let found = data.lower_bound(mk);
            prefetch_near(leaf, found.0, dir, prefetched, resolver);
            let (ge, equal, _) = data.seek_ge_from(found, key, mk, resolver);
            (ge, equal)
        }
        Leaf::Packed(packed) => {
            let at = packed.first_not_below(packed.model_key(key));
            prefetch_near(leaf, at, dir, prefetched, resolver);
            packed.seek_ge(key, resolver)
        }
    };
    let included = matches!(bound, Bound::Included(_));
    match dir {
        ScanDirection::Forward if equal && !included => ge.and_then(|p| leaf.next_occupied(p + 1)),
        ScanDirection::Forward => ge,
        ScanDirection::Reverse if equal && included => ge,
        ScanDirection::Reverse => leaf.prev_occupied(ge.unwrap_or(leaf.end())),
    }
}

/// Hints the records of up to `n` entries of `leaf` from slot `at` on in
/// direction `dir` (the entry at `at` too, going in reverse).
fn prefetch_near<R: KeyResolver>(
    leaf: Leaf<'_>,
    at: usize,
    dir: ScanDirection,
    n: usize,
    resolver: &R,
) {
    let mut pos = match dir {
        ScanDirection::Forward => leaf.next_occupied(at),
        ScanDirection::Reverse => leaf.prev_occupied((at + 1).min(leaf.end())),
    };
    for _ in 0..n {
        let Some(p) = pos else { return };
        resolver.prefetch(leaf.payload_at(p));
        pos = match dir {
            ScanDirection::Forward => leaf.next_occupied(p + 1),
            ScanDirection::Reverse => leaf.prev_occupied(p),
        };
    }
}
