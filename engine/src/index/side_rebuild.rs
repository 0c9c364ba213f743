//! Rebuilding a large subtree to the side, without holding the writer.
//!
//! A subtree that has doubled since it was built is rebuilt by bulk loading
//! its entries (see `smo`). Above a threshold (the engine's is
//! `SIDE_REBUILD_KEYS`) that takes too long to do under the write lock
//! (0.6-0.8 s for the ancestor of a hot range in a 1M-key index), so the
//! writer only *requests* it: it records
//! the subtree's root node as a [`Job`], *freezes* that node (no structure
//! change replaces it or an ancestor until the job ends), and from then on
//! logs every write that routes through it in the job's delta. A
//! background thread then, without the lock:
//!
//! 1. collects the subtree's entries (a fuzzy snapshot: entries present
//!    when the job started are there unless a logged write changed them;
//!    entries a concurrent split showed twice are dropped by key order) and
//!    bulk loads a private tree from them;
//! 2. replays the delta into the private tree in chunks while writers go on;
//! 3. takes the lock, replays the last few writes, and links the private
//!    tree where the frozen node was (readers see the old subtree or the
//!    new one, each complete); then, without the lock, retires the old
//!    subtree.
//!
//! Off by default (an index nobody runs jobs for rebuilds under the lock,
//! whatever the size); the engine turns it on for indexes its compaction
//! thread serves. A job nobody runs is dropped once its delta outgrows the
//! subtree.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crossbeam_epoch::Guard;

use super::KeyResolver;
use super::bulk_load::build_subtree;
use super::known_keys::{Collected, Entries};
use super::node::{Link, Node, NodeRef};

/// Writes replayed per chunk outside the lock.
pub(crate) const CHUNK: usize = 4096;
/// The replay outside the lock goes on until fewer writes than this are
/// left for the lock (about 0.1 ms of inserts).
pub(crate) const LOCKED_REPLAY: usize = 256;

pub(crate) use super::write_log::Write;
use super::write_log::WriteLog;

/// A requested rebuild.
#[derive(Debug)]
struct Job {
    /// Distinguishes jobs, so that a background step never finishes a job
    /// that was dropped and replaced meanwhile.
    id: u64,
    /// Depth of the frozen node (its index on a writer's path).
    depth: usize,
    /// A key that routes through the frozen node.
    key: Box<[u8]>,
    /// Keys under the frozen node when the job was requested.
    keys: usize,
    /// Writes through the frozen node since the request, in order.
    delta: WriteLog,
    /// A background thread has taken the job.
    started: bool,
}

/// The index's side-rebuild state, shared by the writer and the background.
#[derive(Debug, Default)]
pub(crate) struct SideRebuild {
    job: Mutex<Option<Job>>,
    /// Address of the frozen node, 0 if none (compared, never dereferenced).
    frozen: AtomicUsize,
    /// Set by a request, taken by [`SideRebuild::take_signal`].
    signal: AtomicBool,
    next_id: AtomicU64,
    /// Rebuilds of subtrees over this many keys go to the side;
    /// 0: none do (they run under the lock).
    above: AtomicUsize,
}

impl SideRebuild {
    fn job(&self) -> std::sync::MutexGuard<'_, Option<Job>> {
        self.job
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends rebuilds of subtrees over `keys` keys to the side (`None`:
    /// every rebuild runs under the lock).
    pub(crate) fn set_above(&self, keys: Option<usize>) {
        self.above
            .store(keys.map_or(0, |k| k.max(1)), Ordering::Relaxed);
    }

    /// Subtrees over this many keys are rebuilt to the side, if enabled.
    pub(crate) fn above(&self) -> Option<usize> {
        Some(self.above.load(Ordering::Relaxed)).filter(|&k| k > 0)
    }

    /// Whether `node` is frozen by a pending job.
    pub(crate) fn is_frozen(&self, node: NodeRef<'_>) -> bool {
        let frozen = self.frozen.load(Ordering::Relaxed);
        frozen != 0 && frozen == node.addr()
    }

    /// Whether any node is frozen.
    pub(crate) fn any_frozen(&self) -> bool {
        self.frozen.load(Ordering::Relaxed) != 0
    }

    /// Writer (holding the lock): asks for a rebuild of `node`, `depth`
    /// deep on the path of `key`, unless a job is pending.
    pub(crate) fn request(&self, node: NodeRef<'_>, depth: usize, key: &[u8], keys: usize) {
        let mut job = self.job();
        if job.is_some() {
            return;
        }
        *job = Some(Job {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            depth,
            key: key.into(),
            keys,
            delta: WriteLog::default(),
            started: false,
        });
        self.frozen.store(node.addr(), Ordering::Relaxed);
        self.signal.store(true, Ordering::Release);
    }

    /// Writer (holding the lock): logs a write whose path (inner nodes from
    /// the root) is `path` if it runs through the frozen node.
    pub(crate) fn log<'g>(
        &self,
        mut path: impl Iterator<Item = NodeRef<'g>>,
        key: &[u8],
        payload: Option<u64>,
    ) {
        if !self.any_frozen() || !path.any(|n| self.is_frozen(n)) {
            return;
        }
        let mut job = self.job();
        let Some(j) = job.as_mut() else { return };
        let logged = j.delta.push(key, payload);
        // Nobody is keeping up (or no memory is left for the log): give
        // the job up rather than grow for ever.
        if !logged || j.delta.len() > 2 * j.keys.max(CHUNK) {
            *job = None;
            self.frozen.store(0, Ordering::Relaxed);
        }
    }

    /// Whether a job was requested since the last call (for waking the
    /// background thread once per job).
    pub(crate) fn take_signal(&self) -> bool {
        self.signal.swap(false, Ordering::Acquire)
    }

    /// Background: takes the pending job, if any. Returns its id, depth
    /// and key.
    pub(crate) fn start(&self) -> Option<(u64, usize, Box<[u8]>)> {
        let mut job = self.job();
        let j = job.as_mut().filter(|j| !j.started)?;
        j.started = true;
        Some((j.id, j.depth, j.key.clone()))
    }

    /// Background: the logged writes from `from` on, at most `max`, if job
    /// `id` is still pending.
    pub(crate) fn writes_since(&self, id: u64, from: usize, max: usize) -> Option<Vec<Write>> {
        let job = self.job();
        let j = job.as_ref().filter(|j| j.id == id)?;
        let end = j.delta.len().min(from.saturating_add(max));
        Some(j.delta.writes(from.min(end)..end))
    }

    /// Ends job `id` (installed or given up), unfreezing its node.
    pub(crate) fn end(&self, id: u64) {
        let mut job = self.job();
        if job.as_ref().is_some_and(|j| j.id == id) {
            *job = None;
            self.frozen.store(0, Ordering::Relaxed);
        }
    }
}

/// Ends a started job when dropped (see [`SideRebuild::end`]).
pub(crate) struct EndJob<'s> {
    side: &'s SideRebuild,
    id: u64,
}

impl<'s> EndJob<'s> {
    /// Ends job `id` of `side` when dropped.
    pub(crate) fn new(side: &'s SideRebuild, id: u64) -> Self {
        EndJob { side, id }
    }
}

impl Drop for EndJob<'_> {
    fn drop(&mut self) {
        self.side.end(self.id);
    }
}

/// The node `depth` inner nodes below the root on the path of `key`, if it
/// is the frozen node of `side`.
pub(crate) fn find_frozen<'g>(
    mut node: NodeRef<'g>,
    key: &[u8],
    depth: usize,
    side: &SideRebuild,
    guard: &'g Guard,
) -> Option<(Vec<NodeRef<'g>>, NodeRef<'g>)> {
    let mut above = Vec::with_capacity(depth);
    while above.len() < depth {
        let Node::Inner(inner) = node.get() else {
            return None;
        };
        above.push(node);
        node = inner.child(inner.route(key), guard);
    }
    (side.is_frozen(node) && matches!(node.get(), Node::Inner(_))).then_some((above, node))
}

/// The entries under `node` in key order, read without the lock (as they
/// may hold a key twice: see [`Collected::dedup`]; the write that caused a
/// concurrent split is in the job's delta).
pub(crate) fn collect_from(node: NodeRef<'_>, guard: &Guard) -> Collected {
    let mut collected = Collected::default();
    super::smo::collect_entries(node, guard, &mut collected);
    collected
}

/// Bulk loads a private subtree of `entries` (sorted, unique keys), linked
/// from the returned link.
///
/// Built under a guard of a collector of its own: a guard of the global one,
/// pinned for the seconds a subtree of millions of keys takes to build,
/// would keep every node the writers replace meanwhile from being freed (at
/// 100M keys, gigabytes). The new nodes are reachable from nowhere but the
/// link until they are installed, and nothing retires them before.
pub(crate) fn build_private<R: KeyResolver>(entries: Entries<'_, R>) -> Link {
    let collector = crossbeam_epoch::Collector::new();
    let handle = collector.register();
    let guard = handle.pin();
    Link::new(build_subtree(entries, false, &guard))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{Receiver, Sender, channel};
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Keys `0..n` as 8-byte big-endian; the first lookup reports that the
    /// build has begun and waits to be let go on.
    struct GatedKeys {
        keys: Vec<[u8; 8]>,
        gate: Mutex<Option<(Sender<()>, Receiver<()>)>>,
    }

    impl KeyResolver for GatedKeys {
        fn key(&self, payload: u64) -> &[u8] {
            if let Some((entered, go)) = self.gate.lock().unwrap().take() {
                entered.send(()).unwrap();
                go.recv().unwrap();
            }
            &self.keys[payload as usize]
        }
    }

    /// A private build, however long, must not hold the global epoch: the
    /// writers' replaced nodes are freed meanwhile (a build under a global
    /// guard kept gigabytes of them alive at 100M keys).
    #[test]
    fn a_private_build_does_not_hold_back_reclamation() {
        let n = 50_000u64;
        let (entered_tx, entered_rx) = channel();
        let (go_tx, go_rx) = channel();
        let keys = GatedKeys {
            keys: (0..n).map(u64::to_be_bytes).collect(),
            gate: Mutex::new(Some((entered_tx, go_rx))),
        };
        let payloads: Vec<u64> = (0..n).collect();
        std::thread::scope(|s| {
            let builder = s.spawn(|| build_private(Entries::unknown(&payloads, &keys)));
            entered_rx.recv().unwrap();
            // The builder is inside the build now. Something retired now
            // must be freed after a few epoch advances.
            let freed = Arc::new(AtomicBool::new(false));
            let flag = freed.clone();
            let guard = crossbeam_epoch::pin();
            guard.defer(move || flag.store(true, Ordering::SeqCst));
            drop(guard);
            let mut flushes = 0;
            while !freed.load(Ordering::SeqCst) && flushes < 10_000 {
                crossbeam_epoch::pin().flush();
                flushes += 1;
            }
            go_tx.send(()).unwrap();
            let link = builder.join().unwrap();
            assert!(
                freed.load(Ordering::SeqCst),
                "nothing freed in {flushes} flushes"
            );
            let built = crate::index::AlexIndex::with_root(link, n as usize);
            assert_eq!(built.stats().num_keys as u64, n);
        });
    }
}
