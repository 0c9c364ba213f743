//! The durable watermark tells a tail that was never synced (torn, or holed
//! by a power loss that wrote pages out of order: recover the prefix before
//! it) from damage to data that was synced or cleanly closed (corruption).
//!
//! Regressions: the active segment truncated inside its body after a clean
//! close opened without its last writes, taken for a torn tail; and a hole
//! before valid frames in a never-synced region refused the database
//! instead of recovering the prefix the README promises.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use alexdb_engine::format::segment_header::SEGMENT_HEADER_BYTES;
use alexdb_engine::{Db, Options, WriteOptions};

fn options() -> Options {
    Options {
        background_compaction: false,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Writes keys `from..to`, syncing after each one if `sync`.
fn write(dir: &Path, from: u32, to: u32, sync: bool) {
    let db = Db::open(dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let opts = match sync {
        true => WriteOptions::synced(),
        false => WriteOptions::default(),
    };
    for i in from..to {
        db.put(ks, &key(i), &[i as u8; 50], &opts).unwrap();
    }
}

fn active(dir: &Path) -> PathBuf {
    common::segment_files(dir).pop().unwrap()
}

/// Start offsets of the frames of a segment file, and the end of the data.
fn frames(bytes: &[u8]) -> (Vec<usize>, usize) {
    let mut at = SEGMENT_HEADER_BYTES;
    let mut starts = Vec::new();
    while at + 24 <= bytes.len() && bytes[at..at + 4] == 0x584C_4641u32.to_le_bytes() {
        starts.push(at);
        at += 24 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    (starts, at)
}

/// Number of keys after reopening; they must be exactly `0..n`.
fn prefix(dir: &Path) -> u32 {
    let db = Db::open(dir, options()).unwrap();
    db.verify().unwrap();
    let ks = db.keyspace("default").unwrap();
    let keys = common::scan_all(&db, ks);
    for (i, (k, _)) in keys.iter().enumerate() {
        assert_eq!(k, &key(i as u32), "not a prefix");
    }
    keys.len() as u32
}

#[test]
fn truncation_inside_the_body_after_a_clean_close_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 0, 200, false);
    let seg = active(dir.path());
    let original = fs::read(&seg).unwrap();
    let (starts, end) = frames(&original);
    for cut in [
        end - 1,
        starts[starts.len() - 1],
        starts[100] + 7,
        starts[0],
    ] {
        fs::write(&seg, &original[..cut]).unwrap();
        let offset = common::assert_corruption_in(dir.path(), options(), &seg);
        assert!(offset <= cut as u64, "offset {offset} past the cut {cut}");
    }
    fs::write(&seg, &original).unwrap();
    assert_eq!(prefix(dir.path()), 200);
}

#[test]
fn the_same_truncation_after_a_crash_without_sync_opens_with_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 0, 200, false);
    common::forget_clean_close(dir.path());
    let seg = active(dir.path());
    let original = fs::read(&seg).unwrap();
    let (starts, _) = frames(&original);
    fs::write(&seg, &original[..starts[100] + 7]).unwrap();
    assert_eq!(prefix(dir.path()), 100);
}

#[test]
fn damage_below_a_synced_watermark_is_corruption_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 0, 50, true);
    // The process "crashes": no clean close, only the in-segment watermarks.
    common::forget_clean_close(dir.path());
    let seg = active(dir.path());
    let original = fs::read(&seg).unwrap();
    let (starts, _) = frames(&original);
    for frame in [0, 10, starts.len() / 2] {
        let mut damaged = original.clone();
        damaged[starts[frame] + 30] ^= 0x08;
        fs::write(&seg, &damaged).unwrap();
        let offset = common::assert_corruption_in(dir.path(), options(), &seg);
        assert_eq!(offset, starts[frame] as u64);
    }
    fs::write(&seg, &original).unwrap();
    assert_eq!(prefix(dir.path()), 50);
}

#[test]
fn a_hole_before_valid_frames_in_a_never_synced_region_recovers_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 0, 40, true);
    write(dir.path(), 40, 120, false);
    // A power loss: the last writes were never synced, and of their pages
    // only some reached the disk: a zeroed hole with valid frames after it.
    common::forget_clean_close(dir.path());
    let seg = active(dir.path());
    let mut bytes = fs::read(&seg).unwrap();
    let (starts, _) = frames(&bytes);
    let first_unsynced = starts.len() - 80;
    let hole = starts[first_unsynced + 20]..starts[first_unsynced + 30];
    bytes[hole].fill(0);
    fs::write(&seg, &bytes).unwrap();
    assert_eq!(prefix(dir.path()), 60);
    // The frames after the hole were cut off: writing resumes after the prefix.
    write(dir.path(), 60, 61, true);
    assert_eq!(prefix(dir.path()), 61);
}

#[test]
fn a_version_1_database_keeps_the_old_rules() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 0, 100, false);
    common::downgrade_manifest(dir.path());
    let seg = active(dir.path());
    let original = fs::read(&seg).unwrap();
    let (starts, _) = frames(&original);
    // A hole followed by valid frames: corruption under the old rules.
    let mut holed = original.clone();
    holed[starts[50]..starts[60]].fill(0);
    fs::write(&seg, &holed).unwrap();
    common::assert_corruption_in(dir.path(), options(), &seg);
    // A truncation: a torn tail under the old rules.
    fs::write(&seg, &original[..starts[70] + 9]).unwrap();
    assert_eq!(prefix(dir.path()), 70);
    // That open upgraded the MANIFEST: the same cut is now corruption.
    let upgraded = fs::read(&seg).unwrap();
    fs::write(&seg, &upgraded[..starts[30] + 9]).unwrap();
    common::assert_corruption_in(dir.path(), options(), &seg);
}

/// Regression: a watermark appended when the active segment was full
/// rotated first, landing in the next segment while naming an offset of the
/// previous one (a false claim that could turn a torn tail into an error).
#[test]
fn a_watermark_frame_never_names_an_offset_past_itself() {
    let dir = tempfile::tempdir().unwrap();
    {
        let options = Options {
            segment_bytes: 8 << 10,
            ..options()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let ks = db.keyspace("default").unwrap();
        for i in 0..400u32 {
            let value = vec![i as u8; 40 + (i as usize * 13) % 200];
            db.put(ks, &key(i), &value, &WriteOptions::synced())
                .unwrap();
        }
    }
    let mut watermarks = 0;
    for seg in common::segment_files(dir.path()) {
        let bytes = fs::read(&seg).unwrap();
        for start in frames(&bytes).0 {
            if bytes[start + 4] == 4 {
                let named = u64::from_le_bytes(bytes[start + 24..start + 32].try_into().unwrap());
                assert!(
                    named <= start as u64,
                    "{}: watermark at {start} names {named}",
                    seg.display()
                );
                watermarks += 1;
            }
        }
    }
    assert!(watermarks > 100, "only {watermarks} watermark frames");
}
