//! Compaction filters: compaction applies each column family's filter, or
//! a fresh filter its factory makes for the run, to its keys: all of them
//! in `compact_range`, those of the segments it rewrites in the background.

use std::ffi::CStr;
use std::sync::{Arc, Mutex};

use alexdb as rocksdb;

use rocksdb::compaction_filter::CompactionFilter;
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{ColumnFamilyDescriptor, CompactionDecision, DB, IteratorMode, Options};

fn drop_underscored(_level: u32, key: &[u8], _value: &[u8]) -> CompactionDecision {
    match key.first() {
        Some(b'_') => CompactionDecision::Remove,
        Some(b'%') => CompactionDecision::Change(b"changed"),
        _ => CompactionDecision::Keep,
    }
}

#[test]
fn compact_range_applies_the_filter_of_each_column_family() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut filtered = Options::default();
    filtered.set_compaction_filter("drop", drop_underscored);
    let cfs = vec![ColumnFamilyDescriptor::new("filtered", filtered)];
    let db = DB::open_cf_descriptors(&opts, dir.path(), cfs).unwrap();
    let cf = db.cf_handle("filtered").unwrap();
    for key in [&b"_a"[..], b"%b", b"c"] {
        db.put_cf(&cf, key, b"v").unwrap();
        db.put(key, b"v").unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get_cf(&cf, b"_a").unwrap(), None);
    assert_eq!(db.get_cf(&cf, b"%b").unwrap(), Some(b"changed".to_vec()));
    assert_eq!(db.get_cf(&cf, b"c").unwrap(), Some(b"v".to_vec()));
    assert_eq!(
        db.get(b"_a").unwrap(),
        Some(b"v".to_vec()),
        "default has no filter"
    );
}

/// Keeps the first `keep` entries it is asked about and removes the rest;
/// records the contexts it was made with.
struct CountingFilter {
    seen: usize,
    keep: usize,
}

impl CompactionFilter for CountingFilter {
    fn filter(&mut self, _level: u32, _key: &[u8], _value: &[u8]) -> CompactionDecision {
        self.seen += 1;
        match self.seen > self.keep {
            true => CompactionDecision::Remove,
            false => CompactionDecision::Keep,
        }
    }
    fn name(&self) -> &CStr {
        c"counting"
    }
}

/// Makes a [`CountingFilter`] keeping `keep` entries, and logs each context.
struct CountingFactory {
    keep: usize,
    contexts: Arc<Mutex<Vec<CompactionFilterContext>>>,
}

impl CompactionFilterFactory for CountingFactory {
    type Filter = CountingFilter;
    fn create(&mut self, context: CompactionFilterContext) -> CountingFilter {
        self.contexts.lock().unwrap().push(context);
        CountingFilter {
            seen: 0,
            keep: self.keep,
        }
    }
    fn name(&self) -> &CStr {
        c"counting-factory"
    }
}

fn counting_factory(keep: usize) -> (CountingFactory, Arc<Mutex<Vec<CompactionFilterContext>>>) {
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let factory = CountingFactory {
        keep,
        contexts: contexts.clone(),
    };
    (factory, contexts)
}

/// Options that create the database, with a [`CountingFactory`] keeping
/// `keep` entries; and where the factory logs its contexts.
fn options_with_factory(keep: usize) -> (Options, Arc<Mutex<Vec<CompactionFilterContext>>>) {
    let (factory, contexts) = counting_factory(keep);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compaction_filter_factory(factory);
    (opts, contexts)
}

fn live_keys(db: &DB) -> Vec<Vec<u8>> {
    keys_of(db.iterator(IteratorMode::Start))
}

fn live_keys_cf(db: &DB, cf: &impl rocksdb::AsColumnFamilyRef) -> Vec<Vec<u8>> {
    keys_of(db.iterator_cf(cf, IteratorMode::Start))
}

fn keys_of(iter: rocksdb::DBIterator<'_>) -> Vec<Vec<u8>> {
    iter.map(|item| item.unwrap().0.to_vec()).collect()
}

#[test]
fn each_compact_range_runs_a_fresh_filter_from_the_factory() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, contexts) = options_with_factory(2);
    let db = DB::open(&opts, dir.path()).unwrap();
    for key in [b"a", b"b", b"c", b"d"] {
        db.put(key, b"v").unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(live_keys(&db), [b"a".to_vec(), b"b".to_vec()]);
    // A filter that kept counting would remove both survivors now.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(live_keys(&db), [b"a".to_vec(), b"b".to_vec()]);
    let contexts = contexts.lock().unwrap();
    assert_eq!(contexts.len(), 2, "one filter per compaction run");
    assert!(
        contexts
            .iter()
            .all(|c| c.is_full_compaction && c.is_manual_compaction)
    );
}

#[test]
fn a_compaction_filter_takes_precedence_over_a_factory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut opts, contexts) = options_with_factory(0);
    opts.set_compaction_filter("drop", drop_underscored);
    let db = DB::open(&opts, dir.path()).unwrap();
    for key in [&b"_a"[..], b"b"] {
        db.put(key, b"v").unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(live_keys(&db), [b"b".to_vec()]);
    assert!(contexts.lock().unwrap().is_empty(), "factory never asked");
}

#[test]
fn a_created_column_family_runs_its_factory_and_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = DB::open(&opts, dir.path()).unwrap();
    let (factory, contexts) = counting_factory(1);
    let mut cf_opts = Options::default();
    cf_opts.set_compaction_filter_factory(factory);
    db.create_cf("counted", &cf_opts).unwrap();
    let cf = db.cf_handle("counted").unwrap();
    for key in [b"x", b"y", b"z"] {
        db.put_cf(&cf, key, b"v").unwrap();
        db.put(key, b"v").unwrap();
    }
    db.compact_range_cf(&cf, None::<&[u8]>, None::<&[u8]>);
    assert_eq!(live_keys_cf(&db, &cf), [b"x".to_vec()]);
    assert_eq!(live_keys(&db).len(), 3, "default has no factory");
    assert_eq!(contexts.lock().unwrap().len(), 1);
}

#[test]
fn the_factory_is_named_in_the_log_options_dump() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, _) = options_with_factory(1);
    drop(DB::open(&opts, dir.path()).unwrap());
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("compaction_filter_factory") && l.contains("counting-factory")),
        "{log}"
    );
}

/// A key written while the pass runs, after the filter decided on its older
/// value, keeps the new value (as a RocksDB compaction never touches the
/// newer versions above the ones it rewrites); the other decisions stand.
#[test]
fn a_key_written_during_the_pass_keeps_its_new_value() {
    let dir = tempfile::tempdir().unwrap();
    let (reached_tx, reached_rx) = std::sync::mpsc::channel::<()>();
    let (written_tx, written_rx) = std::sync::mpsc::channel::<()>();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compaction_filter("remove-all", move |_level, key: &[u8], _value: &[u8]| {
        if key == b"k" {
            reached_tx.send(()).unwrap();
            written_rx.recv().unwrap();
        }
        CompactionDecision::Remove
    });
    let db = Arc::new(DB::open(&opts, dir.path()).unwrap());
    for key in [b"j", b"k", b"l"] {
        db.put(key, b"old").unwrap();
    }
    let pass = {
        let db = db.clone();
        std::thread::spawn(move || db.compact_range(None::<&[u8]>, None::<&[u8]>))
    };
    reached_rx.recv().unwrap();
    db.put(b"k", b"new").unwrap();
    written_tx.send(()).unwrap();
    pass.join().unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"new".to_vec()));
    assert_eq!(live_keys(&db), [b"k".to_vec()]);
}

/// A pass over many more entries than one batch of decisions holds decides
/// on every entry, each exactly once.
#[test]
fn a_pass_over_many_entries_decides_on_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(Mutex::new(0usize));
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let counted = calls.clone();
    opts.set_compaction_filter("thirds", move |_level, key: &[u8], _value: &[u8]| {
        *counted.lock().unwrap() += 1;
        let n = u32::from_be_bytes(key.try_into().unwrap());
        match n % 3 {
            0 => CompactionDecision::Remove,
            1 => CompactionDecision::Change(b"one"),
            _ => CompactionDecision::Keep,
        }
    });
    let db = DB::open(&opts, dir.path()).unwrap();
    const N: u32 = 10_000;
    for n in 0..N {
        db.put(n.to_be_bytes(), b"v").unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(*calls.lock().unwrap(), N as usize);
    let got: Vec<(u32, Vec<u8>)> = db
        .iterator(IteratorMode::Start)
        .map(|item| {
            let (key, value) = item.unwrap();
            (
                u32::from_be_bytes((*key).try_into().unwrap()),
                value.to_vec(),
            )
        })
        .collect();
    let want: Vec<(u32, Vec<u8>)> = (0..N)
        .filter(|n| n % 3 != 0)
        .map(|n| {
            (
                n,
                if n % 3 == 1 {
                    b"one".to_vec()
                } else {
                    b"v".to_vec()
                },
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// A background compaction (of a sealed 32 MiB log segment) runs the
/// factory's filter, told an automatic compaction that is not full.
#[test]
fn a_background_compaction_runs_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, contexts) = options_with_factory(0);
    let db = DB::open(&opts, dir.path()).unwrap();
    let value = vec![b'v'; 1024];
    for n in 0..40_000u32 {
        db.put(n.to_be_bytes(), &value).unwrap();
    }
    let start = std::time::Instant::now();
    while contexts.lock().unwrap().is_empty() && start.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    db.wait_for_compact(&rocksdb::WaitForCompactOptions::default())
        .unwrap();
    let automatic = CompactionFilterContext {
        is_full_compaction: false,
        is_manual_compaction: false,
    };
    assert_eq!(contexts.lock().unwrap().first(), Some(&automatic));
    assert_eq!(db.get(0u32.to_be_bytes()).unwrap(), None, "removed");
    let last = 39_999u32.to_be_bytes();
    assert_eq!(db.get(last).unwrap(), Some(value), "still in the log");
}

/// In a database opened with a TTL, a changed value gets the write time
/// of the value it replaces (the filter sees values without it).
#[test]
fn a_changed_value_keeps_its_write_time_in_a_ttl_database() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let noted = seen.clone();
    opts.set_compaction_filter("change", move |_level, _key: &[u8], value: &[u8]| {
        noted.lock().unwrap().push(value.to_vec());
        CompactionDecision::Change(b"new")
    });
    let db = DB::open_with_ttl(&opts, dir.path(), std::time::Duration::from_secs(3600)).unwrap();
    db.put(b"k", b"old").unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(b"k").unwrap(), Some(b"new".to_vec()));
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(*seen.lock().unwrap(), [b"old".to_vec(), b"new".to_vec()]);
}
