//! A database written by format version 1 opens under version 2: its data
//! reads back, and new records go to a segment whose header says version 2.

mod common;

use std::path::Path;

use alexdb_engine::WriteOptions;

/// Rewrites the version of every segment header and of the manifest to 1,
/// with their checksums, as format version 1 wrote them.
fn downgrade_to_version_1(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".seg") {
            bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
            let crc = crc32c::crc32c(&bytes[..60]);
            bytes[60..64].copy_from_slice(&crc.to_le_bytes());
        } else if name == "MANIFEST" {
            bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
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
fn a_version_1_database_opens_and_takes_new_writes_in_a_version_2_segment() {
    let dir = tempfile::tempdir().unwrap();
    let w = WriteOptions::default();
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        for i in 0..100u32 {
            db.put(ks, &i.to_be_bytes(), b"old", &w).unwrap();
        }
    }
    downgrade_to_version_1(dir.path());
    assert!(segment_versions(dir.path()).iter().all(|&v| v == 1));
    {
        let db = common::open(dir.path());
        let ks = db.keyspace("default").unwrap();
        assert_eq!(common::scan_all(&db, ks).len(), 100);
        let keep_operand = |_: &[u8], _: Option<&[u8]>, operand: &[u8]| Some(operand.to_vec());
        db.set_merge_function(ks, Some(std::sync::Arc::new(keep_operand)))
            .unwrap();
        db.merge(ks, b"m", b"x", &w).unwrap();
        db.put(ks, b"new", b"v", &w).unwrap();
        assert_eq!(segment_versions(dir.path()).last(), Some(&2));
    }
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
