//! ALEX's cost model: node-size limits, cost weights and the per-node
//! tracker of empirical costs that drives expansions and splits.
//!
//! Costs are in rough nanoseconds on a current x86 core, so that search,
//! shifting and the copy-on-write copy can be added up.

use super::model::LinearModel;

/// Largest data node, in slots, that inserts expand to; fuller nodes split.
///
/// Every write copies the whole data node (copy-on-write keeps readers
/// lock-free), so the node size bounds the write cost: 384 slots are 6 KiB
/// of model keys and payloads. Measured on 1M random upserts, 512 slots
/// cost ~2.2 us per upsert, 384 ~1.3 us and 256 ~1.5 us (more splits),
/// with the same lookup speed; 384 keeps ~120-330 keys per leaf, so 1M keys
/// still sit under a single root.
pub(crate) const MAX_DATA_SLOTS: usize = 384;
/// Smallest data node, in slots.
pub(crate) const MIN_DATA_SLOTS: usize = 16;
/// Density of freshly built, expanded, contracted or split data nodes.
pub(crate) const INIT_DENSITY: f64 = 0.75;
/// Density at which a data node must expand or split before an insert.
pub(crate) const MAX_DENSITY: f64 = 0.85;
/// Density under which a remove contracts a data node.
pub(crate) const MIN_DENSITY: f64 = 0.3;
/// Keys per data node that bulk loading aims for when grouping slots.
pub(crate) const TARGET_LEAF_KEYS: usize = 192;
/// Most keys bulk loading puts in one data node (`MAX_DATA_SLOTS` at
/// `INIT_DENSITY`).
pub(crate) const LEAF_BUILD_MAX_KEYS: usize = MAX_DATA_SLOTS * 3 / 4;
/// Most slots of an inner node (bulk loading and parent doubling).
pub(crate) const MAX_INNER_SLOTS: usize = 1 << 16;
/// A split that would put a leaf this many inner nodes deep first looks for
/// an ancestor whose subtree has doubled since it was built, and rebuilds it.
pub(crate) const REBUILD_DEPTH: usize = 2;

/// One exponential-search iteration (a likely cache miss).
pub(crate) const SEARCH_ITER_NS: f64 = 8.0;
/// Moving one slot while inserting.
pub(crate) const SHIFT_NS: f64 = 0.5;
/// Copying one slot of a data node on a write.
pub(crate) const COPY_SLOT_NS: f64 = 0.5;
/// Share of operations that are writes, for weighting the copy cost.
pub(crate) const WRITE_SHARE: f64 = 0.5;
/// Traversing one more inner level.
pub(crate) const INNER_LEVEL_NS: f64 = 30.0;
/// Memory and cache pressure of one inner-node slot, for the whole node.
pub(crate) const INNER_SLOT_NS: f64 = 4.0;

/// Inserts a node must see before its empirical cost is trusted.
const MIN_TRACKED_OPS: u32 = 16;
/// Empirical cost above `expected * DEGRADED_RATIO + DEGRADED_SLACK_NS`
/// means the model no longer fits the keys: split instead of expanding.
const DEGRADED_RATIO: f64 = 1.5;
const DEGRADED_SLACK_NS: f64 = SEARCH_ITER_NS;

/// Slots for a data node of `n` keys at the initial density.
pub(crate) fn slots_for(n: usize) -> usize {
    ((n as f64 / INIT_DENSITY).ceil() as usize).max(MIN_DATA_SLOTS)
}

/// Iterations of an exponential search that starts `err` slots away:
/// `log2(|err| + 1)`, approximated to within 0.01 (it only feeds cost
/// estimates, and is computed for every key of every node built).
#[inline]
pub(crate) fn search_iters(err: f64) -> f64 {
    let x = err.abs() + 1.0;
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    // `x = 2^exp * (1 + t)`, `t` in `[0, 1)`; `log2(1 + t)` by a quadratic
    // that is exact at both ends.
    let t = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52)) - 1.0;
    exp as f64 + t * (4.0 / 3.0 - t / 3.0)
}

/// Expected cost of one insert into a data node built from `mks` at the
/// initial density: search error of a fresh model plus the copy.
pub(crate) fn data_node_cost(mks: &[u64]) -> f64 {
    let n = mks.len();
    if n == 0 {
        return 0.0;
    }
    let slots = slots_for(n);
    let model = LinearModel::fit(mks, slots as f64);
    let step = slots as f64 / n as f64;
    let iters: f64 = mks
        .iter()
        .enumerate()
        .map(|(i, &m)| search_iters(model.predict_f64(m) - i as f64 * step))
        .sum();
    SEARCH_ITER_NS * iters / n as f64 + WRITE_SHARE * COPY_SLOT_NS * slots as f64
}

/// Per-node record of what inserts cost, compared with what the model
/// promised when the node was built.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CostTracker {
    expected: f64,
    ops: u32,
    iters: u32,
    shifts: u32,
    appends: u32,
    prepends: u32,
}

/// An end of a data node's key range that receives most inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// Keys arrive below every key (descending inserts).
    Head,
    /// Keys arrive above every key (appends).
    Tail,
}

impl CostTracker {
    /// A tracker for a node whose model promises `expected` ns per insert
    /// (search and shifts; the copy is the same for every insert).
    pub(crate) fn new(expected: f64) -> Self {
        Self {
            expected,
            ..Self::default()
        }
    }

    /// Records one insert that took `iters` search iterations and moved
    /// `shifts` slots; `edge` if it went before or after every other key.
    pub(crate) fn record(&mut self, iters: u32, shifts: u32, edge: Option<Edge>) {
        match edge {
            Some(Edge::Head) => self.prepends = self.prepends.saturating_add(1),
            Some(Edge::Tail) => self.appends = self.appends.saturating_add(1),
            None => {}
        }
        self.ops = self.ops.saturating_add(1);
        self.iters = self.iters.saturating_add(iters);
        self.shifts = self.shifts.saturating_add(shifts);
    }

    /// Average empirical cost per insert, once enough inserts were seen.
    pub(crate) fn empirical(&self) -> Option<f64> {
        (self.ops >= MIN_TRACKED_OPS).then(|| {
            (SEARCH_ITER_NS * f64::from(self.iters) + SHIFT_NS * f64::from(self.shifts))
                / f64::from(self.ops)
        })
    }

    /// The end most inserts went to, if one did.
    pub(crate) fn busy_edge(&self) -> Option<Edge> {
        if self.ops < MIN_TRACKED_OPS {
            None
        } else if 2 * self.appends > self.ops {
            Some(Edge::Tail)
        } else if 2 * self.prepends > self.ops {
            Some(Edge::Head)
        } else {
            None
        }
    }

    /// Whether the empirical cost has drifted far above the expected one.
    pub(crate) fn degraded(&self) -> bool {
        self.empirical()
            .is_some_and(|e| e > self.expected * DEGRADED_RATIO + DEGRADED_SLACK_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_iters_approximates_log2() {
        for err in [0.0, 0.25, -0.5, 1.0, 2.7, -13.0, 100.0, 1e6] {
            let want = (f64::abs(err) + 1.0).log2();
            assert!((search_iters(err) - want).abs() < 0.01, "{err}");
        }
        assert_eq!(search_iters(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn tracker_flags_drift_only_after_enough_ops() {
        let mut t = CostTracker::new(10.0);
        for _ in 0..MIN_TRACKED_OPS - 1 {
            t.record(8, 20, None);
        }
        assert!(!t.degraded());
        t.record(8, 20, None);
        assert!(t.degraded());
        let mut ok = CostTracker::new(10.0);
        for _ in 0..100 {
            ok.record(1, 2, None);
        }
        assert!(!ok.degraded());
    }

    #[test]
    fn linear_keys_cost_little_search() {
        let lin: Vec<u64> = (0..256u64).map(|i| i * 1000).collect();
        let mut skew: Vec<u64> = (0..256u64).map(|i| i.pow(6)).collect();
        skew.sort_unstable();
        assert!(data_node_cost(&lin) < data_node_cost(&skew));
    }
}
