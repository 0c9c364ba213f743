//! Compaction filters: what each decision does to a key, what a filter is
//! told and asked about, how snapshots see its decisions, and that they
//! last through reopens (with and without the index checkpoint).

mod common;

use std::sync::{Arc, Mutex};

use alexdb_engine::compaction_filter::{Decision, FilterContext, FilterRun};
use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::{CompactionFilter, Db, KeyspaceId, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

fn put(db: &Db, key: &[u8], value: &[u8]) {
    db.put(KS, key, value, &WriteOptions::default()).unwrap();
}

fn get(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    db.get_copied(KS, key).unwrap()
}

/// Decides by the value's first byte: `r` removes, `c` changes the value
/// to `changed`, `s` removes and skips up to the rest of the value, and
/// anything else is kept.
fn by_first_byte(_key: &[u8], value: &[u8]) -> Decision {
    match value.first() {
        Some(b'r') => Decision::Remove,
        Some(b'c') => Decision::Change(b"changed".to_vec()),
        Some(b's') => Decision::RemoveAndSkipUntil(value[1..].to_vec()),
        _ => Decision::Keep,
    }
}

/// A filter that decides with `decide` and records every context it is
/// started with and every key it is asked about.
struct Recording {
    decide: fn(&[u8], &[u8]) -> Decision,
    contexts: Mutex<Vec<FilterContext>>,
    asked: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Recording {
    fn new(decide: fn(&[u8], &[u8]) -> Decision) -> Arc<Self> {
        Arc::new(Recording {
            decide,
            contexts: Mutex::default(),
            asked: Arc::default(),
        })
    }

    fn asked(&self) -> Vec<Vec<u8>> {
        self.asked.lock().unwrap().clone()
    }
}

impl CompactionFilter for Recording {
    fn start(&self, context: &FilterContext) -> Box<dyn FilterRun + '_> {
        self.contexts.lock().unwrap().push(*context);
        let asked = self.asked.clone();
        let decide = self.decide;
        Box::new(move |key: &[u8], value: &[u8]| {
            asked.lock().unwrap().push(key.to_vec());
            decide(key, value)
        })
    }
}

fn open_filtered(dir: &std::path::Path, filter: Arc<dyn CompactionFilter>) -> Db {
    let db = Db::open(dir, common::manual_compaction_options()).unwrap();
    db.set_compaction_filter(KS, Some(filter)).unwrap();
    db
}

#[test]
fn each_decision_applies_at_compact() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Recording::new(by_first_byte);
    let db = open_filtered(dir.path(), filter.clone());
    for (key, value) in [
        (&b"a"[..], &b"keep"[..]),
        (b"b", b"remove"),
        (b"c", b"change"),
        (b"d", b"sf"),
        (b"e", b"kept but skipped"),
        (b"f", b"keep: the bound itself"),
        (b"g", b"sa"),
        (b"h", b"keep"),
    ] {
        put(&db, key, value);
    }
    db.compact().unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = [
        (&b"a"[..], &b"keep"[..]),
        (b"c", b"changed"),
        (b"f", b"keep: the bound itself"),
        // A bound at or below the key keeps the key.
        (b"g", b"sa"),
        (b"h", b"keep"),
    ]
    .iter()
    .map(|(k, v)| (k.to_vec(), v.to_vec()))
    .collect();
    assert_eq!(common::scan_all(&db, KS), want);
    let asked: Vec<Vec<u8>> = ["a", "b", "c", "d", "f", "g", "h"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    assert_eq!(
        filter.asked(),
        asked,
        "e, in the skipped range, is not asked"
    );
    assert_eq!(db.live_keys(KS).unwrap(), 5);
}

#[test]
fn a_filter_is_told_what_the_compaction_is() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Recording::new(by_first_byte);
    let db = open_filtered(dir.path(), filter.clone());
    let other = db.create_keyspace("other").unwrap();
    db.put(other, b"x", b"remove", &WriteOptions::default())
        .unwrap();
    put(&db, b"k", b"v");
    db.compact().unwrap();
    let contexts = filter.contexts.lock().unwrap().clone();
    let want = FilterContext {
        keyspace: KS,
        full: true,
        bottommost: true,
        manual: true,
    };
    assert_eq!(contexts, [want], "one run, of the filtered keyspace only");
    assert_eq!(
        db.get_copied(other, b"x").unwrap(),
        Some(b"remove".to_vec()),
        "a keyspace without a filter keeps everything"
    );
}

/// As RocksDB does, the filter sees each key's newest version whatever
/// snapshots are open: a snapshot that saw the version sees the decision,
/// one older than it still sees the version before, which is not shown to
/// the filter.
#[test]
fn snapshots_see_what_rocksdb_snapshots_see() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Recording::new(by_first_byte);
    let db = open_filtered(dir.path(), filter.clone());
    put(&db, b"k", b"first");
    put(&db, b"j", b"change me");
    let before = db.snapshot();
    put(&db, b"k", b"remove me");
    let after = db.snapshot();
    db.compact().unwrap();
    assert_eq!(get(&db, b"k"), None);
    assert!(after.get(KS, b"k").unwrap().is_none());
    assert_eq!(
        before.get(KS, b"k").unwrap().as_deref(),
        Some(&b"first"[..])
    );
    assert_eq!(
        before.get(KS, b"j").unwrap().as_deref(),
        Some(&b"changed"[..])
    );
    assert_eq!(filter.asked(), [b"j".to_vec(), b"k".to_vec()]);
    // Once the snapshots are gone, the next compaction drops the delete
    // and the version beneath it.
    drop((before, after));
    db.compact().unwrap();
    assert_eq!(get(&db, b"k"), None);
    assert_eq!(common::scan_all(&db, KS).len(), 1);
}

/// What a filter removed or changed stays so after a clean reopen and
/// after a reopen that rebuilds the index from the segments.
#[test]
fn decisions_last_through_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let filter: Arc<dyn CompactionFilter> = Arc::new(by_first_byte);
    let db = open_filtered(dir.path(), filter.clone());
    for i in 0..3_000u32 {
        let value: &[u8] = match i % 3 {
            0 => b"old",
            _ => b"keep",
        };
        put(&db, &i.to_be_bytes(), value);
    }
    db.compact().unwrap();
    for i in (0..3_000u32).step_by(3) {
        let value: &[u8] = match i % 2 {
            0 => b"remove",
            _ => b"change",
        };
        put(&db, &i.to_be_bytes(), value);
    }
    db.compact().unwrap();
    let want = common::state(&db);
    assert_eq!(want["default"].len(), 2_000 + 500);
    drop(db);
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    assert_eq!(common::state(&db), want, "after a clean reopen");
    drop(db);
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    assert_eq!(
        common::state(&db),
        want,
        "after a reopen without a checkpoint"
    );
    for i in (0..3_000u32).step_by(6) {
        assert_eq!(get(&db, &i.to_be_bytes()), None, "{i}");
    }
}

/// Merges are never shown to the filter (they hold their resolved value,
/// not an operand); deletes neither.
#[test]
fn merges_and_deletes_are_not_shown_to_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Recording::new(|_, _| Decision::Remove);
    let db = open_filtered(dir.path(), filter.clone());
    let append = |_key: &[u8], existing: Option<&[u8]>, operand: &[u8]| {
        Some([existing.unwrap_or_default(), operand].concat())
    };
    db.set_merge_function(KS, Some(Arc::new(append))).unwrap();
    put(&db, b"m", b"base");
    db.merge(KS, b"m", b"+1", &WriteOptions::default()).unwrap();
    put(&db, b"d", b"v");
    db.delete(KS, b"d", &WriteOptions::default()).unwrap();
    put(&db, b"p", b"v");
    db.compact().unwrap();
    assert_eq!(filter.asked(), [b"p".to_vec()]);
    assert_eq!(get(&db, b"m"), Some(b"base+1".to_vec()));
    assert_eq!(get(&db, b"p"), None);
}

#[test]
fn a_change_over_the_value_limit_fails_the_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let huge = |_: &[u8], _: &[u8]| Decision::Change(vec![0; alexdb_engine::MAX_VALUE_BYTES + 1]);
    let db = open_filtered(dir.path(), Arc::new(huge));
    put(&db, b"k", b"v");
    let err = db.compact().unwrap_err();
    assert!(
        matches!(err, alexdb_engine::Error::InvalidArgument(_)),
        "{err}"
    );
    assert_eq!(get(&db, b"k"), Some(b"v".to_vec()), "nothing was installed");
    db.set_compaction_filter(KS, None).unwrap();
    db.compact().unwrap();
    assert_eq!(get(&db, b"k"), Some(b"v".to_vec()));
}

/// A background pass that puts a new log segment in key order leaves the
/// larger run holding an older version of a key out: the filter's removal
/// keeps a delete for it, so the older version does not come back, not
/// even when a reopen rebuilds the index from the segments.
#[test]
fn a_key_removed_by_a_background_pass_stays_removed_after_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let options = alexdb_engine::Options {
        segment_bytes: 16 << 10,
        ..alexdb_engine::Options::default()
    };
    let open = || {
        let db = Db::open(dir.path(), options.clone()).unwrap();
        db.set_auto_compaction(false);
        db.set_compaction_filter(KS, Some(Arc::new(by_first_byte)))
            .unwrap();
        db
    };
    let settle = |db: &Db| {
        db.set_auto_compaction(true);
        db.wait_for_compaction().unwrap();
        db.set_auto_compaction(false);
    };
    let db = open();
    put(&db, b"k", b"old");
    for i in 0..400u32 {
        put(&db, &i.to_be_bytes(), &[b'v'; 500]);
    }
    settle(&db);
    put(&db, b"k", b"remove");
    for i in 0..40u32 {
        put(&db, &(1_000 + i).to_be_bytes(), &[b'w'; 500]);
    }
    settle(&db);
    assert_eq!(get(&db, b"k"), None);
    drop(db);
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let db = open();
    assert_eq!(get(&db, b"k"), None, "after a rebuild");
    assert_eq!(common::scan_all(&db, KS).len(), 440);
}
