//! Regression: a segment file deleted from the directory went unnoticed;
//! open succeeded without its keys. The MANIFEST lists every segment the
//! database needs, and a listed file that is missing is a corruption error
//! naming it.

mod common;

use std::fs;

use alexdb_engine::{Db, Options, WriteOptions};

fn options() -> Options {
    common::quiet_options()
}

fn populate(dir: &std::path::Path) {
    let db = Db::open(dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    for i in 0..600u32 {
        db.put(ks, &i.to_be_bytes(), &[7; 60], &WriteOptions::default())
            .unwrap();
    }
}

#[test]
fn every_missing_segment_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    let segments = common::segment_files(dir.path());
    assert!(segments.len() >= 4, "{} segments", segments.len());
    for victim in &segments {
        let bytes = fs::read(victim).unwrap();
        fs::remove_file(victim).unwrap();
        let offset = common::assert_corruption_in(dir.path(), options(), victim);
        assert_eq!(offset, 0);
        fs::write(victim, bytes).unwrap();
    }
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    assert_eq!(db.live_keys(ks).unwrap(), 600);
}

#[test]
fn a_missing_segment_after_compaction_is_corruption_too() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.compact().unwrap();
    }
    let segments = common::segment_files(dir.path());
    let victim = &segments[0];
    fs::remove_file(victim).unwrap();
    common::assert_corruption_in(dir.path(), options(), victim);
}
