//! The handle of a database's background filter thread, and the signal
//! that wakes or stops it (the thread itself is in `background_filters.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// When the background thread runs a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Trigger {
    /// The fewest keys written between two passes.
    pub min_keys: u64,
    /// How often the thread looks at what was written.
    pub poll: Duration,
}

impl Default for Trigger {
    /// About what RocksDB writes before its first compaction with default
    /// options (four 64 MiB memtables flushed to level 0) at 256-byte
    /// entries; looked at every second.
    fn default() -> Self {
        Trigger {
            min_keys: 1 << 20,
            poll: Duration::from_secs(1),
        }
    }
}

/// What the database and its background thread share.
#[derive(Debug, Default)]
pub(super) struct Signal {
    /// When to run a pass (the lock the thread waits under).
    pub(super) trigger: Mutex<Trigger>,
    pub(super) wake: Condvar,
    /// Whether the thread must stop: read while waiting (under the lock)
    /// and by a pass under way.
    pub(super) stopping: AtomicBool,
}

impl Signal {
    /// Waits one poll interval (less if woken); the trigger, or `None`
    /// once told to stop.
    pub(super) fn wait(&self) -> Option<Trigger> {
        let trigger = self.trigger.lock().unwrap_or_else(PoisonError::into_inner);
        if self.stopped() {
            return None;
        }
        let poll = trigger.poll;
        let (trigger, _) = self
            .wake
            .wait_timeout(trigger, poll)
            .unwrap_or_else(PoisonError::into_inner);
        (!self.stopped()).then_some(*trigger)
    }

    pub(super) fn stopped(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Tells the thread to stop. The flag is set before the lock is taken,
    /// so a thread about to wait sees it, and one waiting is woken.
    pub(super) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        let _waiting = self.trigger.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }

    #[cfg(test)]
    pub(super) fn set_trigger(&self, trigger: Trigger) {
        *self.trigger.lock().unwrap_or_else(PoisonError::into_inner) = trigger;
        self.wake.notify_all();
    }
}

/// The running background thread of one database.
#[derive(Debug)]
pub(crate) struct FilterThread {
    pub(super) signal: Arc<Signal>,
    pub(super) handle: JoinHandle<()>,
}

impl FilterThread {
    /// Stops the thread and waits for it.
    pub(crate) fn stop(self) {
        self.signal.stop();
        let _ = self.handle.join();
    }
}
