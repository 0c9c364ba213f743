//! `live_files`: one entry per segment file and column family with records
//! in it, with its key range and counts (compare rust-rocksdb's
//! `test_db.rs`, which checks the same fields after a `compact_range_cf`).

use alexdb as rocksdb;

use rocksdb::{DB, Options};

fn open_with_cf1(dir: &std::path::Path) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    DB::open_cf(&opts, dir, ["cf1"]).unwrap()
}

#[test]
fn live_files_lists_each_family_in_each_file_with_its_keys_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_with_cf1(dir.path());
    assert!(db.live_files().unwrap().is_empty(), "nothing written yet");
    let cf1 = db.cf_handle("cf1").unwrap();
    for k in [b"k3", b"k1", b"k5", b"k2", b"k4"] {
        db.put_cf(&cf1, k, b"v").unwrap();
    }
    db.delete_cf(&cf1, b"k0").unwrap();
    db.put(b"z", b"in default").unwrap();
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    let cf1_file = files
        .iter()
        .find(|f| f.column_family_name == "cf1")
        .unwrap();
    assert_eq!(cf1_file.start_key.as_deref(), Some(&b"k0"[..]));
    assert_eq!(cf1_file.end_key.as_deref(), Some(&b"k5"[..]));
    assert_eq!((cf1_file.num_entries, cf1_file.num_deletions), (6, 1));
    let default_file = files
        .iter()
        .find(|f| f.column_family_name == "default")
        .unwrap();
    assert_eq!(default_file.name, cf1_file.name, "families share the file");
    assert_eq!(default_file.num_entries, 1);
    assert!(cf1_file.name.starts_with('/'));
    assert!(dir.path().join(&cf1_file.name[1..]).is_file());
    assert!(cf1_file.size > 0);
    assert_eq!(cf1_file.level, 0);

    db.compact_range_cf(&cf1, None::<&[u8]>, None::<&[u8]>);
    let files = db.live_files().unwrap();
    let cf1_files: Vec<_> = files
        .iter()
        .filter(|f| f.column_family_name == "cf1")
        .collect();
    assert_eq!(cf1_files.len(), 1, "{files:?}");
    let f = cf1_files[0];
    assert_eq!(
        f.start_key.as_deref(),
        Some(&b"k1"[..]),
        "the delete is gone"
    );
    assert_eq!(f.end_key.as_deref(), Some(&b"k5"[..]));
    assert_eq!((f.num_entries, f.num_deletions), (5, 0));
}

#[test]
fn a_dropped_family_has_no_files() {
    let dir = tempfile::tempdir().unwrap();
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = open_with_cf1(dir.path());
    db.put_cf(&db.cf_handle("cf1").unwrap(), b"a", b"1")
        .unwrap();
    db.drop_cf("cf1").unwrap();
    let files = db.live_files().unwrap();
    assert!(
        files.iter().all(|f| f.column_family_name != "cf1"),
        "{files:?}"
    );
}
