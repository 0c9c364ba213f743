//! A database written by an older format version (1 to 5) opens under the
//! current one: its data reads back, and new records go to a segment whose
//! header names the current version.

mod common;

use std::path::Path;

use std::sync::Arc;

use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::format::segment_header::SEGMENT_VERSION;
use alexdb_engine::{MergeFunction, WriteOptions};

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

#[test]
fn a_version_4_database_opens_and_takes_new_writes_in_a_current_segment() {
    upgrade_from(4);
}

#[test]
fn a_version_5_database_opens_and_takes_new_writes_in_a_current_segment() {
    upgrade_from(5);
}

fn append() -> Arc<dyn MergeFunction> {
    Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
        Some([old.unwrap_or_default(), operand].concat())
    })
}

/// Merges written as version 5 wrote them (resolved, with the value) read
/// back as before after the upgrade, with no merge function set (they
/// need none), and new merges stack on them once one is.
#[test]
fn version_5_merges_read_as_written_and_take_new_operands() {
    let dir = tempfile::tempdir().unwrap();
    let w = WriteOptions::default();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        db.set_merge_function(ks, Some(append())).unwrap();
        db.set_merge_stack_limit(ks, 0).unwrap();
        for i in 0..50u32 {
            db.merge(ks, &(i % 5).to_be_bytes(), &[b'a' + (i % 26) as u8], &w)
                .unwrap();
        }
    }
    downgrade_to(dir.path(), 5);
    let expected =
        |k: u32| -> Vec<u8> { (0..10).map(|j| b'a' + ((k + 5 * j) % 26) as u8).collect() };
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        for k in 0..5u32 {
            let got = db.get_copied(ks, &k.to_be_bytes()).unwrap();
            assert_eq!(got.as_deref(), Some(&expected(k)[..]), "key {k}");
        }
        db.set_merge_function(ks, Some(append())).unwrap();
        db.merge(ks, &0u32.to_be_bytes(), b"!", &w).unwrap();
        db.merge(ks, &0u32.to_be_bytes(), b"?", &w).unwrap();
    }
    assert_eq!(segment_versions(dir.path()).last(), Some(&SEGMENT_VERSION));
    let db = common::open(dir.path());
    let ks = db.keyspace("default").unwrap();
    db.set_merge_function(ks, Some(append())).unwrap();
    let mut zero = expected(0);
    zero.extend_from_slice(b"!?");
    assert_eq!(db.get_copied(ks, &0u32.to_be_bytes()).unwrap(), Some(zero));
    db.verify().unwrap();
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
    // The merge is stored as its operand: reading it needs the function.
    let keep_operand = |_: &[u8], _: Option<&[u8]>, operand: &[u8]| Some(operand.to_vec());
    db.set_merge_function(ks, Some(std::sync::Arc::new(keep_operand)))
        .unwrap();
    assert_eq!(
        db.get_copied(ks, b"new").unwrap().as_deref(),
        Some(&b"v"[..])
    );
    assert_eq!(db.get_copied(ks, b"m").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(common::scan_all(&db, ks).len(), 102);
    db.verify().unwrap();
}
