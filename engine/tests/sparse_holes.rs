//! Regression: on a full tmpfs, reopening was killed by SIGBUS in
//! recovery's checksum scan, which read pages of the map that lie in holes
//! of the sparse segment file (a read fault there must allocate a page).
//! Recovery and `verify` now read through a map only bytes that were
//! written, and examine the rest through the descriptor.
//!
//! A full tmpfs cannot be mounted here, so the test hands the engine maps
//! whose holes hold junk (`Faults::hostile_holes`): any read of a hole
//! through a map sees it and changes the outcome. Opening must also not
//! write into the holes (on a full disk that would fail).
//!
//! Where SIGBUS can still happen (see the README, "Durability promises"): a segment file
//! truncated from outside while the database has it mapped, and an I/O
//! error while the kernel reads a mapped page of written data.

// Holes are found with `SEEK_HOLE`/`SEEK_DATA`, which only Unix has (Windows
// reports none: `io::os::hole_at_or_after`).
#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use alexdb_engine::io::faulty::FaultyFileSystem;
use alexdb_engine::{Db, Options, WriteOptions};

fn options(fs: Option<&FaultyFileSystem>) -> Options {
    let mut o = Options {
        background_compaction: false,
        ..Options::default()
    };
    if let Some(fs) = fs {
        o.file_system = Arc::new(fs.clone());
    }
    o
}

fn hostile() -> FaultyFileSystem {
    let fs = FaultyFileSystem::new();
    fs.faults.hostile_holes.store(true, Ordering::SeqCst);
    fs
}

fn populate(dir: &std::path::Path, n: u32) {
    let db = Db::open(dir, options(None)).unwrap();
    let ks = db.keyspace("default").unwrap();
    for i in 0..n {
        db.put(ks, &i.to_be_bytes(), &[3; 100], &WriteOptions::default())
            .unwrap();
    }
}

fn allocated_bytes(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn recovery_and_verify_never_read_a_hole_through_the_map() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 500);
    let seg = common::segment_files(dir.path()).pop().unwrap();
    let before = allocated_bytes(&seg);
    for crashed in [false, true] {
        if crashed {
            common::forget_clean_close(dir.path());
        }
        let db = Db::open(dir.path(), options(Some(&hostile()))).unwrap();
        db.verify().unwrap();
        let ks = db.keyspace("default").unwrap();
        assert_eq!(db.live_keys(ks).unwrap(), 500);
        for i in (0..500u32).step_by(37) {
            assert_eq!(
                db.get_copied(ks, &i.to_be_bytes()).unwrap().unwrap(),
                [3; 100]
            );
        }
    }
    assert_eq!(allocated_bytes(&seg), before, "open wrote into the holes");
}

#[test]
fn data_after_a_hole_in_an_unsynced_tail_is_cut_off_without_a_map_read() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 100);
    common::forget_clean_close(dir.path());
    let seg = common::segment_files(dir.path()).pop().unwrap();
    // Junk 2 MiB in: a page that reached the disk with holes before it.
    let file = fs::OpenOptions::new().write(true).open(&seg).unwrap();
    file.write_all_at(&[0x77; 4096], 2 << 20).unwrap();
    drop(file);
    let db = Db::open(dir.path(), options(Some(&hostile()))).unwrap();
    db.verify().unwrap();
    let ks = db.keyspace("default").unwrap();
    assert_eq!(db.live_keys(ks).unwrap(), 100);
    drop(db);
    let mut junk = [1u8; 4096];
    fs::File::open(&seg)
        .unwrap()
        .read_exact_at(&mut junk, 2 << 20)
        .unwrap();
    assert!(junk.iter().all(|&b| b == 0), "the junk was not zeroed");
}

#[test]
fn data_after_a_hole_below_the_clean_close_watermark_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 100);
    let seg = common::segment_files(dir.path()).pop().unwrap();
    let len = fs::metadata(&seg).unwrap().len();
    // Punch the written data out (as a lost extent would) by rewriting the
    // file sparsely: header kept, the first frames replaced by a hole.
    let bytes = fs::read(&seg).unwrap();
    fs::remove_file(&seg).unwrap();
    let file = fs::File::create(&seg).unwrap();
    file.set_len(len).unwrap();
    file.write_all_at(&bytes[..64], 0).unwrap();
    file.write_all_at(&bytes[8192..16384], 8192).unwrap();
    drop(file);
    let offset = common::assert_corruption_in(dir.path(), options(Some(&hostile())), &seg);
    assert_eq!(offset, 64);
}
