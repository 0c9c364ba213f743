//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

pub mod counter_batches;

use std::path::Path;

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options};

/// Options for tests: small segments so rotation and compaction happen.
pub fn small_options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        ..Options::default()
    }
}

/// Options for tests that compact by hand: 1 MiB segments, no background
/// compaction.
pub fn manual_compaction_options() -> Options {
    Options {
        segment_bytes: 1 << 20,
        background_compaction: false,
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

/// Every keyspace's contents, by name.
pub type State = std::collections::BTreeMap<String, std::collections::BTreeMap<Vec<u8>, Vec<u8>>>;

/// Every keyspace's contents, read through cursors.
pub fn state(db: &Db) -> State {
    db.keyspace_names()
        .into_iter()
        .map(|name| {
            let ks = db.keyspace(&name).unwrap();
            (name, scan_all(db, ks).into_iter().collect())
        })
        .collect()
}

/// Total bytes of the segment files in `dir` that occupy disk blocks (on
/// Windows, where `std` does not say, their lengths: an upper bound).
pub fn disk_bytes(dir: &Path) -> u64 {
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    #[cfg(unix)]
    let allocated = |m: std::fs::Metadata| m.blocks() * 512;
    #[cfg(not(unix))]
    let allocated = |m: std::fs::Metadata| m.len();
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
        // A file compaction removes between the listing and here is gone.
        .filter_map(|e| e.metadata().ok())
        .map(allocated)
        .sum()
}

/// Makes a cleanly closed database look as if its process had crashed
/// without ever syncing: removes the durable watermark that a clean close
/// records in the MANIFEST, so recovery may take damage at the end of the
/// active segment for a torn tail.
pub fn forget_clean_close(dir: &Path) {
    use alexdb_engine::format::manifest::Manifest;
    let path = dir.join(alexdb_engine::keyspace::MANIFEST_FILE);
    let mut manifest = Manifest::decode(&std::fs::read(&path).unwrap()).unwrap();
    manifest
        .live
        .as_mut()
        .expect("a live-segment list")
        .watermark = None;
    std::fs::write(&path, manifest.encode()).unwrap();
}

/// Rewrites the MANIFEST as format version 1 wrote it: no live-segment
/// list and no watermark, so recovery follows the version-1 rules.
pub fn downgrade_manifest(dir: &Path) {
    use alexdb_engine::format::manifest::Manifest;
    let path = dir.join(alexdb_engine::keyspace::MANIFEST_FILE);
    let mut manifest = Manifest::decode(&std::fs::read(&path).unwrap()).unwrap();
    manifest.live = None;
    std::fs::write(&path, manifest.encode()).unwrap();
}

/// Segment files of `dir`, oldest first.
pub fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .collect();
    v.sort();
    v
}

/// Asserts that opening `dir` fails with a corruption error naming `file`
/// when the open reads every segment: the index checkpoint, if any, is
/// removed first (with it, open skips the segments it covers, and damage
/// there is reported by reads and `Db::verify`; see `index_checkpoint.rs`).
pub fn assert_corruption_in(dir: &Path, options: Options, file: &Path) -> u64 {
    let index = dir.join(alexdb_engine::format::index_checkpoint::INDEX_FILE);
    if let Err(e) = std::fs::remove_file(index) {
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
    match Db::open(dir, options) {
        Err(alexdb_engine::Error::Corruption {
            file: named,
            offset,
            ..
        }) => {
            assert_eq!(named, file, "corruption names the wrong file");
            offset
        }
        Err(other) => panic!("expected corruption in {}, got {other}", file.display()),
        Ok(_) => panic!("damage to {} went unnoticed", file.display()),
    }
}

/// Options for damage tests: 16 KiB segments (many of them), no background
/// compaction (the files change only when the test says so).
pub fn quiet_options() -> Options {
    Options {
        segment_bytes: 16 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

/// Every file of a database directory except `LOCK`, with its bytes, by
/// path.
pub fn dir_image(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with(alexdb_engine::LOCK_FILE))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}
