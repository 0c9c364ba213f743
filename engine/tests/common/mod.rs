//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::Path;

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options};

/// Options for tests: small segments so rotation and compaction happen.
pub fn small_options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        ..Options::default()
    }
}

/// Opens `dir` with [`small_options`].
pub fn open(dir: &Path) -> Db {
    Db::open(dir, small_options()).expect("open")
}

/// Every (key, value) of a keyspace, in order, through a cursor.
pub fn scan_all(db: &Db, ks: KeyspaceId) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut c = db.cursor(ks, KeyRange::default()).expect("cursor");
    c.seek_to_first();
    c.map(|r| {
        let (k, v) = r.expect("scan");
        (k.into_vec(), v.into_vec())
    })
    .collect()
}

/// Total bytes of the segment files in `dir` that occupy disk blocks.
pub fn disk_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
        // A file compaction removes between the listing and here is gone.
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.blocks() * 512)
        .sum()
}
