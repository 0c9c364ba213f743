//! Per-key locks for pessimistic transactions: shared or exclusive locks on
//! `(keyspace, key)` pairs, waited for with a timeout, with optional
//! deadlock detection on the wait-for graph and an optional cap on the
//! number of locked keys.
//!
//! A lock is held by an owner (a [`LockOwner`] from [`KeyLocks::new_owner`])
//! until it unlocks it. Locks are re-entrant per owner: locking a key the
//! owner already holds succeeds at once, and a sole shared holder is
//! upgraded to exclusive. The table lives beside a database; the engine's
//! own writes do not consult it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::db::keyspace::KeyspaceId;

/// Who holds or waits for a lock (one per transaction or plain write).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LockOwner(u64);

/// Whether other owners may hold the same key at the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Other shared holders are allowed (a read lock).
    Shared,
    /// No other holder is allowed (a write lock).
    Exclusive,
}

/// One lock to take.
#[derive(Clone, Copy, Debug)]
pub struct LockRequest<'k> {
    /// The keyspace of the key.
    pub keyspace: KeyspaceId,
    /// The key.
    pub key: &'k [u8],
    /// Who asks.
    pub owner: LockOwner,
    /// Shared or exclusive.
    pub mode: LockMode,
    /// How long to wait for other holders: `None` waits forever,
    /// `Some(Duration::ZERO)` fails at once if the key is held.
    pub timeout: Option<Duration>,
    /// Fail with [`LockError::Deadlock`] instead of waiting when waiting
    /// would close a cycle in the wait-for graph (searched up to this many
    /// owners deep); `None` waits without looking.
    pub deadlock_depth: Option<usize>,
}

/// Why a lock was not granted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another owner kept the key past the timeout.
    #[error("timed out waiting to lock a key held by another transaction")]
    TimedOut,
    /// Waiting would close a cycle of owners waiting for each other.
    #[error("waiting for the key lock would deadlock")]
    Deadlock,
    /// The table already holds its maximum number of locked keys.
    #[error("the lock table already holds its maximum of {0} locked keys")]
    LimitReached(usize),
}

/// The holders of one locked key.
#[derive(Debug)]
struct Holders {
    exclusive: bool,
    owners: Vec<LockOwner>,
}

/// Everything behind the table's mutex.
#[derive(Debug, Default)]
struct LockState {
    held: HashMap<(KeyspaceId, Vec<u8>), Holders>,
    /// Who each waiting owner waits for.
    waiting: HashMap<LockOwner, Vec<LockOwner>>,
}

/// What one attempt to take a lock found.
enum Attempt {
    Granted,
    Blocked(Vec<LockOwner>),
}

/// The lock table. `Send + Sync`; share it by reference or `Arc`.
#[derive(Debug)]
pub struct KeyLocks {
    state: Mutex<LockState>,
    released: Condvar,
    max_locks: Option<usize>,
    next_owner: AtomicU64,
}

impl KeyLocks {
    /// An empty table holding at most `max_locks` locked keys (`None`: no cap).
    pub fn new(max_locks: Option<usize>) -> Self {
        Self {
            state: Mutex::new(LockState::default()),
            released: Condvar::new(),
            max_locks,
            next_owner: AtomicU64::new(1),
        }
    }

    /// A new owner id, distinct from every other of this table.
    pub fn new_owner(&self) -> LockOwner {
        LockOwner(self.next_owner.fetch_add(1, Ordering::Relaxed))
    }

    /// Takes the lock `req` describes, waiting for other holders as it says.
    pub fn lock(&self, req: &LockRequest<'_>) -> Result<(), LockError> {
        let deadline = req.timeout.map(|t| Instant::now() + t);
        let mut state = self.state();
        loop {
            let blockers = match self.attempt(&mut state, req)? {
                Attempt::Granted => {
                    state.waiting.remove(&req.owner);
                    return Ok(());
                }
                Attempt::Blocked(blockers) => blockers,
            };
            if let Some(depth) = req.deadlock_depth
                && waits_for(&state.waiting, &blockers, req.owner, depth)
            {
                state.waiting.remove(&req.owner);
                return Err(LockError::Deadlock);
            }
            state.waiting.insert(req.owner, blockers);
            state = match deadline {
                None => self
                    .released
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        state.waiting.remove(&req.owner);
                        return Err(LockError::TimedOut);
                    }
                    self.released
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }

    /// Releases `owner`'s lock on `key`, if it holds one.
    pub fn unlock(&self, owner: LockOwner, keyspace: KeyspaceId, key: &[u8]) {
        let mut state = self.state();
        release(&mut state, owner, keyspace, key);
        drop(state);
        self.released.notify_all();
    }

    /// Releases `owner`'s locks on every key of `keys`.
    pub fn unlock_all<'k>(
        &self,
        owner: LockOwner,
        keys: impl IntoIterator<Item = (KeyspaceId, &'k [u8])>,
    ) {
        let mut state = self.state();
        for (keyspace, key) in keys {
            release(&mut state, owner, keyspace, key);
        }
        drop(state);
        self.released.notify_all();
    }

    /// How many keys are locked now.
    pub fn locked_keys(&self) -> usize {
        self.state().held.len()
    }

    fn state(&self) -> MutexGuard<'_, LockState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Grants the lock if the holders allow it, else names them.
    fn attempt(&self, state: &mut LockState, req: &LockRequest<'_>) -> Result<Attempt, LockError> {
        let id = (req.keyspace, req.key.to_vec());
        let Some(holders) = state.held.get_mut(&id) else {
            if let Some(max) = self.max_locks
                && state.held.len() >= max
            {
                return Err(LockError::LimitReached(max));
            }
            let holders = Holders {
                exclusive: req.mode == LockMode::Exclusive,
                owners: vec![req.owner],
            };
            state.held.insert(id, holders);
            return Ok(Attempt::Granted);
        };
        let mine = holders.owners.contains(&req.owner);
        let others: Vec<LockOwner> = holders
            .owners
            .iter()
            .copied()
            .filter(|o| *o != req.owner)
            .collect();
        let granted = match req.mode {
            LockMode::Shared => mine || !holders.exclusive,
            LockMode::Exclusive => others.is_empty(),
        };
        if !granted {
            return Ok(Attempt::Blocked(others));
        }
        if !mine {
            holders.owners.push(req.owner);
        }
        if req.mode == LockMode::Exclusive {
            holders.exclusive = true;
        }
        Ok(Attempt::Granted)
    }
}

/// Removes `owner` from the holders of `key`.
fn release(state: &mut LockState, owner: LockOwner, keyspace: KeyspaceId, key: &[u8]) {
    let id = (keyspace, key.to_vec());
    if let Some(holders) = state.held.get_mut(&id) {
        holders.owners.retain(|o| *o != owner);
        if holders.owners.is_empty() {
            state.held.remove(&id);
        }
    }
}

/// Whether some owner in `blockers` waits, directly or through others
/// (at most `depth` steps), for `owner`.
fn waits_for(
    waiting: &HashMap<LockOwner, Vec<LockOwner>>,
    blockers: &[LockOwner],
    owner: LockOwner,
    depth: usize,
) -> bool {
    let mut frontier: Vec<LockOwner> = blockers.to_vec();
    let mut seen: Vec<LockOwner> = Vec::new();
    for _ in 0..=depth {
        let mut next = Vec::new();
        for o in frontier {
            if o == owner {
                return true;
            }
            if seen.contains(&o) {
                continue;
            }
            seen.push(o);
            if let Some(theirs) = waiting.get(&o) {
                next.extend_from_slice(theirs);
            }
        }
        if next.is_empty() {
            return false;
        }
        frontier = next;
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};
    use std::thread;
    use std::time::{Duration, Instant};

    use super::{KeyLocks, LockError, LockMode, LockOwner, LockRequest};
    use crate::db::keyspace::KeyspaceId;

    const KS: KeyspaceId = KeyspaceId(0);

    fn req(owner: LockOwner, key: &[u8], mode: LockMode, timeout_ms: u64) -> LockRequest<'_> {
        LockRequest {
            keyspace: KS,
            key,
            owner,
            mode,
            timeout: Some(Duration::from_millis(timeout_ms)),
            deadlock_depth: None,
        }
    }

    #[test]
    fn exclusive_lock_blocks_others_until_released() {
        let locks = KeyLocks::new(None);
        let (a, b) = (locks.new_owner(), locks.new_owner());
        locks.lock(&req(a, b"k", LockMode::Exclusive, 0)).unwrap();
        locks.lock(&req(a, b"k", LockMode::Exclusive, 0)).unwrap();
        let started = Instant::now();
        let err = locks.lock(&req(b, b"k", LockMode::Shared, 30)).unwrap_err();
        assert_eq!(err, LockError::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(30));
        locks
            .lock(&req(b, b"other", LockMode::Exclusive, 0))
            .unwrap();
        locks.unlock(a, KS, b"k");
        locks.lock(&req(b, b"k", LockMode::Exclusive, 0)).unwrap();
        assert_eq!(locks.locked_keys(), 2);
        locks.unlock_all(b, [(KS, &b"k"[..]), (KS, &b"other"[..])]);
        assert_eq!(locks.locked_keys(), 0);
    }

    #[test]
    fn shared_locks_coexist_and_a_sole_holder_upgrades() {
        let locks = KeyLocks::new(None);
        let (a, b) = (locks.new_owner(), locks.new_owner());
        locks.lock(&req(a, b"k", LockMode::Shared, 0)).unwrap();
        locks.lock(&req(b, b"k", LockMode::Shared, 0)).unwrap();
        let err = locks.lock(&req(a, b"k", LockMode::Exclusive, 0));
        assert_eq!(err, Err(LockError::TimedOut));
        locks.unlock(b, KS, b"k");
        locks.lock(&req(a, b"k", LockMode::Exclusive, 0)).unwrap();
        assert_eq!(
            locks.lock(&req(b, b"k", LockMode::Shared, 0)),
            Err(LockError::TimedOut)
        );
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_releases() {
        let locks = Arc::new(KeyLocks::new(None));
        let (a, b) = (locks.new_owner(), locks.new_owner());
        locks.lock(&req(a, b"k", LockMode::Exclusive, 0)).unwrap();
        let waiter = {
            let locks = locks.clone();
            thread::spawn(move || locks.lock(&req(b, b"k", LockMode::Exclusive, 5_000)))
        };
        thread::sleep(Duration::from_millis(20));
        locks.unlock(a, KS, b"k");
        waiter.join().unwrap().unwrap();
    }

    #[test]
    fn the_cap_on_locked_keys_is_enforced() {
        let locks = KeyLocks::new(Some(2));
        let a = locks.new_owner();
        locks.lock(&req(a, b"1", LockMode::Exclusive, 0)).unwrap();
        locks.lock(&req(a, b"2", LockMode::Exclusive, 0)).unwrap();
        locks.lock(&req(a, b"2", LockMode::Exclusive, 0)).unwrap();
        assert_eq!(
            locks.lock(&req(a, b"3", LockMode::Exclusive, 0)),
            Err(LockError::LimitReached(2))
        );
    }

    #[test]
    fn a_cycle_of_waiters_is_reported_as_a_deadlock() {
        let locks = Arc::new(KeyLocks::new(None));
        let (a, b) = (locks.new_owner(), locks.new_owner());
        locks.lock(&req(a, b"x", LockMode::Exclusive, 0)).unwrap();
        locks.lock(&req(b, b"y", LockMode::Exclusive, 0)).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let first = {
            let (locks, barrier) = (locks.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                // a waits for y, held by b.
                locks.lock(&req(a, b"y", LockMode::Exclusive, 2_000))
            })
        };
        barrier.wait();
        thread::sleep(Duration::from_millis(50));
        let mut closing = req(b, b"x", LockMode::Exclusive, 2_000);
        closing.deadlock_depth = Some(50);
        assert_eq!(locks.lock(&closing), Err(LockError::Deadlock));
        locks.unlock(b, KS, b"y");
        first.join().unwrap().unwrap();
    }
}
