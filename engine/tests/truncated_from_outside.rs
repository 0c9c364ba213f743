//! Where SIGBUS can still happen, shown: a segment file
//! truncated by another program while the database has it mapped. Reads go
//! through the map, the engine's idea of the file's length does not change,
//! and the kernel answers a read of a page past the new end of the file with
//! SIGBUS, which kills the process (the engine installs no signal handler:
//! it cannot turn a fault in the middle of a read into an error safely).
//!
//! What the test proves is the rest of the contract: nothing the database
//! writes or does makes it happen (it never shrinks a file that may be
//! mapped), and after the crash the next open reports the damage as
//! `Corruption` naming the file, and leaves the file in place.

// SIGBUS is a Unix signal; Windows refuses to truncate a mapped file at all.
#![cfg(unix)]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

use alexdb_engine::{Db, Error, Options, WriteBatch, WriteOptions};
use common::segment_files;

const CHILD_ENV: &str = "ALEXDB_TRUNCATED_FROM_OUTSIDE_DIR";
const KEYS: u32 = 3_000;

fn options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// The segment file with the lowest id: sealed, since the active segment
/// is always the newest.
fn oldest_segment(dir: &Path) -> PathBuf {
    segment_files(dir)
        .into_iter()
        .next()
        .expect("a segment file")
}

/// The child: writes every key, has another handle truncate the oldest
/// segment to nothing, then reads every key back. It is expected to die of
/// SIGBUS at the first read of the truncated file; printing "survived"
/// means it did not.
#[test]
#[ignore = "run as a child process by a_segment_truncated_from_outside_is_sigbus_then_corruption"]
fn truncating_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = Db::open(&dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(100) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(ks, &key(i), &[b'v'; 100]);
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }
    let victim = oldest_segment(Path::new(&dir));
    println!("truncating {}", victim.display());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_len(0)
        .unwrap();
    for i in 0..KEYS {
        let _ = db.get_copied(ks, &key(i));
    }
    println!("survived");
}

#[test]
fn a_segment_truncated_from_outside_is_sigbus_then_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "truncating_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("truncating"),
        "the child did not get to truncate: {stdout}"
    );
    assert!(
        !stdout.contains("survived"),
        "reads of a truncated map did not fault"
    );
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGBUS),
        "the child should die of SIGBUS: {:?}",
        out.status
    );
    let victim = oldest_segment(dir.path());
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    match Db::open(dir.path(), options()) {
        Err(Error::Corruption { file, .. }) => assert!(
            file.to_string_lossy().contains(&name),
            "the corruption names {file:?}, not the truncated {name}"
        ),
        Err(other) => panic!("open after the truncation: {other}, not a corruption report"),
        Ok(_) => panic!("open after the truncation succeeded"),
    }
    assert_eq!(
        std::fs::metadata(&victim).unwrap().len(),
        0,
        "the truncated file must be left as it is"
    );
}
