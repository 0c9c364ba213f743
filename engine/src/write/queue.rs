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

use smallvec::SmallVec;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::db::keyspace::KeyspaceId;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::options::WriteOptions;
use crate::write::batch::WriteBatch;
use crate::write::conflicts::WatchedKey;
use crate::write::group::{self, Member};
use crate::write::log_writer;

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
struct Request {
    batch: WriteBatch,
    watched: Vec<(KeyspaceId, Vec<u8>, u64)>,
    sync: bool,
    turn: Mutex<Turn>,
    wake: Condvar,
}

/// Where a queued write stands.
#[derive(Debug)]
enum Turn {
    Waiting,
    /// The previous leader handed the lead to this request's writer.
    Lead,
    Done(Result<()>),
}

/// Writes `batch` atomically unless a `watched` key changed (see
/// [`crate::Db::write_unless_changed`]), grouped with the batches other
/// threads write at the same time; with `sync`, returns once it is on
/// stable storage.
pub(crate) fn submit(
    shared: &Shared,
    batch: &WriteBatch,
    watched: &[WatchedKey<'_>],
    opts: &WriteOptions,
) -> Result<()> {
    shared
        .write_throttle
        .pace(batch.ops().len(), batch.payload_bytes(), opts.no_slowdown)?;
    let sync = opts.sync;
    let mut state = lock(&shared.write_queue.state);
    if !state.leading && state.waiting.is_empty() {
        state.leading = true;
        drop(state);
        // Nobody was queued: a group of this write alone.
        return lead(shared, Member { batch, watched }, sync, Vec::new());
    }
    let request = Arc::new(Request {
        batch: batch.clone(),
        watched: watched
            .iter()
            .map(|w| (w.keyspace, w.key.to_vec(), w.since_seq))
            .collect(),
        sync,
        turn: Mutex::new(Turn::Waiting),
        wake: Condvar::new(),
    });
    state.waiting.push_back(request.clone());
    drop(state);
    let mut turn = lock(&request.turn);
    loop {
        match std::mem::replace(&mut *turn, Turn::Waiting) {
            Turn::Waiting => {
                turn = request
                    .wake
                    .wait(turn)
                    .unwrap_or_else(PoisonError::into_inner)
            }
            Turn::Lead => {
                drop(turn);
                let watched = request.watched_keys();
                let own = Member {
                    batch: &request.batch,
                    watched: &watched,
                };
                return lead(shared, own, request.sync, take_followers(shared));
            }
            Turn::Done(outcome) => return outcome,
        }
    }
}

impl Request {
    fn watched_keys(&self) -> Vec<WatchedKey<'_>> {
        self.watched
            .iter()
            .map(|(keyspace, key, since_seq)| WatchedKey {
                keyspace: *keyspace,
                key,
                since_seq: *since_seq,
            })
            .collect()
    }

    fn finish(&self, outcome: Result<()>) {
        *lock(&self.turn) = Turn::Done(outcome);
        self.wake.notify_one();
    }
}

/// Writes `own` and `followers` (the queued requests this leader took) as
/// one group, hands the lead on, syncs if asked, and wakes the followers.
fn lead(
    shared: &Shared,
    own: Member<'_>,
    own_sync: bool,
    followers: Vec<Arc<Request>>,
) -> Result<()> {
    let mut group = Group {
        shared,
        followers,
        handed_off: false,
        done: false,
    };
    let watched: Vec<Vec<WatchedKey<'_>>> =
        group.followers.iter().map(|r| r.watched_keys()).collect();
    let mut members: SmallVec<[Member<'_>; 4]> = smallvec::smallvec![own];
    members.extend(group.followers.iter().zip(&watched).map(|(r, w)| Member {
        batch: &r.batch,
        watched: w,
    }));
    let syncs: SmallVec<[bool; 4]> = std::iter::once(own_sync)
        .chain(group.followers.iter().map(|r| r.sync))
        .collect();
    let tickets = group::write(shared, &members);
    drop(members);
    group.hand_off();
    let mut sync_error = sync_group(shared, &tickets, &syncs);
    let mut outcomes = tickets
        .into_iter()
        .zip(syncs)
        .map(|(ticket, sync)| settle(ticket, sync, &mut sync_error));
    let own_outcome = outcomes.next().unwrap_or(Ok(()));
    for (request, outcome) in group.followers.iter().zip(outcomes) {
        request.finish(outcome);
    }
    group.done = true;
    own_outcome
}

/// One `fdatasync` covering every written batch of the group that asked
/// for one; returns its error, if any.
fn sync_group(shared: &Shared, tickets: &[Result<u64>], syncs: &[bool]) -> Option<SyncError> {
    let ticket = tickets
        .iter()
        .zip(syncs)
        .filter(|(_, sync)| **sync)
        .filter_map(|(t, _)| t.as_ref().ok().copied())
        .max()?;
    let err = log_writer::sync_up_to(shared, ticket).err()?;
    Some(SyncError {
        why: err.to_string(),
        first: Some(err),
    })
}

/// A failed group sync: the error itself for the first writer that asked
/// for the sync, a refusal naming it for the others.
struct SyncError {
    why: String,
    first: Option<Error>,
}

/// A member's outcome: its write's, then its sync's.
fn settle(ticket: Result<u64>, sync: bool, sync_error: &mut Option<SyncError>) -> Result<()> {
    ticket?;
    match sync_error {
        Some(e) if sync => Err(e
            .first
            .take()
            .unwrap_or_else(|| Error::Poisoned(e.why.clone()))),
        _ => Ok(()),
    }
}

/// The queued requests a new leader takes as its group.
fn take_followers(shared: &Shared) -> Vec<Arc<Request>> {
    let mut state = lock(&shared.write_queue.state);
    let n = state.waiting.len().min(MAX_GROUP_BATCHES);
    state.waiting.drain(..n).collect()
}

/// A group being led: hands the lead on and fails the followers if the
/// leader unwinds before it finished them (a merge function may panic).
struct Group<'s> {
    shared: &'s Shared,
    followers: Vec<Arc<Request>>,
    handed_off: bool,
    done: bool,
}

impl Group<'_> {
    /// Gives the lead to the first queued writer, or ends the leading.
    fn hand_off(&mut self) {
        if std::mem::replace(&mut self.handed_off, true) {
            return;
        }
        let mut state = lock(&self.shared.write_queue.state);
        match state.waiting.pop_front() {
            Some(next) => {
                *lock(&next.turn) = Turn::Lead;
                next.wake.notify_one();
            }
            None => state.leading = false,
        }
    }
}

impl Drop for Group<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.hand_off();
        for request in &self.followers {
            request.finish(Err(Error::InvalidArgument(
                "a write grouped with this one panicked; nothing of this write is known to be written".into(),
            )));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
