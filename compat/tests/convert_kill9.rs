//! Crash test of the in-place conversion of a RocksDB directory: a child
//! process opens a copy of a RocksDB database with the opt-in and is killed
//! with SIGKILL at a random moment of the conversion; then the directory
//! must open — as RocksDB's, untouched, if the conversion was not yet
//! committed, and in every case as AlexDB's once an opted-in open finishes
//! or restarts the conversion — holding exactly the RocksDB database's
//! contents.

// Compares with, or converts from, the real RocksDB: a dev-dependency
// everywhere but Windows and musl (see compat/Cargo.toml).
#![cfg(not(any(windows, target_env = "musl")))]

use std::path::Path;
use std::time::{Duration, Instant};

use alexdb::{ColumnFamilyDescriptor, DB, Options};

#[path = "common/child_test.rs"]
mod child_test;
#[path = "common/rocksdb_source.rs"]
mod rocksdb_source;

use rocksdb_source::{
    CONCAT, Contents, alexdb_contents, concat, rocksdb_concat_options, rocksdb_contents,
};

const CHILD_ENV: &str = "ALEXDB_CONVERT_CRASH_CHILD_DIR";
const KEYS: u32 = 40_000;
const FAMILIES: [&str; 2] = ["default", "merges"];

fn rocksdb_families() -> Vec<::rocksdb::ColumnFamilyDescriptor> {
    vec![::rocksdb::ColumnFamilyDescriptor::new(
        "merges",
        rocksdb_concat_options(),
    )]
}

/// Writes the template RocksDB database (a flushed table under a WAL of
/// puts and merges, and a range delete) and returns its contents as the
/// real crate reads them.
fn write_template(dir: &Path) -> Contents {
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = ::rocksdb::DB::open_cf_descriptors(&opts, dir, rocksdb_families()).unwrap();
    let merges = db.cf_handle("merges").unwrap();
    let mut batch = ::rocksdb::WriteBatch::default();
    for i in 0..KEYS {
        batch.put(format!("key{i:08}"), format!("{i:0>120}"));
        batch.merge_cf(
            merges,
            format!("m{:04}", i % 1_000),
            [b'a' + (i % 26) as u8],
        );
        if i % 5_000 == 4_999 {
            db.write(std::mem::take(&mut batch)).unwrap();
        }
        if i == KEYS / 2 {
            db.flush().unwrap();
        }
    }
    db.write(batch).unwrap();
    let default = db.cf_handle("default").unwrap();
    db.delete_range_cf(default, b"key00001000", b"key00002000")
        .unwrap();
    rocksdb_contents(&db, &FAMILIES)
}

fn converting_open(dir: &Path) -> DB {
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    let mut merges = Options::default();
    merges.set_merge_operator_associative(CONCAT, concat);
    DB::open_cf_descriptors(&opts, dir, [ColumnFamilyDescriptor::new("merges", merges)])
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The child: converts the directory it is given, then says so.
#[test]
#[ignore = "run as a child process by conversion_crash_loop"]
fn conversion_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    drop(converting_open(Path::new(&dir)));
    println!("converted");
}

/// Runs the child on `dir`, killing it after `delay`; returns whether it
/// finished first.
fn run_child(dir: &Path, delay: Duration) -> bool {
    let mut child = child_test::spawn("conversion_crash_child", CHILD_ENV, dir);
    let started = Instant::now();
    while started.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout).contains("converted")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The names in `dir` and in its staging directory, for a failure's message.
fn listing(dir: &Path) -> Vec<String> {
    let names = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut all = names(dir);
    all.extend(
        names(&dir.join("alexdb-conversion"))
            .into_iter()
            .map(|n| format!("alexdb-conversion/{n}")),
    );
    all.sort();
    all
}

/// Whether the kill left RocksDB's database in place and uncommitted.
fn uncommitted(dir: &Path) -> bool {
    dir.join("CURRENT").exists() && !dir.join("alexdb-conversion/CONVERTED").exists()
}

#[test]
fn conversion_crash_loop() {
    let cycles: u32 = std::env::var("ALEXDB_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let root = tempfile::tempdir().unwrap();
    let template = root.path().join("template");
    let want = write_template(&template);
    // How long a whole conversion takes in a child, to spread the kills.
    let timed = root.path().join("timed");
    copy_dir(&template, &timed);
    let started = Instant::now();
    assert!(run_child(&timed, Duration::from_secs(120)));
    let whole = started.elapsed();
    assert_eq!(alexdb_contents(&converting_open(&timed), &FAMILIES), want);
    let (mut rng, mut interrupted, mut committed) = (0x9E37_79B9_7F4A_7C15u64, 0, 0);
    for cycle in 0..cycles {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let dir = root.path().join(format!("cycle{cycle}"));
        copy_dir(&template, &dir);
        let delay = whole.mul_f64((rng % 1_000) as f64 / 1_000.0);
        if run_child(&dir, delay) {
            continue;
        }
        interrupted += 1;
        if !uncommitted(&dir) {
            committed += 1;
        } else {
            let rocks = ::rocksdb::DB::open_cf_descriptors_read_only(
                &::rocksdb::Options::default(),
                &dir,
                rocksdb_families(),
                false,
            )
            .unwrap_or_else(|e| panic!("cycle {cycle}: RocksDB's database: {e}"));
            assert_eq!(rocksdb_contents(&rocks, &FAMILIES), want, "cycle {cycle}");
        }
        let db = converting_open(&dir);
        assert_eq!(
            alexdb_contents(&db, &FAMILIES),
            want,
            "cycle {cycle} (killed after {delay:?})"
        );
        drop(db);
        assert!(
            !dir.join("alexdb-conversion").exists(),
            "cycle {cycle} (killed after {delay:?}): a staging directory is left: {:?}",
            listing(&dir)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
    eprintln!(
        "{interrupted} of {cycles} kills during a conversion ({committed} after its commit); \
         a whole conversion took {whole:?}"
    );
    assert!(
        interrupted >= cycles / 3,
        "only {interrupted} of {cycles} kills landed during a conversion ({whole:?} each)"
    );
}
