//! A database written by an older format version (1, 2 or 3) opens under the
//! current one: its data reads back, and new records go to a segment whose
//! header names the current version.

mod common;

use std::path::Path;

use alexdb_engine::WriteOptions;
use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::format::segment_header::SEGMENT_VERSION;

/// Rewrites the version of every segment header and of the manifest to
/// `version`, with their checksums, and removes the index checkpoint
/// (version 3 introduced it).
fn downgrade_to(dir: &Path, version: u32) {
    std::fs::remove_file(dir.join(INDEX_FILE)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".seg") {
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            let crc = crc32c::crc32c(&bytes[..60]);
            bytes[60..64].copy_from_slice(&crc.to_le_bytes());
        } else if name == "MANIFEST" {
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            let end = bytes.len() - 4;
            let crc = crc32c::crc32c(&bytes[..end]);
            bytes[end..].copy_from_slice(&crc.to_le_bytes());
        } else {
            continue;
        }
        std::fs::write(&path, bytes).unwrap();
    }
}

fn segment_versions(dir: &Path) -> Vec<u32> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| {
            let b = std::fs::read(p).unwrap();
            u32::from_le_bytes(b[8..12].try_into().unwrap())
        })
        .collect()
}

#[test]
fn a_version_1_database_opens_and_takes_new_writes_in_a_current_segment() {
    upgrade_from(1);
}

#[test]
fn a_version_2_database_opens_and_takes_new_writes_in_a_current_segment() {
    upgrade_from(2);
}

#[test]
fn a_version_3_database_opens_and_takes_new_writes_in_a_current_segment() {
    upgrade_from(3);
}

fn upgrade_from(version: u32) {
    let dir = tempfile::tempdir().unwrap();
    let w = WriteOptions::default();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        for i in 0..100u32 {
            db.put(ks, &i.to_be_bytes(), b"old", &w).unwrap();
        }
    }
    downgrade_to(dir.path(), version);
    assert!(segment_versions(dir.path()).iter().all(|&v| v == version));
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        assert_eq!(common::scan_all(&db, ks).len(), 100);
        let keep_operand = |_: &[u8], _: Option<&[u8]>, operand: &[u8]| Some(operand.to_vec());
        db.set_merge_function(ks, Some(std::sync::Arc::new(keep_operand)))
            .unwrap();
        db.merge(ks, b"m", b"x", &w).unwrap();
        db.put(ks, b"new", b"v", &w).unwrap();
    }
    // Read the headers only once the database is closed: while it is open,
    // its compaction thread may have created an output whose header is not
    // written yet.
    assert_eq!(segment_versions(dir.path()).last(), Some(&SEGMENT_VERSION));
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    assert_eq!(
        db.get_copied(ks, b"new").unwrap().as_deref(),
        Some(&b"v"[..])
    );
    assert_eq!(db.get_copied(ks, b"m").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(common::scan_all(&db, ks).len(), 102);
    db.verify().unwrap();
}
