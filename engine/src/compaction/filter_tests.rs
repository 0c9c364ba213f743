//! Compaction filters in rewrites of chosen segments: a key removed in a
//! rewrite that leaves an older version of it in another segment stays
//! removed, now and after reopens; what a rewrite that leaves segments out
//! tells the filter.

use std::sync::{Arc, Mutex};

use super::filter::{Decision, FilterContext, FilterRun};
use super::held::{Holder, Holds};
use super::rewrite::rewrite;
use super::rewrite::tests::seal_active;
use crate::db::keyspace::KeyspaceId;
use crate::format::index_checkpoint::INDEX_FILE;
use crate::format::record::short_len;
use crate::segment::Segment;
use crate::{CompactionFilter, Db, KeyRange, Options, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

/// Removes every value `new`, and notes each run's context.
#[derive(Default)]
struct RemoveNew(Mutex<Vec<FilterContext>>);

impl CompactionFilter for RemoveNew {
    fn start(&self, context: &FilterContext) -> Box<dyn FilterRun + '_> {
        self.0.lock().unwrap().push(*context);
        Box::new(|_: &[u8], value: &[u8]| match value {
            b"new" => Decision::Remove,
            _ => Decision::Keep,
        })
    }
}

fn open(dir: &std::path::Path, filter: &Arc<RemoveNew>) -> Db {
    let options = Options {
        background_compaction: false,
        ..Options::default()
    };
    let db = Db::open(dir, options).unwrap();
    db.set_compaction_filter(KS, Some(filter.clone())).unwrap();
    db
}

/// The sealed segment holding what was written since the last seal.
fn seal(db: &Db) -> Arc<Segment> {
    let shared = db.shared();
    let id = shared.lock_writer().active.id();
    seal_active(&shared);
    shared.segments.load().get(id).unwrap().clone()
}

#[test]
fn a_removed_key_does_not_come_back_from_an_older_segment() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(RemoveNew::default());
    let db = open(dir.path(), &filter);
    let w = WriteOptions::default();
    db.put(KS, b"k", b"old", &w).unwrap();
    db.put(KS, b"other", b"old", &w).unwrap();
    let older = seal(&db);
    db.put(KS, b"k", b"new", &w).unwrap();
    let newer = seal(&db);
    rewrite(&db.shared(), vec![newer], false).unwrap();
    assert_eq!(db.get_copied(KS, b"k").unwrap(), None);
    assert_eq!(db.live_keys(KS).unwrap(), 1);
    let context = FilterContext {
        keyspace: KS,
        full: false,
        bottommost: false,
        manual: false,
    };
    assert_eq!(*filter.0.lock().unwrap(), [context]);
    assert!(db.shared().segments.load().get(older.id()).is_some());
    drop(older);
    drop(db);
    let db = open(dir.path(), &filter);
    assert_eq!(db.get_copied(KS, b"k").unwrap(), None, "after a reopen");
    drop(db);
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let db = open(dir.path(), &filter);
    assert_eq!(db.get_copied(KS, b"k").unwrap(), None, "after a rebuild");
    assert_eq!(db.get_copied(KS, b"other").unwrap(), Some(b"old".to_vec()));
    // A full compaction drops the older version and then the delete.
    db.compact().unwrap();
    assert_eq!(db.get_copied(KS, b"k").unwrap(), None);
    let mut cursor = db.cursor(KS, KeyRange::default()).unwrap();
    cursor.seek_to_first();
    assert_eq!(cursor.count(), 1);
}

/// Removes every value of 1,000 bytes or more.
struct RemoveLarge;

impl CompactionFilter for RemoveLarge {
    fn start(&self, _: &FilterContext) -> Box<dyn FilterRun + '_> {
        Box::new(|_: &[u8], value: &[u8]| match value.len() >= 1_000 {
            true => Decision::Remove,
            false => Decision::Keep,
        })
    }
}

/// A put the filter removes while an older version of its key lies in a
/// segment outside the rewrite is copied as a delete held by that segment,
/// and booked at the delete's length, as the output counts it dead: booked
/// at the put's, a filter that removed large values gave the holder weight
/// that rewriting it could not reclaim.
#[test]
fn a_removed_put_is_booked_at_the_length_of_its_delete() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        background_compaction: false,
        ..Options::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    db.set_compaction_filter(KS, Some(Arc::new(RemoveLarge)))
        .unwrap();
    let w = WriteOptions::default();
    db.put(KS, b"k", b"old", &w).unwrap();
    let older = seal(&db);
    db.put(KS, b"k", &[1; 10_000], &w).unwrap();
    let newer = seal(&db);
    let rewritten = rewrite(&db.shared(), vec![newer], true).unwrap();
    let mut expected = Holds::default();
    expected.add(Holder::Segment(older.id()), short_len(1, 0) as u64);
    assert_eq!(rewritten.holds, expected);
    let output = db
        .shared()
        .segments
        .load()
        .get(rewritten.output.unwrap())
        .unwrap()
        .clone();
    assert_eq!(output.dead_bytes(), short_len(1, 0) as u64);
    assert_eq!(db.get_copied(KS, b"k").unwrap(), None);
}
