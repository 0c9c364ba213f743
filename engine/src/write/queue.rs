//! Grouping writes that arrive from many threads (RocksDB's write group).
//!
//! A writer that finds no group being written leads one at once with its
//! own batch. A writer that arrives while a group is being written queues
//! its batch (a copy) and sleeps. When the leader is done it hands the lead
//! to the first queued writer, which takes everything queued by then as its
//! group: one `pwrite` for all of it (see `write/group.rs`), and one
//! `fdatasync` if any of its writes asked for one. The leader then wakes
//! each follower with its own outcome. Under no contention this is a direct
//! write; under contention the syscalls are shared.
//!
//! All waiting is on a mutex and a condition variable per request: nothing
//! is published lock-free here.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::error::Result;
use crate::write::batch::WriteBatch;

/// Most batches one leader takes from the queue for its group.
const MAX_GROUP_BATCHES: usize = 128;

/// The writers waiting for a leader.
#[derive(Debug, Default)]
pub(crate) struct WriteQueue {
    state: Mutex<QueueState>,
}

#[derive(Debug, Default)]
struct QueueState {
    /// Whether a writer is leading a group now.
    leading: bool,
    waiting: VecDeque<Arc<Request>>,
}

/// A queued write.
#[derive(Debug)]
pub(crate) struct Request {
    /// The batch, copied from the writer that queued it.
    pub batch: WriteBatch,
    /// The keys it is written unless they changed: keyspace, key, and the
    /// sequence number they must not have changed since.
    pub watched: Vec<(crate::db::keyspace::KeyspaceId, Vec<u8>, u64)>,
    /// Whether the writer asked for a sync.
    pub sync: bool,
    turn: Mutex<Turn>,
    wake: Condvar,
}

/// Where a queued write stands.
#[derive(Debug)]
pub(crate) enum Turn {
    Waiting,
    /// The previous leader handed the lead to this request's writer.
    Lead,
    Done(Result<()>),
}

/// What a writer joining the queue is to do.
pub(crate) enum Joined {
    /// Nobody was leading or queued: lead a group of this write alone.
    LeadAlone,
    /// Queued: wait for [`Request::wait_turn`].
    Queued(Arc<Request>),
}

impl WriteQueue {
    /// Joins the queue with a write; `request` makes the queued copy, only
    /// if the write has to queue.
    pub fn join(&self, request: impl FnOnce() -> Request) -> Joined {
        let mut state = lock(&self.state);
        if !state.leading && state.waiting.is_empty() {
            state.leading = true;
            return Joined::LeadAlone;
        }
        let request = Arc::new(request());
        state.waiting.push_back(request.clone());
        Joined::Queued(request)
    }

    /// The queued requests a new leader takes as its group.
    pub fn take_followers(&self) -> Vec<Arc<Request>> {
        let mut state = lock(&self.state);
        let n = state.waiting.len().min(MAX_GROUP_BATCHES);
        state.waiting.drain(..n).collect()
    }

    /// Gives the lead to the first queued writer, or ends the leading.
    pub fn hand_off(&self) {
        let mut state = lock(&self.state);
        match state.waiting.pop_front() {
            Some(next) => {
                *lock(&next.turn) = Turn::Lead;
                next.wake.notify_one();
            }
            None => state.leading = false,
        }
    }
}

impl Request {
    /// A request to queue, waiting for its turn.
    pub fn new(
        batch: WriteBatch,
        watched: Vec<(crate::db::keyspace::KeyspaceId, Vec<u8>, u64)>,
        sync: bool,
    ) -> Self {
        Request {
            batch,
            watched,
            sync,
            turn: Mutex::new(Turn::Waiting),
            wake: Condvar::new(),
        }
    }

    /// Sleeps until the request's writer is to lead ([`Turn::Lead`]) or a
    /// leader wrote it ([`Turn::Done`]).
    pub fn wait_turn(&self) -> Turn {
        let mut turn = lock(&self.turn);
        loop {
            match std::mem::replace(&mut *turn, Turn::Waiting) {
                Turn::Waiting => {
                    turn = self.wake.wait(turn).unwrap_or_else(PoisonError::into_inner)
                }
                decided => return decided,
            }
        }
    }

    /// Wakes the request's writer with its outcome.
    pub fn finish(&self, outcome: Result<()>) {
        *lock(&self.turn) = Turn::Done(outcome);
        self.wake.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
