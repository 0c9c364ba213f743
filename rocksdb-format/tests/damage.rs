//! Damaged files give a typed error, never a panic: a flipped byte under a
//! checksum is a checksum mismatch; with checksums off, every truncation
//! and byte flip of a table, MANIFEST and WAL still parses or errors.

mod common;

use std::path::{Path, PathBuf};

use alexdb_rocksdb_format::table::{Table, TableIter};
use alexdb_rocksdb_format::{FormatError, RocksDir, log, manifest, wal};
use common::{Layout, open, write_workload};

fn files_with(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    out.sort();
    out
}

fn database(layout: &Layout) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_workload(&open(dir.path(), layout), 400);
    dir
}

/// Parses a table from bytes to the end; any outcome but a panic is fine.
fn read_table(bytes: Vec<u8>) -> Result<usize, FormatError> {
    let table = Table::from_bytes("fuzzed.sst", bytes)?;
    let mut n = 0;
    for e in TableIter::new(table) {
        e?;
        n += 1;
    }
    Ok(n)
}

#[test]
fn flipped_table_byte_is_a_checksum_mismatch() {
    let dir = database(&Layout::default());
    let sst = files_with(dir.path(), |n| n.ends_with(".sst")).remove(0);
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[10] ^= 0x40;
    std::fs::write(&sst, &bytes).unwrap();
    let err = RocksDir::open(dir.path())
        .and_then(|db| {
            for name in common::FAMILIES {
                db.entries(name, Some(&common::our_concat))?;
            }
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, FormatError::ChecksumMismatch { .. }), "{err}");
}

#[test]
fn every_truncation_and_flip_of_an_unchecksummed_table_is_handled() {
    let layout = Layout {
        checksum: 0,
        restart_interval: 2,
        ..Layout::default()
    };
    let dir = database(&layout);
    for sst in files_with(dir.path(), |n| n.ends_with(".sst"))
        .into_iter()
        .take(2)
    {
        let bytes = std::fs::read(&sst).unwrap();
        assert!(read_table(bytes.clone()).unwrap() > 0);
        for cut in (0..bytes.len()).step_by(7) {
            let _ = read_table(bytes[..cut].to_vec());
        }
        for at in (0..bytes.len()).step_by(3) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xa5;
            let _ = read_table(damaged);
        }
    }
}

#[test]
fn damaged_manifest_and_wal_are_errors_not_panics() {
    let dir = database(&Layout::default());
    let manifest_path = files_with(dir.path(), |n| n.starts_with("MANIFEST-")).remove(0);
    let bytes = std::fs::read(&manifest_path).unwrap();
    assert!(manifest::replay(&bytes, 1, "MANIFEST").is_ok());
    let mut flipped = bytes.clone();
    flipped[20] ^= 1;
    assert!(matches!(
        manifest::replay(&flipped, 1, "MANIFEST"),
        Err(FormatError::ChecksumMismatch { .. })
    ));
    for at in 0..bytes.len().min(4096) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5a;
        let _ = manifest::replay(&damaged, 1, "MANIFEST");
    }
    let state = manifest::replay(&bytes, 1, "MANIFEST").unwrap();
    for log_path in files_with(dir.path(), |n| n.ends_with(".log")) {
        let bytes = std::fs::read(&log_path).unwrap();
        for at in (0..bytes.len()).step_by(5) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x5a;
            let _ = wal::replay_log(&damaged, 1, &state, &mut Default::default());
            let _ = log::read_all(&damaged, 1, "wal");
        }
    }
}

#[test]
fn missing_files_are_io_errors() {
    let dir = database(&Layout::default());
    let sst = files_with(dir.path(), |n| n.ends_with(".sst")).remove(0);
    std::fs::remove_file(sst).unwrap();
    assert!(matches!(
        RocksDir::open(dir.path()),
        Err(FormatError::Io { .. })
    ));
    std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-999999\n").unwrap();
    assert!(matches!(
        RocksDir::open(dir.path()),
        Err(FormatError::Io { .. })
    ));
    std::fs::write(dir.path().join("CURRENT"), b"garbage").unwrap();
    assert!(matches!(
        RocksDir::open(dir.path()),
        Err(FormatError::Corrupt { .. })
    ));
}
