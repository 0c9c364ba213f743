//! Leading a write group: a writer that got the lead writes its own batch
//! and the queued ones (see `write/queue.rs`) as one group, hands the lead
//! on, syncs once for the group if any member asked, and wakes each
//! follower with its own outcome.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::options::WriteOptions;
use crate::write::batch::WriteBatch;
use crate::write::conflicts::WatchedKey;
use crate::write::group::{self, Member};
use crate::write::log_writer;
use crate::write::queue::{Joined, Request, Turn};

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
    let queued = shared.write_queue.join(|| {
        let watched = watched
            .iter()
            .map(|w| (w.keyspace, w.key.to_vec(), w.since_seq))
            .collect();
        Request::new(batch.clone(), watched, sync)
    });
    let request = match queued {
        // Nobody was queued: a group of this write alone.
        Joined::LeadAlone => return lead(shared, Member { batch, watched }, sync, Vec::new()),
        Joined::Queued(request) => request,
    };
    match request.wait_turn() {
        Turn::Done(outcome) => outcome,
        Turn::Lead | Turn::Waiting => {
            let watched = watched_keys(&request);
            let own = Member {
                batch: &request.batch,
                watched: &watched,
            };
            let followers = shared.write_queue.take_followers();
            lead(shared, own, request.sync, followers)
        }
    }
}

/// The keys a queued request is written unless they changed.
fn watched_keys(request: &Request) -> Vec<WatchedKey<'_>> {
    request
        .watched
        .iter()
        .map(|(keyspace, key, since_seq)| WatchedKey {
            keyspace: *keyspace,
            key,
            since_seq: *since_seq,
        })
        .collect()
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
        group.followers.iter().map(|r| watched_keys(r)).collect();
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
        self.shared.write_queue.hand_off();
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
