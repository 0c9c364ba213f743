//! How a lock-free reader retries after racing compaction.
//!
//! A read that loaded the segment table before compaction installed its
//! output, and then met an index entry already pointing into it (or a
//! record already moved), starts over: the next attempt sees the new state.
//! Attempts normally succeed at once, but on a machine whose cores are all
//! busy, the installing thread can lose its core in the middle of an
//! install for milliseconds, and a reader spinning meanwhile used to give
//! up after a fixed count of quick attempts ("kept racing compaction",
//! seen under load in `engine/tests/concurrency.rs`). [`Restarts`] retries
//! at once a few times, then yields its core to let the installer finish,
//! then sleeps a little between attempts, and gives up only after
//! [`GIVE_UP_AFTER`] of failed attempts: long enough for any install, short
//! enough to surface a read that can never succeed (a keyspace dropped
//! under it).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, Guard};

use crate::error::Result;
use crate::segment::SegmentTable;

/// Attempts made at once, before any wait.
const QUICK: u32 = 64;
/// Attempts after which a wait is a short sleep rather than a yield.
const YIELDING: u32 = 1024;
/// The sleep between late attempts.
const PAUSE: Duration = Duration::from_micros(100);
/// How long attempts go on failing before the read gives up.
pub(crate) const GIVE_UP_AFTER: Duration = Duration::from_secs(2);

/// The attempts of one read; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Restarts {
    attempts: u32,
    slow_since: Option<Instant>,
}

impl Restarts {
    /// Whether to make another attempt (the first always), after waiting
    /// as the attempts so far call for.
    #[inline]
    pub(crate) fn again(&mut self) -> bool {
        self.attempts = self.attempts.saturating_add(1);
        if self.attempts <= QUICK {
            return true;
        }
        let since = *self.slow_since.get_or_insert_with(Instant::now);
        if since.elapsed() > GIVE_UP_AFTER {
            return false;
        }
        match self.attempts <= YIELDING {
            true => std::thread::yield_now(),
            false => std::thread::sleep(PAUSE),
        }
        true
    }
}

/// How many attempts a lookup through the segment table gets.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Retry {
    /// As [`Restarts`] allows: at once, then yielding, then sleeping, for
    /// up to [`GIVE_UP_AFTER`] (reads, which must not fail spuriously).
    Patiently,
    /// At most this many attempts, at once (background work that can
    /// leave the step for its next pass).
    AtMost(u32),
}

/// What one attempt of a lookup came to.
pub(crate) enum Attempt<T> {
    /// The lookup is done.
    Done(T),
    /// It met a location the loaded table lacks (compaction or a rotation
    /// moved things under it): load the table again and start over.
    Again,
}

/// The loaded segment table an attempt reads through.
pub(crate) type LoadedTable = Guard<Arc<SegmentTable>>;

/// The one loop of every lookup that reads the index without a lock:
/// pin an epoch (no index node the attempt reaches is freed under it),
/// load the segment table, look up, and start over on
/// [`Attempt::Again`] while `retry` allows. `attempt` gets the table by
/// value, to keep in what it returns (a pinned value) or to drop. `None`
/// once the attempts are used up.
#[inline]
pub(crate) fn through_loaded_table<T>(
    segments: &ArcSwap<SegmentTable>,
    retry: Retry,
    mut attempt: impl FnMut(LoadedTable, &crossbeam_epoch::Guard) -> Result<Attempt<T>>,
) -> Result<Option<T>> {
    let mut restarts = Restarts::default();
    let mut tries = 0u32;
    loop {
        let go_on = match retry {
            Retry::Patiently => restarts.again(),
            Retry::AtMost(n) => {
                tries += 1;
                tries <= n
            }
        };
        if !go_on {
            return Ok(None);
        }
        let guard = crossbeam_epoch::pin();
        let table = segments.load();
        if let Attempt::Done(found) = attempt(table, &guard)? {
            return Ok(Some(found));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first attempts go at once; a read that never succeeds gives up
    /// after about [`GIVE_UP_AFTER`], not at once and not never.
    #[test]
    fn quick_attempts_then_waits_then_gives_up() {
        let mut restarts = Restarts::default();
        let start = Instant::now();
        for _ in 0..QUICK {
            assert!(restarts.again());
        }
        assert!(start.elapsed() < GIVE_UP_AFTER / 2);
        let mut attempts = QUICK;
        while restarts.again() {
            attempts += 1;
        }
        assert!(start.elapsed() >= GIVE_UP_AFTER);
        assert!(attempts > YIELDING, "{attempts}");
    }

    /// A lookup that keeps racing gets exactly its attempts under
    /// `AtMost`, then `None`; one that succeeds returns at once, with the
    /// table it read through.
    #[test]
    fn a_limited_lookup_tries_as_often_as_allowed() {
        let segments = ArcSwap::from_pointee(SegmentTable::default());
        let mut attempts = 0;
        let raced: Option<()> = through_loaded_table(&segments, Retry::AtMost(3), |_, _| {
            attempts += 1;
            Ok(Attempt::Again)
        })
        .unwrap();
        assert_eq!((raced, attempts), (None, 3));
        attempts = 0;
        let found = through_loaded_table(&segments, Retry::AtMost(3), |table, _| {
            attempts += 1;
            Ok(match attempts {
                2 => Attempt::Done(table.len()),
                _ => Attempt::Again,
            })
        })
        .unwrap();
        assert_eq!((found, attempts), (Some(0), 2));
    }

    /// An error ends the lookup at once, whatever attempts are left.
    #[test]
    fn an_error_ends_a_lookup() {
        let segments = ArcSwap::from_pointee(SegmentTable::default());
        let mut attempts = 0;
        let failed = through_loaded_table(&segments, Retry::Patiently, |_, _| {
            attempts += 1;
            Err::<Attempt<()>, _>(crate::Error::TryAgain("gone".into()))
        });
        assert!(failed.is_err());
        assert_eq!(attempts, 1);
    }
}
