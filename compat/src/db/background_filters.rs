//! Compaction filters and TTL expiry in the background.
//!
//! RocksDB runs a column family's compaction filter (and a TTL database its
//! expiry) in the compactions it starts by itself, as data accumulates, not
//! only in `compact_range`. AlexDB's compaction rewrites segments below the
//! compat layer, so a thread of the database's own runs the same pass as
//! `compact_range` (`compaction_filters.rs`, told an automatic compaction)
//! once enough has been written since the last one: at least
//! [`Trigger::min_keys`] keys, and at least as many as were live after it.
//! Each pass reads every live entry of the filtered column families, so
//! spacing passes by the live keys keeps the filter calls per written key
//! bounded, whatever the size of the database.
//!
//! The thread runs only in a database that can be written and has a
//! column family with a filter, a factory or a TTL (it starts when the
//! first such column family is opened or created), and skips column
//! families whose automatic compactions are disabled; after
//! `cancel_all_background_work` it runs no pass. Closing the database stops
//! it, within 1,024 entries read if a pass is under way.

use std::ops::Deref;
use std::sync::{Arc, PoisonError, Weak};

use super::compaction_filters::PassKind;
use super::core::Core;
use super::filter_thread::{FilterThread, Signal, Trigger};

/// Where the last pass left the counters.
#[derive(Clone, Copy, Debug)]
struct Mark {
    keys_written: u64,
    live_keys: u64,
}

impl Mark {
    /// The counters now (two atomic loads a keyspace: `Db::stats` would
    /// walk every index).
    fn now(core: &Core) -> Mark {
        Mark {
            keys_written: core.engine.keys_written(),
            live_keys: core.engine.total_live_keys(),
        }
    }

    /// Whether enough was written since this mark for another pass.
    fn due(&self, now: Mark, trigger: Trigger) -> bool {
        let written = now.keys_written.saturating_sub(self.keys_written);
        written >= trigger.min_keys.max(self.live_keys)
    }
}

/// The thread's loop: looks every poll interval, runs a pass when due
/// (`last`: the counters when the thread started).
fn run(core: Weak<Core>, signal: Arc<Signal>, mut last: Mark) {
    while let Some(trigger) = signal.wait() {
        let Some(core) = core.upgrade() else { return };
        if !core.engine.auto_compaction() || !last.due(Mark::now(&core), trigger) {
            continue;
        }
        core.log("AlexDB: automatic compaction: compaction filters and TTL");
        if let Err(e) = core.run_compaction_filters(PassKind::Automatic, &|| signal.stopped()) {
            core.log(&format!("AlexDB: compaction filters failed: {e}"));
        }
        last = Mark::now(&core);
    }
}

impl Core {
    /// Starts the background thread if this database can be written, has a
    /// filtered column family and has no thread yet.
    pub(crate) fn start_background_filters(&self) {
        if self.check_writable().is_err() || !self.has_filtered_families() {
            return;
        }
        let mut thread = self
            .filter_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if thread.is_some() {
            return;
        }
        let signal = Arc::new(Signal::default());
        let (core, shared, start) = (self.myself.clone(), signal.clone(), Mark::now(self));
        match std::thread::Builder::new()
            .name("alexdb-filters".into())
            .spawn(move || run(core, shared, start))
        {
            Ok(handle) => *thread = Some(FilterThread { signal, handle }),
            Err(e) => self.log(&format!(
                "AlexDB: no background compaction filters: cannot start a thread: {e}"
            )),
        }
    }

    /// Sets when the background thread runs a pass (tests use small ones).
    #[cfg(test)]
    pub(crate) fn set_filter_trigger(&self, trigger: Trigger) {
        let thread = self
            .filter_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(thread) = thread.as_ref() {
            thread.signal.set_trigger(trigger);
        }
    }
}

/// An open [`Core`] and its background thread, which holds it weakly:
/// dropping this stops the thread first, so the database closes in the
/// thread that drops it.
#[derive(Debug)]
pub struct RunningCore {
    core: Arc<Core>,
}

impl RunningCore {
    /// Shares `core` with the background thread it may start.
    pub(crate) fn new(mut core: Core) -> Self {
        let core = Arc::new_cyclic(|myself| {
            core.myself = myself.clone();
            core
        });
        core.start_background_filters();
        RunningCore { core }
    }
}

impl Deref for RunningCore {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
}

impl Drop for RunningCore {
    fn drop(&mut self) {
        let thread = self
            .core
            .filter_thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            thread.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Trigger;
    use crate::{CompactionDecision, DB, Options};

    /// Removes every value starting with `x`.
    fn drop_x(_level: u32, _key: &[u8], value: &[u8]) -> CompactionDecision {
        match value.first() {
            Some(b'x') => CompactionDecision::Remove,
            _ => CompactionDecision::Keep,
        }
    }

    fn options() -> Options {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compaction_filter("drop-x", drop_x);
        opts
    }

    const FAST: Trigger = Trigger {
        min_keys: 100,
        poll: Duration::from_millis(5),
    };

    /// Waits up to 10 s for `done`.
    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// Opens `dir` with `opts` and a trigger of 100 keys, polled every 5 ms.
    fn open_fast(opts: &Options, dir: &tempfile::TempDir) -> DB {
        let db = DB::open(opts, dir.path()).unwrap();
        db.core().set_filter_trigger(FAST);
        db
    }

    /// Writes 200 keys with `value`, more than the trigger asks for.
    fn write_enough(db: &DB, value: &[u8]) {
        for n in 0..200u32 {
            db.put(n.to_be_bytes(), value).unwrap();
        }
    }

    /// Enough writes start a pass without `compact_range`: the filtered
    /// entries go, the others stay.
    #[test]
    fn enough_writes_run_the_filter_in_the_background() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_fast(&options(), &dir);
        db.put(b"doomed", b"x1").unwrap();
        write_enough(&db, b"kept");
        assert!(eventually(|| db.get(b"doomed").unwrap().is_none()));
        assert_eq!(db.get(0u32.to_be_bytes()).unwrap(), Some(b"kept".to_vec()));
    }

    /// Background passes running beside a writer never undo one of its
    /// writes: every key is written a value the filter removes, then one
    /// it keeps, and each kept value survives the passes that ran between.
    #[test]
    fn passes_beside_a_writer_keep_every_last_write() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_fast(&options(), &dir);
        let key = |round: u32, n: u32| [round.to_be_bytes(), n.to_be_bytes()].concat();
        for round in 0..50u32 {
            for value in [&b"x"[..], b"kept"] {
                for n in 0..100u32 {
                    db.put(key(round, n), value).unwrap();
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
        for round in 0..50u32 {
            for n in 0..100u32 {
                let got = db.get(key(round, n)).unwrap();
                assert_eq!(got, Some(b"kept".to_vec()), "round {round}, key {n}");
            }
        }
    }

    /// A factory is asked for a filter for an automatic, full compaction.
    #[test]
    fn a_factory_is_told_an_automatic_compaction() {
        use crate::compaction_filter::CompactionFilter;
        use crate::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
        use std::sync::{Arc, Mutex};

        struct Remover;
        impl CompactionFilter for Remover {
            fn filter(&mut self, _: u32, _: &[u8], _: &[u8]) -> CompactionDecision {
                CompactionDecision::Remove
            }
            fn name(&self) -> &std::ffi::CStr {
                c"remover"
            }
        }
        struct Factory(Arc<Mutex<Vec<CompactionFilterContext>>>);
        impl CompactionFilterFactory for Factory {
            type Filter = Remover;
            fn create(&mut self, context: CompactionFilterContext) -> Remover {
                self.0.lock().unwrap().push(context);
                Remover
            }
            fn name(&self) -> &std::ffi::CStr {
                c"factory"
            }
        }
        let contexts = Arc::new(Mutex::new(Vec::new()));
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compaction_filter_factory(Factory(contexts.clone()));
        let dir = tempfile::tempdir().unwrap();
        let db = open_fast(&opts, &dir);
        write_enough(&db, b"v");
        assert!(eventually(|| !contexts.lock().unwrap().is_empty()));
        let automatic = CompactionFilterContext {
            is_full_compaction: true,
            is_manual_compaction: false,
        };
        assert_eq!(contexts.lock().unwrap()[0], automatic);
        assert!(eventually(|| db.get(0u32.to_be_bytes()).unwrap().is_none()));
    }

    /// Fewer writes than the trigger asks for run no pass, and neither does
    /// a database whose automatic compactions are disabled.
    #[test]
    fn no_pass_runs_before_enough_writes_or_with_auto_compactions_off() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_fast(&options(), &dir);
        db.put(b"doomed", b"x1").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(db.get(b"doomed").unwrap(), Some(b"x1".to_vec()));
        db.cancel_all_background_work(true);
        write_enough(&db, b"kept");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(db.get(b"doomed").unwrap(), Some(b"x1".to_vec()));
    }

    /// Closing the database in the middle of a pass stops it: a slow filter
    /// that keeps every one of 5,000 entries is not run to the end.
    #[test]
    fn closing_stops_a_pass_under_way() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compaction_filter("slow", move |_level, _key: &[u8], _value: &[u8]| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(1));
            CompactionDecision::Keep
        });
        let dir = tempfile::tempdir().unwrap();
        let db = DB::open(&opts, dir.path()).unwrap();
        for n in 0..5_000u32 {
            db.put(n.to_be_bytes(), b"v").unwrap();
        }
        db.core().set_filter_trigger(FAST);
        assert!(eventually(|| calls.load(Ordering::SeqCst) > 0));
        drop(db);
        let after_close = calls.load(Ordering::SeqCst);
        assert!(after_close < 5_000, "the pass ran on: {after_close} calls");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(calls.load(Ordering::SeqCst), after_close);
    }

    /// Closing the database stops the thread: the directory can be opened
    /// again at once.
    #[test]
    fn closing_stops_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        for _ in 0..3 {
            let db = open_fast(&options(), &dir);
            write_enough(&db, b"x");
            drop(db);
        }
        let db = DB::open(&options(), dir.path()).unwrap();
        drop(db);
    }
}
