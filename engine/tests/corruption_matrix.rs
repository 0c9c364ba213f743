//! The corruption matrix: every file kind of `FORMAT.md` (MANIFEST, log
//! segments sealed and active, compaction output) damaged field by field —
//! bit flips at every header and frame-header byte and throughout the data,
//! zeroed ranges, truncation at frame boundaries and between them, junk
//! extensions, a missing file — in a cleanly closed database, where every
//! byte was synced. Each case must end in a corruption error naming the
//! damaged file (a missing MANIFEST too), or, for damage
//! confined to bytes past the data that were never written, in an open
//! that serves the full state. Zero panics, zero wrong values, zero losses.
//!
//! Every case runs twice: with the index checkpoint the clean close wrote
//! (open then reads no segment it covers, so damage there may instead be
//! reported by `verify`, naming the file), and without it (open reads and
//! checks everything). Damage to the checkpoint itself is always harmless.

mod common;

use common::{State, state};

use std::fs;
use std::path::{Path, PathBuf};

use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::{Compression, Db, Error, Options, WriteBatch, WriteOptions};

const CASES_AT_LEAST: usize = 5_000;

fn options() -> Options {
    common::quiet_options()
}

/// A database with sealed log segments, a compaction output (with a value
/// dictionary and compressed values: keyspace `other` is compressed), an
/// active segment with watermark frames, two keyspaces and deletes.
/// Returns its state.
fn build(dir: &Path) -> State {
    let db = Db::open(dir, options()).unwrap();
    let other = db.create_keyspace("other").unwrap();
    db.set_compression(other, Compression::Lz4).unwrap();
    let default = db.keyspace("default").unwrap();
    for round in 0..5u32 {
        for i in 0..120u32 {
            let key = format!("k{:03}", (i * 7 + round) % 120).into_bytes();
            let mut b = WriteBatch::new();
            b.put(default, &key, format!("{round}:{i}").as_bytes());
            if i % 4 == 0 {
                b.put(other, &key, &[round as u8; 30]);
            }
            if i % 13 == 0 {
                b.delete(default, format!("k{:03}", i % 120).as_bytes());
            }
            let opts = match i % 10 {
                0 => WriteOptions::synced(),
                _ => WriteOptions::default(),
            };
            db.write(&b, &opts).unwrap();
        }
        if round == 1 {
            db.compact().unwrap();
        }
    }
    state(&db)
}

/// One file of the database as it was after the clean close.
struct Pristine {
    path: PathBuf,
    bytes: Vec<u8>,
    /// End of the frames (segments) or the whole file (MANIFEST).
    data_end: usize,
    /// Frame start offsets (segments).
    frames: Vec<usize>,
    /// Derived data (the index checkpoint): any damage is harmless.
    derived: bool,
}

fn frames(bytes: &[u8]) -> (Vec<usize>, usize) {
    let mut at = 64;
    let mut starts = Vec::new();
    while at + 24 <= bytes.len() && bytes[at..at + 4] == 0x584C_4641u32.to_le_bytes() {
        starts.push(at);
        at += 24 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    (starts, at)
}

fn pristine(dir: &Path) -> Vec<Pristine> {
    common::dir_image(dir)
        .into_iter()
        .map(|(path, bytes)| {
            let (frames, data_end) = match path.extension().is_some_and(|x| x == "seg") {
                true => frames(&bytes),
                false => (Vec::new(), bytes.len()),
            };
            let derived = path.ends_with(INDEX_FILE);
            Pristine {
                path,
                bytes,
                data_end,
                frames,
                derived,
            }
        })
        .collect()
}

/// A damaged version of one file (`None`: the file is removed), and
/// whether the damage touches bytes that were written (else the open must
/// succeed with the full state).
struct Case {
    bytes: Option<Vec<u8>>,
    touches_data: bool,
    what: String,
}

fn flip(f: &Pristine, at: usize) -> Case {
    let mut b = f.bytes.clone();
    b[at] ^= 1 << (at % 8);
    Case {
        bytes: Some(b),
        touches_data: at < f.data_end,
        what: format!("bit flip at {at}"),
    }
}

fn cases_for(f: &Pristine) -> Vec<Case> {
    let mut offsets: Vec<usize> = (0..f.data_end.min(64)).collect();
    // Every byte of the header of the first, the last and every 3rd frame.
    let last = f.frames.len().saturating_sub(1);
    for (i, &start) in f.frames.iter().enumerate() {
        if i % 3 != 0 && i != last {
            continue;
        }
        offsets.extend(start..start + 24);
        offsets.extend((start + 24..(start + 64).min(f.data_end)).step_by(3));
    }
    offsets.extend((0..f.data_end).step_by(7));
    offsets.extend(f.data_end.saturating_sub(48)..f.data_end);
    offsets.extend((f.data_end..f.bytes.len()).step_by(4099));
    offsets.sort_unstable();
    offsets.dedup();
    let mut cases: Vec<Case> = offsets.into_iter().map(|at| flip(f, at)).collect();
    for at in (0..f.data_end).step_by(211) {
        for len in [8, 64, 600] {
            let mut b = f.bytes.clone();
            let end = (at + len).min(b.len());
            b[at..end].fill(0);
            if b != f.bytes {
                cases.push(Case {
                    bytes: Some(b),
                    touches_data: true,
                    what: format!("zeroed {at}..{end}"),
                });
            }
        }
    }
    let mut cuts: Vec<usize> = f
        .frames
        .iter()
        .chain([&f.data_end])
        .flat_map(|&b| [b.saturating_sub(1), b, b + 1])
        .chain((0..f.data_end).step_by(97))
        .filter(|&c| c < f.data_end)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        cases.push(Case {
            bytes: Some(f.bytes[..cut].to_vec()),
            touches_data: true,
            what: format!("truncated to {cut}"),
        });
    }
    for junk in [vec![0u8; 100], vec![0xC3; 9], b"ALXDB junk".to_vec()] {
        let mut b = f.bytes.clone();
        b.extend_from_slice(&junk);
        // A MANIFEST is whole or damaged; a segment's extension lies past
        // its data, where nothing was ever written.
        let is_manifest = f.frames.is_empty();
        cases.push(Case {
            bytes: Some(b),
            touches_data: is_manifest,
            what: format!("extended by {} bytes", junk.len()),
        });
    }
    cases.push(Case {
        bytes: None,
        touches_data: true,
        what: "removed".into(),
    });
    if f.derived {
        cases.iter_mut().for_each(|c| c.touches_data = false);
    }
    cases
}

/// Runs one case; returns whether the database had to be restored whole.
fn run_case(dir: &Path, f: &Pristine, case: &Case, expected: &State) -> bool {
    match &case.bytes {
        Some(b) => fs::write(&f.path, b).unwrap(),
        None => fs::remove_file(&f.path).unwrap(),
    }
    let ctx = || format!("{} of {}", case.what, f.path.display());
    let result = std::panic::catch_unwind(|| match Db::open(dir, options()) {
        // Reported by the full check instead of by open.
        Ok(db) => db.verify().map(|()| state(&db)),
        Err(e) => Err(e),
    });
    let outcome = result.unwrap_or_else(|_| panic!("{}: panicked", ctx()));
    match outcome {
        Ok(got) => {
            assert!(
                !case.touches_data,
                "{}: damage to written data went unnoticed",
                ctx()
            );
            assert_eq!(&got, expected, "{}: wrong state", ctx());
            true
        }
        Err(Error::Corruption { file, .. }) => {
            assert_eq!(file, f.path, "{}: corruption names the wrong file", ctx());
            // An open that succeeded may have rewritten files as it closed.
            true
        }
        Err(other) => panic!("{}: unexpected error {other}", ctx()),
    }
}

#[test]
fn every_damaged_field_of_every_file_is_reported_or_harmless() {
    let dir = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    let expected = build(dir.path());
    let with_checkpoint = pristine(dir.path());
    assert!(with_checkpoint.iter().any(|f| f.derived));
    assert!(
        with_checkpoint
            .iter()
            .any(|f| f.frames.first().is_some_and(|&at| f.bytes[at + 4] == 5)),
        "no compaction output with a value dictionary to damage"
    );
    let mut total = run_matrix(dir.path(), &with_checkpoint, &expected);
    fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let without = pristine(dir.path());
    total += run_matrix(dir.path(), &without, &expected);
    assert!(total >= CASES_AT_LEAST, "only {total} cases");
    eprintln!("{total} corruption cases, with and without the index checkpoint");
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
}

/// Every pair of files swapped (each holding the other's bytes), with and
/// without the index checkpoint: each must be a corruption naming one of
/// the two (the one that is not the derived checkpoint, when one is);
/// never an open that serves a state, right or wrong.
#[test]
fn every_pair_of_swapped_files_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    let mut total = 0;
    for with_checkpoint in [true, false] {
        if !with_checkpoint {
            fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
        }
        let files = pristine(dir.path());
        assert!(files.len() >= 4, "{} files", files.len());
        for (i, a) in files.iter().enumerate() {
            for b in &files[i + 1..] {
                fs::write(&a.path, &b.bytes).unwrap();
                fs::write(&b.path, &a.bytes).unwrap();
                let ctx = format!("{} swapped with {}", a.path.display(), b.path.display());
                let outcome = std::panic::catch_unwind(|| match Db::open(dir.path(), options()) {
                    Ok(db) => db.verify().map(|()| state(&db)),
                    Err(e) => Err(e),
                });
                match outcome.unwrap_or_else(|_| panic!("{ctx}: panicked")) {
                    Ok(got) => panic!(
                        "{ctx}: opened and verified, serving {} the state",
                        if got == expected { "exactly" } else { "NOT" }
                    ),
                    Err(Error::Corruption { file, .. }) => assert!(
                        (file == a.path && !a.derived) || (file == b.path && !b.derived),
                        "{ctx}: the corruption names {}",
                        file.display()
                    ),
                    Err(other) => panic!("{ctx}: unexpected error {other}"),
                }
                restore(dir.path(), &files);
                total += 1;
            }
        }
    }
    eprintln!("{total} pairs of swapped files");
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
}

/// Runs every case of every file of `files`; returns the number of cases.
fn run_matrix(dir: &Path, files: &[Pristine], expected: &State) -> usize {
    let kinds: Vec<u32> = files
        .iter()
        .filter(|f| !f.frames.is_empty())
        .map(|f| u32::from_le_bytes(f.bytes[12..16].try_into().unwrap()))
        .collect();
    assert!(kinds.contains(&1) && kinds.contains(&2), "kinds {kinds:?}");
    let mut total = 0;
    for f in files {
        for case in cases_for(f) {
            if run_case(dir, f, &case, expected) {
                restore(dir, files);
            } else {
                fs::write(&f.path, &f.bytes).unwrap();
            }
            total += 1;
        }
    }
    total
}

/// Puts the directory back as it was: every pristine file, nothing else.
fn restore(dir: &Path, files: &[Pristine]) {
    for (extra, _) in common::dir_image(dir) {
        if !files.iter().any(|p| p.path == extra) {
            fs::remove_file(extra).unwrap();
        }
    }
    for p in files {
        fs::write(&p.path, &p.bytes).unwrap();
    }
}
