//! Top-down bulk loading of (sub)trees from sorted entries.

use crossbeam_epoch::Guard;

use super::cost;
use super::data_node::DataNode;
use super::fanout;
use super::fanout::{DATA_NODE_SIZES, PACKED_LEAF_SIZES};
use super::inner_node::InnerNode;
use super::known_keys::Entries;
use super::node::{Link, Node, NodeRef};
use super::packed_leaf::PackedLeaf;
use super::projection::Projection;
use super::{KeyResolver, LeafForm};

/// Deeper than this, bulk loading stops splitting (only pathological key
/// sets whose models cannot separate them get here) and builds a data node.
const MAX_BUILD_DEPTH: usize = 16;

/// Subtrees of at least this many entries are built by two threads: the
/// root's children are split between them (a 10M-key index is built in
/// about half the time on two cores).
pub(crate) const PARALLEL_BUILD_KEYS: usize = 1 << 20;

/// Builds and publishes a subtree of `entries` (sorted by key; their
/// handles are the payloads) with data nodes for leaves. With
/// `force_inner` the root is an inner node whenever the keys can be told
/// apart by their model keys (a split down).
pub(crate) fn build_subtree<'g, R: KeyResolver>(
    entries: Entries<'_, R>,
    force_inner: bool,
    guard: &'g Guard,
) -> NodeRef<'g> {
    build_subtree_as(entries, force_inner, LeafForm::Dense, guard)
}

/// [`build_subtree`] with leaves of the given form (a leaf whose entries
/// do not fit a packed leaf is a data node).
pub(crate) fn build_subtree_as<'g, R: KeyResolver>(
    entries: Entries<'_, R>,
    force_inner: bool,
    form: LeafForm,
    guard: &'g Guard,
) -> NodeRef<'g> {
    let how = How {
        stored: &|p| p,
        form,
    };
    build(how, entries, force_inner, 0, guard)
}

/// [`build_subtree`] over `n` entries given by position: `resolver` turns
/// a position into its key and the tree stores `stored(position)` as the
/// entry's payload. Lets a caller whose keys sit in a sorted array (an
/// index checkpoint) build from that array instead of resolving every
/// payload. A large subtree is built by two threads.
pub(crate) fn build_subtree_by_position<'g, R: KeyResolver + Sync>(
    n: usize,
    resolver: &R,
    stored: &(dyn Fn(u64) -> u64 + Sync),
    form: LeafForm,
    guard: &'g Guard,
) -> NodeRef<'g> {
    let entries = Entries::by_position(n, resolver);
    let how = How { stored, form };
    if n < PARALLEL_BUILD_KEYS {
        return build(how, entries, false, 0, guard);
    }
    match shape(how, entries, false, 0) {
        Shape::Leaf(node) => NodeRef::publish(node, guard),
        Shape::Inner(proj, plan) => {
            let links = children_in_two_threads(how, entries, &plan.groups, guard);
            inner(proj, plan, links, n, guard)
        }
    }
}

/// How leaves are built: the payload each entry's handle stands for, and
/// the leaves' form.
#[derive(Clone, Copy)]
struct How<'p> {
    stored: &'p (dyn Fn(u64) -> u64 + Sync),
    form: LeafForm,
}

/// What a node over some entries is to be: a leaf (built), or an inner
/// node with its projection and plan (children still to build).
enum Shape {
    Leaf(Node),
    Inner(Projection, fanout::Plan),
}

fn build<'g, R: KeyResolver>(
    how: How<'_>,
    entries: Entries<'_, R>,
    force_inner: bool,
    depth: usize,
    guard: &'g Guard,
) -> NodeRef<'g> {
    match shape(how, entries, force_inner, depth) {
        Shape::Leaf(node) => NodeRef::publish(node, guard),
        Shape::Inner(proj, plan) => {
            let links = children(how, entries, &plan.groups, depth + 1, guard);
            inner(proj, plan, links, entries.len(), guard)
        }
    }
}

/// Decides the node over `entries`, building it if it is a leaf.
fn shape<R: KeyResolver>(
    how: How<'_>,
    entries: Entries<'_, R>,
    force_inner: bool,
    depth: usize,
) -> Shape {
    let n = entries.len();
    if n == 0 {
        return Shape::Leaf(Node::Data(DataNode::empty()));
    }
    let proj = entries.projection();
    let mks = entries.model_keys(&proj);
    let sizes = match how.form {
        LeafForm::Packed => PACKED_LEAF_SIZES,
        LeafForm::Dense => DATA_NODE_SIZES,
    };
    let leaf =
        (n <= sizes.build_max && !force_inner) || mks[0] == mks[n - 1] || depth >= MAX_BUILD_DEPTH;
    let plan = (!leaf)
        .then(|| fanout::choose(&mks, sizes))
        .filter(|plan| plan.groups.len() > 1);
    match plan {
        Some(plan) => Shape::Inner(proj, plan),
        None => {
            let stored: Vec<u64> = (0..n).map(|i| (how.stored)(entries.handle(i))).collect();
            let packed = match how.form {
                LeafForm::Packed => PackedLeaf::pack(proj.clone(), &mks, &stored),
                LeafForm::Dense => None,
            };
            Shape::Leaf(match packed {
                Some(packed) => Node::Packed(packed),
                None => Node::Data(DataNode::from_sorted(
                    proj,
                    &mks,
                    &stored,
                    cost::slots_for(n),
                )),
            })
        }
    }
}

/// Builds the children of `groups` (each linked from every slot it fills).
fn children<R: KeyResolver>(
    how: How<'_>,
    entries: Entries<'_, R>,
    groups: &[fanout::Group],
    depth: usize,
    guard: &Guard,
) -> Vec<Link> {
    let slots = match (groups.first(), groups.last()) {
        (Some(first), Some(last)) => last.slots.end - first.slots.start,
        _ => 0,
    };
    let mut links = Vec::with_capacity(slots);
    for group in groups {
        let child = build(how, entries.slice(group.keys.clone()), false, depth, guard);
        links.extend(group.slots.clone().map(|_| Link::new(child)));
    }
    links
}

/// [`children`] of a root, the second half of the keys built by another
/// thread (under its own guard: the nodes it publishes are not retired, so
/// they outlive it). Builds them all here if no thread can be started.
fn children_in_two_threads<R: KeyResolver + Sync>(
    how: How<'_>,
    entries: Entries<'_, R>,
    groups: &[fanout::Group],
    guard: &Guard,
) -> Vec<Link> {
    let half = entries.len() / 2;
    let mid = groups.partition_point(|g| g.keys.end <= half).max(1);
    let (front, back) = groups.split_at(mid);
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("alexdb-bulk-load".into())
            .spawn_scoped(scope, || {
                children(how, entries, back, 1, &crossbeam_epoch::pin())
            });
        let mut links = children(how, entries, front, 1, guard);
        match helper {
            Ok(helper) => match helper.join() {
                Ok(back_links) => links.extend(back_links),
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => links.extend(children(how, entries, back, 1, guard)),
        }
        links
    })
}

/// Publishes an inner node over its children.
fn inner<'g>(
    proj: Projection,
    plan: fanout::Plan,
    links: Vec<Link>,
    n: usize,
    guard: &'g Guard,
) -> NodeRef<'g> {
    debug_assert_eq!(links.len(), plan.fanout);
    let node = InnerNode::new(proj, plan.model, links, n);
    NodeRef::publish(Node::Inner(node), guard)
}
