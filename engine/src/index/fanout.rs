//! Choosing an inner node's fanout and grouping its slots into children.
//!
//! A simplified version of ALEX's fanout tree: for each power-of-2 fanout
//! in a range around `keys / target`, train the node's model, group
//! consecutive slots greedily into children of about `target` keys (a
//! child then fills several slots, ALEX's duplicate pointers), where the
//! target is the leaves' ([`LeafSizes`]: data nodes', or packed leaves',
//! which are bigger), and price the result with the cost model: each
//! child's expected search and copy cost from a trial fit of its keys, one
//! more inner level for a slot too crowded for a data node, and a small
//! cost per slot. The cheapest fanout wins.

use std::ops::Range;

use super::cost::{
    self, INNER_LEVEL_NS, INNER_SLOT_NS, LEAF_BUILD_MAX_KEYS, MAX_INNER_SLOTS, TARGET_LEAF_KEYS,
};
use super::model::LinearModel;

/// Slots and keys (indices into the sorted build keys) of one child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// The slots the child fills.
    pub(crate) slots: Range<usize>,
    /// The child's keys.
    pub(crate) keys: Range<usize>,
}

/// The layout of an inner node.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The node's model, over `fanout` slots.
    pub(crate) model: LinearModel,
    /// Number of slots, a power of 2.
    pub(crate) fanout: usize,
    /// Children in slot order, covering every slot.
    pub(crate) groups: Vec<Group>,
    cost: f64,
}

/// The sizes of the leaves a bulk load builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeafSizes {
    /// Keys per leaf the grouping of slots aims for.
    pub(crate) target: usize,
    /// Most keys in one leaf.
    pub(crate) build_max: usize,
}

/// Data nodes' sizes.
pub(crate) const DATA_NODE_SIZES: LeafSizes = LeafSizes {
    target: TARGET_LEAF_KEYS,
    build_max: LEAF_BUILD_MAX_KEYS,
};

/// Packed leaves' sizes: their fixed cost (node, group table, the heap's
/// rounding of four allocations) spread over more entries, about 0.5 byte
/// an entry at 1,024 of them, against 2.5 bytes at data nodes' 192; a
/// lookup searches one more cache line of window floors.
pub(crate) const PACKED_LEAF_SIZES: LeafSizes = LeafSizes {
    target: 1024,
    build_max: 1536,
};

/// The cheapest plan for an inner node over the sorted model keys `mks`
/// (at least two distinct), with children of about `sizes.target` keys.
pub(crate) fn choose(mks: &[u64], sizes: LeafSizes) -> Plan {
    let (lo, hi) = fanout_range(mks.len(), sizes);
    let mut best: Option<Plan> = None;
    let mut fanout = lo;
    while fanout <= hi {
        let plan = plan_for(mks, fanout, sizes);
        if best.as_ref().is_none_or(|b| plan.cost < b.cost) {
            best = Some(plan);
        }
        fanout *= 2;
    }
    best.unwrap_or_else(|| plan_for(mks, 2, sizes))
}

/// The fanouts priced for a node over `n` keys: powers of 2 from about
/// `n / LEAF_BUILD_MAX_KEYS` (fewer would leave every child too big for a
/// data node) to about `4 n / TARGET_LEAF_KEYS`, all within
/// `2..=MAX_INNER_SLOTS`. Over about 37.7M keys even the largest fanout
/// leaves children too big for data nodes; they become inner nodes.
fn fanout_range(n: usize, sizes: LeafSizes) -> (usize, usize) {
    let lo = prev_pow2(n / sizes.build_max).clamp(2, MAX_INNER_SLOTS);
    let hi = (n.saturating_mul(4) / sizes.target)
        .checked_next_power_of_two()
        .unwrap_or(MAX_INNER_SLOTS)
        .clamp(lo, MAX_INNER_SLOTS);
    (lo, hi)
}

fn prev_pow2(x: usize) -> usize {
    if x == 0 { 1 } else { 1 << x.ilog2() }
}

/// Above this many children, a plan's key cost is estimated from an even
/// sample of about this many of them (a 10M-key root has 50,000).
const COSTED_GROUPS: usize = 4096;

/// The plan for a given fanout, with its cost.
fn plan_for(mks: &[u64], fanout: usize, sizes: LeafSizes) -> Plan {
    let model = LinearModel::fit(mks, fanout as f64);
    let groups = group_slots(mks, &model, fanout, sizes.target);
    let stride = groups.len().div_ceil(COSTED_GROUPS);
    let (mut sampled_cost, mut sampled_keys) = (0.0, 0);
    for g in groups.iter().step_by(stride) {
        sampled_cost += group_cost(&mks[g.keys.clone()], sizes);
        sampled_keys += g.keys.len();
    }
    let cost = sampled_cost / sampled_keys.max(1) as f64
        + INNER_SLOT_NS * fanout as f64 / mks.len() as f64;
    Plan {
        model,
        fanout,
        groups,
        cost,
    }
}

/// Total cost of the keys of one child.
fn group_cost(mks: &[u64], sizes: LeafSizes) -> f64 {
    let n = mks.len();
    if n <= sizes.build_max {
        return n as f64 * cost::data_node_cost(mks);
    }
    let leaf = cost::data_node_cost(&mks[..sizes.target]);
    n as f64 * (INNER_LEVEL_NS + leaf)
}

/// Greedy grouping: a slot joins the current child while the child is
/// empty or stays within `target` keys.
fn group_slots(mks: &[u64], model: &LinearModel, fanout: usize, target: usize) -> Vec<Group> {
    let mut groups = Vec::new();
    let (mut slot_start, mut key_start, mut key) = (0, 0, 0);
    for slot in 0..fanout {
        let first = key;
        while key < mks.len() && model.predict(mks[key], fanout) == slot {
            key += 1;
        }
        let current = first - key_start;
        if slot > slot_start && current > 0 && current + (key - first) > target {
            groups.push(Group {
                slots: slot_start..slot,
                keys: key_start..first,
            });
            slot_start = slot;
            key_start = first;
        }
    }
    debug_assert_eq!(key, mks.len());
    groups.push(Group {
        slots: slot_start..fanout,
        keys: key_start..mks.len(),
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cover_all_slots_and_keys() {
        let mks: Vec<u64> = (0..10_000u64).map(|i| i * i).collect();
        let plan = choose(&mks, DATA_NODE_SIZES);
        assert!(plan.fanout.is_power_of_two());
        let mut slot = 0;
        let mut key = 0;
        for g in &plan.groups {
            assert_eq!((g.slots.start, g.keys.start), (slot, key));
            assert!(!g.slots.is_empty());
            slot = g.slots.end;
            key = g.keys.end;
        }
        assert_eq!((slot, key), (plan.fanout, mks.len()));
    }

    /// Regression: over `LEAF_BUILD_MAX_KEYS * 2 * MAX_INNER_SLOTS` keys
    /// (37.7M) the lowest fanout priced was above the largest allowed, and
    /// `choose` panicked: every bulk load that big (a root rebuilt at a
    /// 100M-key load, killing the compaction thread; an open of a 40M-key
    /// index from its checkpoint) failed.
    #[test]
    fn a_node_over_forty_million_keys_gets_the_largest_fanout() {
        for n in [
            0,
            1,
            1000,
            37_748_736,
            40_000_000,
            usize::MAX / 2,
            usize::MAX,
        ] {
            let (lo, hi) = fanout_range(n, DATA_NODE_SIZES);
            assert!(
                lo.is_power_of_two() && lo >= 2 && lo <= hi && hi <= MAX_INNER_SLOTS,
                "{n}: {lo}..={hi}"
            );
        }
        let mks: Vec<u64> = (0..40_000_000u64).map(|i| i << 20).collect();
        let plan = choose(&mks, DATA_NODE_SIZES);
        assert_eq!(plan.fanout, MAX_INNER_SLOTS);
        let covered: usize = plan.groups.iter().map(|g| g.keys.len()).sum();
        assert_eq!(covered, mks.len());
    }

    #[test]
    fn uniform_keys_get_leaves_near_target() {
        let mks: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect::<Vec<_>>();
        let mut mks = mks;
        mks.sort_unstable();
        let plan = choose(&mks, DATA_NODE_SIZES);
        let big = plan
            .groups
            .iter()
            .filter(|g| g.keys.len() > LEAF_BUILD_MAX_KEYS)
            .count();
        assert_eq!(big, 0);
        let avg = mks.len() / plan.groups.len();
        assert!((64..=TARGET_LEAF_KEYS).contains(&avg), "avg {avg}");
    }
}
