//! Every state a crash can leave a conversion in, built step by step, and
//! what the next open does with it.

use std::fs;
use std::path::Path;

use super::install::{self, StagingLock};
use super::{RETIRED_DIR, STAGING_DIR, before_open, stage};
use crate::{ColumnFamilyDescriptor, DB, ErrorKind, Options};

const KEYS: u32 = 500;

/// A RocksDB database (a flushed table and a WAL tail) of `KEYS` keys.
fn rocksdb_database(dir: &Path) {
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    let db = ::rocksdb::DB::open(&opts, dir).unwrap();
    for i in 0..KEYS {
        db.put(key(i), value(i)).unwrap();
        if i == KEYS / 2 {
            db.flush().unwrap();
        }
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i}").into_bytes()
}

fn descriptors() -> Vec<ColumnFamilyDescriptor> {
    vec![ColumnFamilyDescriptor::new("default", Options::default())]
}

/// A directory whose conversion is staged and committed, nothing moved.
fn committed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    rocksdb_database(dir.path());
    let staging = dir.path().join(STAGING_DIR);
    let (lock, fingerprint) =
        stage::stage(dir.path(), &staging, &Options::default(), &descriptors()).unwrap();
    install::commit(&staging, &fingerprint).unwrap();
    drop(lock);
    dir
}

/// Moves every other entry `pick` selects from `from` into `to`.
fn move_half(from: &Path, to: &Path, pick: impl Fn(&str) -> bool) {
    fs::create_dir_all(to).unwrap();
    let mut names: Vec<String> = fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| pick(name))
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{names:?}");
    for name in names.iter().step_by(2) {
        fs::rename(from.join(name), to.join(name)).unwrap();
    }
}

/// Opens `dir` without the opt-in (a committed conversion finishes anyway)
/// and checks every key.
fn assert_converted(dir: &Path) {
    let db = DB::open(&Options::default(), dir).unwrap();
    for i in 0..KEYS {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert!(!dir.join(STAGING_DIR).exists());
    assert!(dir.join(RETIRED_DIR).join("CURRENT").exists());
    assert!(super::rocksdb_file(dir).is_none());
}

#[test]
fn a_committed_conversion_finishes_without_the_opt_in() {
    let dir = committed();
    assert_converted(dir.path());
}

#[test]
fn a_conversion_stopped_while_retiring_rocksdb_files_finishes() {
    let dir = committed();
    let retired = dir.path().join(RETIRED_DIR);
    move_half(dir.path(), &retired, super::detect::is_rocksdb_owned);
    assert_converted(dir.path());
}

#[test]
fn a_conversion_stopped_while_installing_its_files_finishes() {
    let dir = committed();
    let staging = dir.path().join(STAGING_DIR);
    // Roll forward up to the retirement, as a run that stopped there did.
    let lock = StagingLock::take(&staging).unwrap();
    install::retire(dir.path(), None, &staging).unwrap();
    drop(lock);
    move_half(&staging, dir.path(), |name| name != "RETIRED");
    assert_converted(dir.path());
}

/// Opens `dir` without the opt-in and expects the conversion to be set
/// aside because RocksDB's files changed after its commit; checks the
/// error never advises removing the copy, and that the copy set aside
/// holds every key converted. Returns where it was set aside.
fn assert_set_aside(dir: &Path) -> std::path::PathBuf {
    let err = before_open(dir, &Options::default(), &descriptors()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let text = err.to_string();
    assert!(text.contains("changed after"), "{text}");
    assert!(!text.contains("remove"), "{text}");
    let aside = dir.join(format!("{STAGING_DIR}-set-aside-1"));
    assert!(text.contains(&aside.display().to_string()), "{text}");
    assert!(!dir.join(STAGING_DIR).exists());
    assert!(aside.join("CONVERTED").exists());
    let copy = DB::open(&Options::default(), &aside).unwrap();
    for i in 0..KEYS {
        assert_eq!(copy.get(key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    aside
}

#[test]
fn a_rocksdb_database_written_after_the_commit_is_not_retired() {
    let dir = committed();
    let db = ::rocksdb::DB::open_default(dir.path()).unwrap();
    db.put(b"late", b"write").unwrap();
    drop(db);
    assert_set_aside(dir.path());
    assert!(!dir.path().join(RETIRED_DIR).exists());
    // With the copy set aside, RocksDB's files as they are now convert.
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(db.get(b"late").unwrap(), Some(b"write".to_vec()));
}

#[test]
fn a_rocksdb_file_rewritten_at_the_same_size_after_the_commit_is_noticed() {
    let dir = committed();
    let current = dir.path().join("CURRENT");
    let text = fs::read(&current).unwrap();
    fs::remove_file(&current).unwrap();
    fs::write(&current, text).unwrap();
    assert_set_aside(dir.path());
}

#[test]
fn a_new_rocksdb_database_made_while_retiring_sets_the_conversion_aside() {
    let dir = committed();
    let retired = dir.path().join(RETIRED_DIR);
    move_half(dir.path(), &retired, super::detect::is_rocksdb_owned);
    // RocksDB, opened on a directory whose CURRENT is gone, may make a new,
    // empty database there and purge the tables it finds obsolete.
    let _ = fs::remove_file(dir.path().join("CURRENT"));
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    drop(::rocksdb::DB::open(&opts, dir.path()).unwrap());
    assert_set_aside(dir.path());
    assert!(
        retired.read_dir().unwrap().next().is_some(),
        "the retired files stay"
    );
}

#[test]
fn a_marker_of_names_and_sizes_only_still_rolls_forward() {
    let dir = committed();
    let marker = dir.path().join(STAGING_DIR).join("CONVERTED");
    let legacy: String = fs::read_to_string(&marker)
        .unwrap()
        .lines()
        .map(|line| line.split(' ').take(2).collect::<Vec<_>>().join(" ") + "\n")
        .collect();
    fs::write(&marker, legacy).unwrap();
    assert_converted(dir.path());
}

/// The keys of the RocksDB database in `dir`, as RocksDB opens it.
fn rocksdb_keys(dir: &Path) -> Vec<Vec<u8>> {
    let db = ::rocksdb::DB::open_default(dir).unwrap();
    db.iterator(::rocksdb::IteratorMode::Start)
        .map(|item| item.unwrap().0.to_vec())
        .collect()
}

/// Copies the files of `from` into the new directory `to`.
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_wal_damaged_in_the_middle_converts_what_rocksdb_recovers() {
    let dir = tempfile::tempdir().unwrap();
    rocksdb_database(dir.path());
    let wal = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .expect("the unflushed half is in a WAL");
    let mut bytes = fs::read(&wal).unwrap();
    let middle = bytes.len() * 3 / 5;
    bytes[middle] ^= 0x40;
    fs::write(&wal, bytes).unwrap();
    // RocksDB's default recovery (point in time) opens it with the writes
    // before the damage: the conversion keeps exactly those.
    let reference = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), &reference.path().join("db"));
    let expected = rocksdb_keys(&reference.path().join("db"));
    assert!(expected.len() > KEYS as usize / 2, "{}", expected.len());
    assert!(expected.len() < KEYS as usize, "{}", expected.len());
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    let db = DB::open(&opts, dir.path()).unwrap();
    let converted: Vec<Vec<u8>> = db
        .iterator(crate::IteratorMode::Start)
        .map(|item| item.unwrap().0.to_vec())
        .collect();
    assert_eq!(converted, expected);
    drop(db);
    let logs: String = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("LOG"))
        .map(|p| fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert!(logs.contains("point-in-time recovery stopped"), "{logs}");
}

#[test]
fn one_conversion_at_a_time() {
    let dir = committed();
    let lock = StagingLock::take(&dir.path().join(STAGING_DIR)).unwrap();
    let err = before_open(dir.path(), &Options::default(), &descriptors()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError, "{err}");
    assert!(err.to_string().contains("another process"), "{err}");
    drop(lock);
    assert_converted(dir.path());
}

/// A RocksDB database whose WALs are kept apart (`set_wal_dir`), with
/// `KEYS` keys of which the second half is only in a WAL.
fn rocksdb_database_with_wal_dir(dir: &Path, wal_dir: &Path) {
    let mut opts = ::rocksdb::Options::default();
    opts.create_if_missing(true);
    opts.set_wal_dir(wal_dir);
    let db = ::rocksdb::DB::open(&opts, dir).unwrap();
    for i in 0..KEYS {
        db.put(key(i), value(i)).unwrap();
        if i == KEYS / 2 {
            db.flush().unwrap();
        }
    }
}

/// The WAL files directly in `dir`.
fn wal_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".log"))
                .collect()
        })
        .unwrap_or_default()
}

/// The WALs of a `wal_dir` apart are read where `set_wal_dir` says, and
/// moved aside there once the conversion commits.
#[test]
fn a_wal_dir_apart_is_read_and_its_wals_retired_beside_them() {
    let (dir, wals) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    rocksdb_database_with_wal_dir(dir.path(), wals.path());
    assert!(
        !wal_files(wals.path()).is_empty(),
        "the second half is in a WAL"
    );
    assert!(wal_files(dir.path()).is_empty());
    let mut opts = Options::default();
    opts.set_convert_rocksdb(true);
    opts.set_wal_dir(wals.path());
    let db = DB::open(&opts, dir.path()).unwrap();
    for i in 0..KEYS {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert!(wal_files(wals.path()).is_empty());
    assert!(!wal_files(&wals.path().join(RETIRED_DIR)).is_empty());
    assert!(dir.path().join(RETIRED_DIR).join("CURRENT").exists());
}

/// A conversion committed with a `wal_dir` apart finishes in an open that
/// does not name it (the staging directory notes it), and is set aside if
/// a WAL there changed after the commit.
#[test]
fn a_committed_conversion_remembers_its_wal_dir() {
    let stage_with_wal_dir = || {
        let (dir, wals) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        rocksdb_database_with_wal_dir(dir.path(), wals.path());
        let staging = dir.path().join(STAGING_DIR);
        let mut opts = Options::default();
        opts.set_wal_dir(wals.path());
        let (lock, fingerprint) =
            stage::stage(dir.path(), &staging, &opts, &descriptors()).unwrap();
        install::commit(&staging, &fingerprint).unwrap();
        drop(lock);
        (dir, wals)
    };
    let (dir, wals) = stage_with_wal_dir();
    assert_converted(dir.path());
    assert!(wal_files(wals.path()).is_empty());
    assert!(!wal_files(&wals.path().join(RETIRED_DIR)).is_empty());

    let (dir, wals) = stage_with_wal_dir();
    let wal = wals.path().join(&wal_files(wals.path())[0]);
    let mut bytes = fs::read(&wal).unwrap();
    bytes.extend_from_slice(&[0; 64]);
    fs::write(&wal, bytes).unwrap();
    let err = DB::open(&Options::default(), dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.to_string().contains(&wals.path().display().to_string()),
        "{err}"
    );
    assert!(!dir.path().join(STAGING_DIR).exists());
    assert!(!wal_files(wals.path()).is_empty(), "nothing moved");
}
