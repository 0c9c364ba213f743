//! Online compaction: rewrites the records that are still reachable out of
//! sealed segments with many dead bytes, then retires those segments.
//!
//! Reachable means: the newest version of a key (puts, and tombstones that
//! still hide an older version somewhere on disk or from a snapshot), or an
//! older version that a live snapshot can see. Reads and writes go on
//! throughout; only the final install step takes the writer lock.
//!
//! Crash safety: the output is written, sealed (its seal lists the
//! segments it replaces) and synced with its directory entry; then the
//! MANIFEST's live-segment list is rewritten to name the output instead of
//! its inputs, which is the commit point. A crash before that rewrite
//! leaves an output the MANIFEST does not list, which the next open
//! removes; a crash after it leaves inputs no longer listed, which the next
//! open removes. A pass that fails before the commit removes its output at
//! once. Replaced segments are unlinked when the last reference lets go of
//! them: that may be a reader's, so a reader can unlink a file.

mod apply_ranges;
mod budget;
mod chain;
mod decisions;
pub mod filter;
#[cfg(test)]
mod filter_tests;
mod filtering;
mod gather;
pub(crate) mod held;
mod kept_stacks;
mod output;
mod plan;
mod repack;
mod rewrite;
pub(crate) mod side_rebuilds;
mod value_encoder;

use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::db::shared::Shared;
use crate::error::{Error, Result};

pub(crate) use apply_ranges::apply_range_tombstones;
pub(crate) use held::HeldDeletes;
pub(crate) use plan::{Plan, plan, plan_key_order, update_write_throttle};
pub(crate) use rewrite::{Rewritten, prune_relocations, rewrite};

/// Runs compaction passes until no segment passes `dead_ratio`, then one
/// key-ordering pass, and again, until no sealed segment is left in log
/// order and no runs are due to merge (see [`plan_key_order`]). Space comes
/// first: a key-ordering pass can take seconds, and the dead bytes that
/// writers made meanwhile are reclaimed before the next one, so a writer
/// that keeps overwriting does not leave them waiting behind every pass of
/// a backlog. Writers are slowed while this works off a debt of dead bytes
/// (see `write/throttle.rs`), never after it returns. Returns how many
/// compactions ran.
pub(crate) fn compact_while_needed(shared: &Shared, dead_ratio: f64) -> Result<u64> {
    let mut book = shared
        .compaction_lock
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let outcome = compact_holding(shared, &mut book, dead_ratio, false);
    shared.write_throttle.set(false);
    outcome
}

/// A full compaction asked for by the user ([`crate::Db::compact`]): under
/// the compaction lock, seals the active segment (unless it is empty) and
/// rewrites every sealed segment, so that no background pass over the
/// newly sealed segment runs between the two (its filters would see the
/// keys as an automatic compaction first). Returns how many compactions
/// ran.
pub(crate) fn compact_manually(shared: &Shared) -> Result<u64> {
    let mut book = shared
        .compaction_lock
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    {
        let mut w = shared.lock_writer();
        shared.check_poison()?;
        if w.active.data_bytes() > 0 {
            let capacity = shared.options.segment_bytes;
            crate::write::log_writer::rotate(shared, &mut w, capacity)?;
        }
    }
    let outcome = compact_holding(shared, &mut book, -1.0, true);
    shared.write_throttle.set(false);
    outcome
}

/// [`compact_while_needed`] under the compaction lock (`book` is what it
/// guards); `manual` tells the compaction filters whether the user asked
/// for it.
fn compact_holding(
    shared: &Shared,
    book: &mut HeldDeletes,
    dead_ratio: f64,
    manual: bool,
) -> Result<u64> {
    book.retain_live(&shared.segments.load());
    prune_relocations(shared);
    apply_ranges::apply_range_tombstones(shared);
    let mut runs = 0;
    // Segments this call wrote or retired: none is planned again by it.
    let mut done = Vec::new();
    let slows_writers = dead_ratio >= 0.0 && shared.options.background_compaction;
    loop {
        if slows_writers {
            update_write_throttle(shared, book, dead_ratio);
        }
        let mut outputs = Vec::new();
        while let Some(Plan { inputs }) = plan(shared, book, dead_ratio, &done, |_, _| true) {
            done.extend(inputs.iter().map(|s| s.id()));
            let rewritten = rewrite_into(shared, book, inputs, manual)?;
            done.extend(rewritten.output);
            outputs.extend(rewritten.output.map(|id| (id, rewritten.held_range_delete)));
            runs += 1;
            if slows_writers {
                update_write_throttle(shared, book, dead_ratio);
            }
        }
        runs += sweep_kept_deletes(shared, book, &outputs, manual)?;
        match key_order_pass(shared, book, manual)? {
            Some(output) => {
                done.extend(output);
                runs += 1;
            }
            None => break,
        }
    }
    if runs > 0 {
        crate::recovery::index_save::forget_if_stale(shared);
    }
    Ok(runs)
}

/// Runs one pass that puts sealed log segments in key order or merges runs
/// of like size, as [`plan_key_order`] plans, unless
/// `Options::key_order_run_bytes` is 0 or the database is closing. Returns
/// the pass's output, `None` when no pass ran.
fn key_order_pass(
    shared: &Shared,
    book: &mut HeldDeletes,
    manual: bool,
) -> Result<Option<Option<u32>>> {
    let run_bytes = shared.options.key_order_run_bytes;
    if run_bytes == 0 || shutting_down(shared) {
        // A close does not wait for key order; the next open resumes.
        return Ok(None);
    }
    let Some(Plan { inputs }) = plan_key_order(shared, run_bytes) else {
        return Ok(None);
    };
    let rewritten = rewrite_into(shared, book, inputs, manual)?;
    shared
        .counters
        .key_order_passes
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Some(rewritten.output))
}

/// Rewrites `inputs` (see [`rewrite`]) and enters in `book` the deletes
/// the output had to keep.
fn rewrite_into(
    shared: &Shared,
    book: &mut HeldDeletes,
    inputs: Vec<Arc<crate::segment::Segment>>,
    manual: bool,
) -> Result<Rewritten> {
    let ids: Vec<u32> = inputs.iter().map(|s| s.id()).collect();
    let rewritten = rewrite(shared, inputs, manual)?;
    book.record(&ids, rewritten.output, rewritten.holds.clone());
    Ok(rewritten)
}

/// Whether the database is closing (the compaction thread was told to stop).
fn shutting_down(shared: &Shared) -> bool {
    let (lock, _) = &shared.compaction_signal;
    lock.lock().unwrap_or_else(|e| e.into_inner()).shutdown
}

/// A pass keeps a delete (point or range) while a segment outside its
/// inputs may still hold an older version it hides; a later pass of the
/// same run usually rewrites that segment, dropping the older version, so
/// the delete can go then. Rewrites once more the run's outputs (given with
/// whether each held back a range delete) that held back a range delete or
/// whose kept point deletes, no longer held (see [`held`]), exceed the
/// configured dead ratio; their own outputs are not swept again, so a run
/// ends. Returns the passes run.
fn sweep_kept_deletes(
    shared: &Shared,
    book: &mut HeldDeletes,
    outputs: &[(u32, bool)],
    manual: bool,
) -> Result<u64> {
    let threshold = shared.options.compaction_dead_ratio.max(0.0);
    let mut runs = 0;
    let mut done = Vec::new();
    let held_range = |id: u32| outputs.iter().any(|&(o, held)| o == id && held);
    let swept = |s: &crate::segment::Segment| outputs.iter().any(|&(o, _)| o == s.id());
    while let Some(Plan { inputs }) = plan(shared, book, -1.0, &done, |s, weighed| {
        swept(s) && (held_range(s.id()) || weighed > threshold)
    }) {
        done.extend(inputs.iter().map(|s| s.id()));
        done.extend(rewrite_into(shared, book, inputs, manual)?.output);
        runs += 1;
    }
    Ok(runs)
}

/// The background compaction thread's handle.
#[derive(Debug)]
pub(crate) struct Compactor {
    thread: Option<JoinHandle<()>>,
    shared: Weak<Shared>,
}

impl Compactor {
    /// Starts the thread; it holds only a weak reference to the database.
    /// Its first pass runs at once: recovery has counted the dead bytes of
    /// every segment, and a process that is killed again and again must
    /// still get its space back, however short each of its lives.
    ///
    /// Fails if the thread cannot be started: without it nothing would
    /// reclaim space or run the index's side rebuilds, so the open fails.
    pub fn start(shared: &Arc<Shared>) -> Result<Compactor> {
        let weak = Arc::downgrade(shared);
        let thread_weak = weak.clone();
        let thread = std::thread::Builder::new()
            .name("alexdb-compaction".into())
            .spawn(move || run(thread_weak))
            .map_err(|e| Error::io(&shared.dir, e))?;
        // Only now that a thread will run them are rebuilds handed over.
        for ks in shared.keyspaces.load().iter() {
            crate::compaction::side_rebuilds::enable(ks);
        }
        shared.request_compaction();
        Ok(Compactor {
            thread: Some(thread),
            shared: weak,
        })
    }
}

impl Drop for Compactor {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            let (lock, cvar) = &shared.compaction_signal;
            lock.lock().unwrap_or_else(|e| e.into_inner()).shutdown = true;
            cvar.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(weak: Weak<Shared>) {
    let mut failures: u32 = 0;
    let mut quiet_keyspaces = repack::Watch::default();
    let mut budget_check = budget::LastCheck::default();
    loop {
        let Some(shared) = weak.upgrade() else { return };
        if failures > 0 && !back_off(&shared, failures) {
            return;
        }
        let Some(paused) = wait_for_work(&shared) else {
            return;
        };
        // A panic (a bug) fails this pass, not the thread: a database whose
        // compaction thread is gone never gets space back, and its writers
        // wait on rebuilds nobody runs.
        let pass = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::compaction::side_rebuilds::run(&shared);
            match paused {
                true => Ok(0),
                false => {
                    repack::run(&shared, &mut quiet_keyspaces);
                    budget::run(&shared, &mut budget_check);
                    compact_while_needed(&shared, shared.options.compaction_dead_ratio)
                }
            }
        }));
        match pass {
            Ok(Ok(_)) => failures = 0,
            Ok(Err(e)) => {
                failures = failures.saturating_add(1);
                record_background_error(&shared, e.to_string(), Some(e));
            }
            Err(_) => {
                failures = failures.saturating_add(1);
                record_background_error(&shared, "a compaction pass panicked".into(), None);
            }
        }
    }
}

/// The first wait after a failed pass; each further failure in a row
/// doubles it, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between two failed passes.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Waits before the next pass after `failures` failed ones in a row, so
/// that a pass that keeps failing (a full disk) does not retry at once,
/// however often writers ask for compaction. `false` on shutdown.
fn back_off(shared: &Shared, failures: u32) -> bool {
    let wait = FIRST_BACKOFF
        .saturating_mul(1 << failures.min(16).saturating_sub(1))
        .min(MAX_BACKOFF);
    let deadline = std::time::Instant::now() + wait;
    let (lock, cvar) = &shared.compaction_signal;
    let mut req = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if req.shutdown {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return true;
        }
        req = cvar
            .wait_timeout(req, deadline - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
}

/// Counts a failed background pass and keeps its error for
/// [`crate::Db::background_error`]. Damaged data in a compaction input
/// also stops writes (as RocksDB does with a corruption found in the
/// background): the handle is poisoned, and reads still work. Other
/// failures (a full disk, an I/O error) leave writes going; the pass is
/// retried after a back-off, and a failed output leaves no file behind.
fn record_background_error(shared: &Shared, text: String, err: Option<Error>) {
    shared
        .counters
        .compaction_errors
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some(err @ Error::Corruption { .. }) = err {
        let _ = shared.poison_with(err);
    }
    if let Some(listener) = &shared.options.on_background_error {
        // A listener that panics must not take the compaction thread down.
        let told = std::panic::AssertUnwindSafe(|| listener(&text));
        let _ = std::panic::catch_unwind(told);
    }
    *shared
        .background_error
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(text);
}

/// Waits for a request (or a periodic tick); `None` on shutdown, else
/// whether automatic compaction is paused.
fn wait_for_work(shared: &Shared) -> Option<bool> {
    let (lock, cvar) = &shared.compaction_signal;
    let mut req = lock.lock().unwrap_or_else(|e| e.into_inner());
    if !req.pending && !req.shutdown {
        req = cvar
            .wait_timeout(req, Duration::from_millis(500))
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    req.pending = false;
    (!req.shutdown).then_some(req.paused)
}
