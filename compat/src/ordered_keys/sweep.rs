//! Sweeping deleted keys out of an [`OrderedKeys`].
//!
//! A deleted key stays in the set while some view may still see one of its
//! versions. A sweep removes each key that has no version at the latest
//! sequence number, and only while no live view (snapshot, cursor or
//! iterator) is older than that sequence number: then no view, live or
//! future, can see the key. It holds the write gate exclusively, one chunk
//! of keys at a time, so that no write to a column family with a comparator
//! adds a key between the check and the removal; between chunks writers
//! proceed. A sweep runs once the deletes since the last one outnumber the
//! column family's live keys (and at least [`SWEEP_MIN_DELETES`]), so its
//! cost, one point read per key, is paid once per as many deletes; while
//! an older view lives it gives up at once and is tried again at the next
//! delete.

use std::sync::atomic::Ordering;
use std::sync::{PoisonError, RwLock};

use alexdb_engine::Db;

use super::{OrderedKeys, Start, Way};
use crate::Error;
use crate::db::errors::IntoRocks;

/// Deletes before the first sweep of a small column family.
pub(crate) const SWEEP_MIN_DELETES: u64 = 1024;

/// Keys checked per hold of the write gate.
const SWEEP_CHUNK: usize = 1024;

impl OrderedKeys {
    /// Counts `count` more deletes.
    pub(crate) fn count_deletes(&self, count: u64) {
        self.deletes_since_sweep.fetch_add(count, Ordering::Relaxed);
    }

    /// Whether the deletes since the last sweep make one due.
    pub(crate) fn sweep_due(&self, engine: &Db) -> bool {
        let deletes = self.deletes_since_sweep.load(Ordering::Relaxed);
        deletes >= SWEEP_MIN_DELETES && deletes >= engine.live_keys(self.ks).unwrap_or(0)
    }

    /// Removes the keys no view can see a version of, unless another sweep
    /// runs or a view older than the latest write lives. `gate` is the
    /// write gate every write to a column family with a comparator holds.
    pub(crate) fn sweep(&self, engine: &Db, gate: &RwLock<()>) -> Result<(), Error> {
        if self.sweeping.swap(true, Ordering::Acquire) {
            return Ok(());
        }
        let counted = self.deletes_since_sweep.load(Ordering::Relaxed);
        let outcome = self.sweep_all(engine, gate);
        if let Ok(true) = outcome {
            self.deletes_since_sweep
                .fetch_sub(counted, Ordering::Relaxed);
        }
        self.sweeping.store(false, Ordering::Release);
        outcome.map(|_| ())
    }

    /// Sweeps chunk by chunk; whether it reached the end.
    fn sweep_all(&self, engine: &Db, gate: &RwLock<()>) -> Result<bool, Error> {
        // Checked first without the gate too, so that a delete made while
        // an old snapshot lives does not stop every writer to find out.
        if !no_older_view(engine) {
            return Ok(false);
        }
        let mut from = Start::Edge;
        loop {
            let _exclusive = gate.write().unwrap_or_else(PoisonError::into_inner);
            if !no_older_view(engine) {
                return Ok(false);
            }
            match self.sweep_chunk(engine, from.as_ref())? {
                Some(last) => from = Start::After(last),
                None => return Ok(true),
            }
        }
    }

    /// Checks up to [`SWEEP_CHUNK`] keys from `from` on, removing those
    /// without a version; the last key checked, unless the set ended.
    fn sweep_chunk(&self, engine: &Db, from: Start<&[u8]>) -> Result<Option<Vec<u8>>, Error> {
        let mut keys = Vec::with_capacity(SWEEP_CHUNK);
        self.walk(from, Way::Forward, SWEEP_CHUNK, &mut keys);
        for key in &keys {
            if engine.get_pinned(self.ks, key).rocks()?.is_none() {
                self.remove(key);
            }
        }
        Ok(keys.pop().filter(|_| keys.len() + 1 == SWEEP_CHUNK))
    }
}

impl OrderedKeys {
    /// Removes those of `forms` that have no version, if no live view is
    /// older than the latest write: the forms a write just deleted to keep
    /// one form of their class visible. The caller holds the write gate
    /// exclusively.
    pub(crate) fn retire_forms(&self, engine: &Db, forms: &[Vec<u8>]) -> Result<(), Error> {
        if !no_older_view(engine) {
            return Ok(());
        }
        for form in forms {
            if engine.get_pinned(self.ks, form).rocks()?.is_none() {
                self.remove(form);
            }
        }
        Ok(())
    }
}

/// Whether every live view sees the latest write (or there is none).
fn no_older_view(engine: &Db) -> bool {
    let latest = engine.latest_sequence_number();
    engine
        .oldest_view_seq()
        .is_none_or(|oldest| oldest >= latest)
}
