//! TTL opens: values read back without their write time on every read
//! path, and `compact_range` drops expired entries per column family.

use std::time::Duration;

use alexdb as rocksdb;

use rocksdb::{ColumnFamilyDescriptor, ColumnFamilyTtl, DB, IteratorMode, Options};

fn open(dir: &std::path::Path) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let keep =
        ColumnFamilyDescriptor::new_with_ttl("keep", Options::default(), ColumnFamilyTtl::Disabled);
    DB::open_cf_descriptors_with_ttl(&opts, dir, [keep], Duration::from_secs(1)).unwrap()
}

#[test]
fn values_read_back_without_their_write_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put(b"k", b"value").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"value".to_vec()));
    assert_eq!(&*db.get_pinned(b"k").unwrap().unwrap(), b"value");
    assert_eq!(
        db.multi_get([b"k"])[0].as_ref().unwrap().as_deref(),
        Some(&b"value"[..])
    );
    let (_, value) = db.iterator(IteratorMode::Start).next().unwrap().unwrap();
    assert_eq!(&*value, b"value");
}

#[test]
fn compaction_drops_expired_entries_of_ttl_families_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let keep = db.cf_handle("keep").unwrap();
    db.put(b"old", b"1").unwrap();
    db.put_cf(&keep, b"old", b"1").unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(db.get(b"old").unwrap().is_some(), "not expired yet");
    std::thread::sleep(Duration::from_millis(2100));
    db.put(b"new", b"2").unwrap();
    assert!(
        db.get(b"old").unwrap().is_some(),
        "expired entries stay until compaction"
    );
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(b"old").unwrap(), None);
    assert_eq!(db.get(b"new").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get_cf(&keep, b"old").unwrap(), Some(b"1".to_vec()));
}
