//! Damaged files: a flipped byte in a sealed segment is a typed corruption
//! error naming the file and offset; a torn or truncated active tail that
//! was never synced (a crash) opens cleanly with a prefix of the writes;
//! junk after the tail is cut off; damage followed by valid data after a
//! clean close is corruption, never skipped.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use alexdb_engine::format::segment_header::SEGMENT_HEADER_BYTES;
use alexdb_engine::segment::scan::scan_frames;
use alexdb_engine::{Db, Error, Options, WriteOptions};

fn options() -> Options {
    common::quiet_options()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Writes `n` single-put frames and closes the database.
fn populate(dir: &Path, n: u32) {
    let db = Db::open(dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    for i in 0..n {
        db.put(ks, &key(i), &[i as u8; 60], &WriteOptions::default())
            .unwrap();
    }
}

/// Segment files, oldest first.
fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .collect();
    v.sort();
    v
}

/// Keys present after reopening, which must be exactly 0..k for some k.
fn recovered_prefix(dir: &Path) -> u32 {
    let db = Db::open(dir, options()).unwrap();
    db.verify().unwrap();
    let ks = db.keyspace("default").unwrap();
    let keys: Vec<Vec<u8>> = common::scan_all(&db, ks)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(
            k,
            &key(i as u32),
            "recovered keys are not a prefix of the writes"
        );
    }
    keys.len() as u32
}

/// Offsets of the frames of a segment file (end of data last).
fn frame_offsets(bytes: &[u8]) -> Vec<u64> {
    let mut offsets = vec![SEGMENT_HEADER_BYTES as u64];
    assert!(scan_frames(bytes, |_, _| {}).damage.is_none());
    let mut at = SEGMENT_HEADER_BYTES;
    while at + 24 <= bytes.len() && bytes[at..at + 4] == 0x584C_4641u32.to_le_bytes() {
        let body = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 24 + body;
        offsets.push(at as u64);
    }
    offsets.dedup();
    offsets
}

/// Opens the database and runs the full check: the open reports damage in
/// any segment when it reads everything (no index checkpoint), the check
/// reports it in segments a checkpoint let the open skip.
fn open_and_verify(dir: &Path) -> Result<(), Error> {
    Db::open(dir, options())?.verify()
}

fn flips_in_sealed_segments(dir: &Path, step: usize, check: impl Fn(&Path) -> Result<(), Error>) {
    let segs = segments(dir);
    assert!(segs.len() >= 3, "need sealed segments, got {}", segs.len());
    let mut cases = 0;
    for sealed in &segs[..segs.len() - 1] {
        let original = fs::read(sealed).unwrap();
        let frames = frame_offsets(&original);
        let end = *frames.last().unwrap() as usize;
        let positions: Vec<usize> = (SEGMENT_HEADER_BYTES..end).step_by(step).collect();
        for &pos in &positions {
            let mut damaged = original.clone();
            damaged[pos] ^= 0x5A;
            fs::write(sealed, &damaged).unwrap();
            match check(dir) {
                Err(Error::Corruption { file, offset, .. }) => {
                    assert_eq!(&file, sealed);
                    let frame_start = frames
                        .iter()
                        .rev()
                        .find(|&&f| f as usize <= pos)
                        .copied()
                        .unwrap();
                    assert!(
                        offset == frame_start || offset <= pos as u64,
                        "offset {offset} for a flip at {pos}"
                    );
                }
                Err(other) => panic!("flip at {pos}: wrong error {other}"),
                Ok(_) => panic!("flip at {pos} of {} went unnoticed", sealed.display()),
            }
            cases += 1;
        }
        fs::write(sealed, &original).unwrap();
    }
    assert!(cases > 1000 / step, "only {cases} cases");
}

#[test]
fn flipped_byte_in_sealed_segment_is_corruption_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 700);
    let index = dir
        .path()
        .join(alexdb_engine::format::index_checkpoint::INDEX_FILE);
    // With the checkpoint of the clean close: reported by the full check.
    let checkpoint = fs::read(&index).unwrap();
    flips_in_sealed_segments(dir.path(), 29, open_and_verify);
    // Without it: reported by open itself.
    flips_in_sealed_segments(dir.path(), 7, |dir: &Path| {
        let _ = fs::remove_file(&index);
        Db::open(dir, options()).map(drop)
    });
    fs::write(&index, checkpoint).unwrap();
    assert_eq!(recovered_prefix(dir.path()), 700);
}

#[test]
fn truncation_at_every_frame_boundary_of_an_unsynced_active_segment_opens_with_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 300);
    let segs = segments(dir.path());
    let active = segs.last().unwrap().clone();
    let original = fs::read(&active).unwrap();
    let frames = frame_offsets(&original);
    let before_active = {
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.live_keys(ks).unwrap() as u32 - (frames.len() as u32 - 1)
    };
    let pristine: Vec<(PathBuf, Vec<u8>)> = segments(dir.path())
        .into_iter()
        .map(|p| {
            let b = fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    let pristine_manifest = fs::read(dir.path().join("MANIFEST")).unwrap();
    for (i, &boundary) in frames.iter().enumerate() {
        for cut in [boundary.saturating_sub(1), boundary, boundary + 1] {
            for extra in segments(dir.path()) {
                if !pristine.iter().any(|(p, _)| *p == extra) {
                    fs::remove_file(extra).unwrap();
                }
            }
            for (p, b) in &pristine {
                fs::write(p, b).unwrap();
            }
            fs::write(dir.path().join("MANIFEST"), &pristine_manifest).unwrap();
            let f = fs::OpenOptions::new().write(true).open(&active).unwrap();
            f.set_len(cut).unwrap();
            drop(f);
            common::forget_clean_close(dir.path());
            if cut < SEGMENT_HEADER_BYTES as u64 {
                // The header is synced before the segment is listed: a cut
                // into it damages durable data.
                common::assert_corruption_in(dir.path(), options(), &active);
                continue;
            }
            let n = recovered_prefix(dir.path());
            let complete_frames = frames[1..].iter().filter(|&&f| f <= cut).count() as u32;
            assert_eq!(
                n,
                before_active + complete_frames,
                "cut at {cut} (boundary {i})"
            );
        }
    }
}

#[test]
fn junk_after_the_tail_is_cut_off_and_writing_resumes() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 50);
    let active = segments(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&active).unwrap();
    let end = *frame_offsets(&bytes).last().unwrap() as usize;
    for (i, b) in bytes[end..end + 333].iter_mut().enumerate() {
        *b = (i * 31 + 7) as u8;
    }
    fs::write(&active, &bytes).unwrap();
    assert_eq!(recovered_prefix(dir.path()), 50);
    {
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, &key(50), b"after junk", &WriteOptions::default())
            .unwrap();
    }
    assert_eq!(recovered_prefix(dir.path()), 51);
}

#[test]
fn damage_followed_by_valid_frames_in_the_active_segment_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    populate(dir.path(), 20);
    let active = segments(dir.path()).pop().unwrap();
    let mut bytes = fs::read(&active).unwrap();
    let frames = frame_offsets(&bytes);
    let victim = frames[frames.len() / 2] as usize + 50;
    bytes[victim] ^= 0xFF;
    fs::write(&active, &bytes).unwrap();
    // The clean close's index checkpoint covers the damaged frame: the open
    // reads nothing below its cut, and `verify` reports the damage.
    let db = Db::open(dir.path(), options()).unwrap();
    match db.verify() {
        Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains(".seg")),
        other => panic!("expected corruption from verify, got {other:?}"),
    }
    drop(db);
    // Without the checkpoint, the open reads the segment and reports it.
    fs::remove_file(
        dir.path()
            .join(alexdb_engine::format::index_checkpoint::INDEX_FILE),
    )
    .unwrap();
    match Db::open(dir.path(), options()) {
        Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains(".seg")),
        other => panic!("expected corruption, got {other:?}"),
    }
}
