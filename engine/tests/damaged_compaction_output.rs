//! Regression: a compaction output whose seal frame was damaged (the file
//! truncated, or a byte of its last frame flipped) was taken for the orphan
//! of a crash during compaction and deleted by open, although its inputs
//! were already gone: most keys vanished without an error and the evidence
//! was destroyed. Now a file the database needs is never removed: damage to
//! it is a corruption error naming it. Only an output that never committed
//! (not listed in the MANIFEST; in a version-1 database, one whose records
//! are all still in its inputs) is removed.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use alexdb_engine::{Db, Options, WriteOptions};

fn options() -> Options {
    common::quiet_options()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Writes keys, overwrites half of them, closes. Returns the model.
fn populate(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open(dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let mut model = BTreeMap::new();
    for round in 0..2u8 {
        for i in (0..500).filter(|i| round == 0 || i % 2 == 0) {
            let value = vec![round + 1; 40 + (i % 17) as usize];
            db.put(ks, &key(i), &value, &WriteOptions::default())
                .unwrap();
            model.insert(key(i), value);
        }
    }
    model
}

fn compact(dir: &Path) {
    let db = Db::open(dir, options()).unwrap();
    assert!(db.compact().unwrap() > 0);
}

/// Makes `dir` hold exactly `image`.
fn restore(dir: &Path, image: &[(PathBuf, Vec<u8>)]) {
    for p in common::segment_files(dir) {
        fs::remove_file(p).unwrap();
    }
    for (p, b) in image {
        fs::write(p, b).unwrap();
    }
}

fn is_compaction_output(bytes: &[u8]) -> bool {
    bytes.len() >= 16 && bytes[12..16] == 2u32.to_le_bytes()
}

fn assert_matches_model(dir: &Path, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let db = Db::open(dir, options()).unwrap();
    db.verify().unwrap();
    let ks = db.keyspace("default").unwrap();
    let all: BTreeMap<_, _> = common::scan_all(&db, ks).into_iter().collect();
    assert_eq!(&all, model);
}

/// Start and end of the output's seal frame (its last frame; the file may
/// hold zeros after it).
fn seal_frame(bytes: &[u8]) -> (usize, usize) {
    let mut at = 64;
    let mut last = at;
    while at + 24 <= bytes.len() && bytes[at..at + 4] == 0x584C_4641u32.to_le_bytes() {
        let body = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        last = at;
        at += 24 + body;
    }
    assert_eq!(bytes[last + 4], 2, "the last frame is a seal");
    (last, at)
}

/// Damages of the output's seal: cuts and flipped bytes of its last frame.
fn seal_damages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let (seal_at, end) = seal_frame(bytes);
    let mut out = Vec::new();
    for cut in [1, 8, 20, 24, 39, end - seal_at, end - seal_at + 1] {
        out.push(bytes[..end - cut].to_vec());
    }
    for pos in (seal_at..end).step_by(3) {
        let mut b = bytes.to_vec();
        b[pos] ^= 0x21;
        out.push(b);
    }
    out
}

fn damaged_seal_is_corruption(v1: bool) {
    let dir = tempfile::tempdir().unwrap();
    let model = populate(dir.path());
    compact(dir.path());
    if v1 {
        common::downgrade_manifest(dir.path());
    }
    let image = common::dir_image(dir.path());
    let (output, bytes) = image
        .iter()
        .rfind(|(p, b)| p.extension().is_some_and(|x| x == "seg") && is_compaction_output(b))
        .expect("a compaction output")
        .clone();
    let cases = seal_damages(&bytes);
    for damaged in &cases {
        restore(dir.path(), &image);
        fs::write(&output, damaged).unwrap();
        common::assert_corruption_in(dir.path(), options(), &output);
        assert_eq!(
            fs::read(&output).unwrap(),
            *damaged,
            "open changed or removed a damaged output it needs"
        );
    }
    restore(dir.path(), &image);
    assert_matches_model(dir.path(), &model);
}

#[test]
fn a_damaged_seal_on_an_output_whose_inputs_are_gone_is_corruption() {
    damaged_seal_is_corruption(false);
}

#[test]
fn a_damaged_seal_is_corruption_in_a_version_1_database_too() {
    damaged_seal_is_corruption(true);
}

/// Populates `dir`, compacts it, then puts the directory back as it was
/// before the compaction: the state of a crash after the output was written
/// but before the compaction committed. Returns the model and the output.
fn crash_before_commit(dir: &Path) -> (BTreeMap<Vec<u8>, Vec<u8>>, PathBuf, Vec<u8>) {
    let model = populate(dir);
    // Open once so the version-2 MANIFEST exists before the image is taken.
    drop(Db::open(dir, options()).unwrap());
    let before = common::dir_image(dir);
    compact(dir);
    let after = common::dir_image(dir);
    let (output, bytes) = after
        .iter()
        .find(|(p, b)| is_compaction_output(b) && !before.iter().any(|(q, _)| q == p))
        .expect("a new compaction output")
        .clone();
    restore(dir, &before);
    (model, output, bytes)
}

/// A crash during compaction: the output exists (sealed or not) but the
/// compaction never committed, so the inputs are all still there.
fn uncommitted_output_is_removed(v1: bool, cut_seal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (model, output, bytes) = crash_before_commit(dir.path());
    let leftover = if cut_seal {
        &bytes[..seal_frame(&bytes).0]
    } else {
        &bytes[..]
    };
    fs::write(&output, leftover).unwrap();
    if v1 {
        common::downgrade_manifest(dir.path());
    }
    assert_matches_model(dir.path(), &model);
    if v1 && !cut_seal {
        // Version 1 takes a sealed output as committed: it replaces its inputs.
        assert!(output.exists());
    } else {
        assert!(!output.exists(), "the uncommitted output was kept");
    }
}

#[test]
fn an_unlisted_unsealed_output_is_removed_and_nothing_is_lost() {
    uncommitted_output_is_removed(false, true);
}

#[test]
fn an_unlisted_sealed_output_is_removed_and_nothing_is_lost() {
    uncommitted_output_is_removed(false, false);
}

#[test]
fn a_version_1_unsealed_output_whose_inputs_are_present_is_removed() {
    uncommitted_output_is_removed(true, true);
}

#[test]
fn a_version_1_sealed_output_replaces_its_inputs() {
    uncommitted_output_is_removed(true, false);
}

#[test]
fn an_open_that_fails_removes_no_leftover() {
    let dir = tempfile::tempdir().unwrap();
    let (_, output, bytes) = crash_before_commit(dir.path());
    fs::write(&output, &bytes).unwrap();
    // Damage a listed sealed segment as well: the open must fail, and leave
    // the directory as it was, the unlisted output included.
    let victim = common::segment_files(dir.path())[0].clone();
    let mut damaged = fs::read(&victim).unwrap();
    damaged[100] ^= 0x40;
    fs::write(&victim, &damaged).unwrap();
    common::assert_corruption_in(dir.path(), options(), &victim);
    assert!(output.exists(), "a failed open removed a file");
}
