//! Compaction filters in rewrites of chosen segments: a key removed in a
//! rewrite that leaves an older version of it in another segment stays
//! removed, now and after reopens; what a rewrite that leaves segments out
//! tells the filter.

use std::sync::{Arc, Mutex};

use super::filter::{Decision, FilterContext, FilterRun};
use super::rewrite::rewrite;
use super::rewrite::tests::seal_active;
use crate::db::keyspace::KeyspaceId;
use crate::format::index_checkpoint::INDEX_FILE;
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
