//! Top-down bulk loading of (sub)trees from sorted entries.

use crossbeam_epoch::Guard;

use super::KeyResolver;
use super::cost::{self, LEAF_BUILD_MAX_KEYS};
use super::data_node::DataNode;
use super::fanout;
use super::inner_node::InnerNode;
use super::node::Node;
use super::node_ptr::{Link, NodeRef};
use super::projection::Projection;

/// Deeper than this, bulk loading stops splitting (only pathological key
/// sets whose models cannot separate them get here) and builds a data node.
const MAX_BUILD_DEPTH: usize = 16;

/// Builds and publishes a subtree of the entries `payloads`, sorted by key.
/// With `force_inner` the root is an inner node whenever the keys can be
/// told apart by their model keys (a split down).
pub(crate) fn build_subtree<'g, R: KeyResolver>(
    payloads: &[u64],
    resolver: &R,
    force_inner: bool,
    guard: &'g Guard,
) -> NodeRef<'g> {
    let how = Build {
        resolver,
        stored: &|p| p,
    };
    build(&how, payloads, force_inner, 0, guard)
}

/// [`build_subtree`] over handles: `resolver` turns a handle into its key
/// and the tree stores `stored(handle)` as the entry's payload. Lets a
/// caller whose keys sit in a sorted array (an index checkpoint) build from
/// that array instead of resolving every payload.
pub(crate) fn build_subtree_mapped<'g, R: KeyResolver>(
    handles: &[u64],
    resolver: &R,
    stored: &dyn Fn(u64) -> u64,
    guard: &'g Guard,
) -> NodeRef<'g> {
    let how = Build { resolver, stored };
    build(&how, handles, false, 0, guard)
}

/// How entries are read while building: keys through the resolver,
/// payloads through `stored`.
struct Build<'p, R> {
    resolver: &'p R,
    stored: &'p dyn Fn(u64) -> u64,
}

fn build<'g, R: KeyResolver>(
    how: &Build<'_, R>,
    payloads: &[u64],
    force_inner: bool,
    depth: usize,
    guard: &'g Guard,
) -> NodeRef<'g> {
    let resolver = how.resolver;
    let n = payloads.len();
    let (Some(&first), Some(&last)) = (payloads.first(), payloads.last()) else {
        return NodeRef::publish(Node::Data(DataNode::empty()), guard);
    };
    let proj = Projection::for_range(resolver.key(first), resolver.key(last));
    let mks: Vec<u64> = payloads
        .iter()
        .map(|&p| proj.model_key(resolver.key(p)))
        .collect();
    let leaf = (n <= LEAF_BUILD_MAX_KEYS && !force_inner)
        || mks[0] == mks[n - 1]
        || depth >= MAX_BUILD_DEPTH;
    let plan = (!leaf)
        .then(|| fanout::choose(&mks))
        .filter(|plan| plan.groups.len() > 1);
    let Some(plan) = plan else {
        let stored: Vec<u64> = payloads.iter().map(|&p| (how.stored)(p)).collect();
        let node = DataNode::from_sorted(proj, &mks, &stored, cost::slots_for(n));
        return NodeRef::publish(Node::Data(node), guard);
    };
    // The children compute their own model keys: free these first.
    drop(mks);
    let mut links = Vec::with_capacity(plan.fanout);
    for group in &plan.groups {
        let child = build(how, &payloads[group.keys.clone()], false, depth + 1, guard);
        links.extend(group.slots.clone().map(|_| Link::new(child)));
    }
    let inner = InnerNode::new(proj, plan.model, links, n);
    NodeRef::publish(Node::Inner(inner), guard)
}
