//! The backup engine: backups, incremental by segment, listed, verified,
//! purged and restored.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use rocksdb::{DB, Env, ErrorKind};

fn engine(dir: &std::path::Path) -> BackupEngine {
    let opts = BackupEngineOptions::new(dir.join("backups")).unwrap();
    BackupEngine::open(&opts, &Env::new().unwrap()).unwrap()
}

#[test]
fn each_backup_restores_its_own_state() {
    let (dir, db) = open_with_cf();
    let mut backups = engine(dir.path());
    db.put(b"k", b"first").unwrap();
    backups.create_new_backup(&db).unwrap();
    db.put(b"k", b"second").unwrap();
    db.put(b"other", b"x").unwrap();
    backups.create_new_backup_flush(&db, true).unwrap();

    let info = backups.get_backup_info();
    assert_eq!(info.iter().map(|i| i.backup_id).collect::<Vec<_>>(), [1, 2]);
    for i in &info {
        backups.verify_backup(i.backup_id).unwrap();
        assert!(i.size > 0 && i.num_files > 0);
    }

    let first = dir.path().join("restore1");
    backups
        .restore_from_backup(&first, &first, &RestoreOptions::default(), 1)
        .unwrap();
    let latest = dir.path().join("restore2");
    backups
        .restore_from_latest_backup(&latest, &latest, &RestoreOptions::default())
        .unwrap();
    let restored = DB::open_cf(&rocksdb::Options::default(), &first, ["cf"]).unwrap();
    assert_eq!(restored.get(b"k").unwrap(), Some(b"first".to_vec()));
    assert_eq!(restored.get(b"other").unwrap(), None);
    let restored = DB::open_cf(&rocksdb::Options::default(), &latest, ["cf"]).unwrap();
    assert_eq!(restored.get(b"k").unwrap(), Some(b"second".to_vec()));
}

#[test]
fn purging_keeps_the_newest_and_their_shared_segments() {
    let (dir, db) = open_with_cf();
    let mut backups = engine(dir.path());
    for round in 0..3u8 {
        db.put([round], [round]).unwrap();
        backups.create_new_backup(&db).unwrap();
    }
    backups.purge_old_backups(1).unwrap();
    let info = backups.get_backup_info();
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].backup_id, 3);
    backups.verify_backup(3).unwrap();
    assert_eq!(
        backups.verify_backup(1).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let target = dir.path().join("restore");
    backups
        .restore_from_latest_backup(&target, &target, &RestoreOptions::default())
        .unwrap();
    let restored = DB::open_cf(&rocksdb::Options::default(), &target, ["cf"]).unwrap();
    for round in 0..3u8 {
        assert_eq!(restored.get([round]).unwrap(), Some(vec![round]));
    }
}

#[test]
fn a_damaged_backup_fails_verification() {
    let (dir, db) = open_with_cf();
    let mut backups = engine(dir.path());
    db.put(b"k", b"v").unwrap();
    backups.create_new_backup(&db).unwrap();
    let private = dir.path().join("backups/private/1");
    let manifest = private.join("MANIFEST");
    let len = std::fs::metadata(&manifest).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&manifest)
        .unwrap()
        .set_len(len + 1)
        .unwrap();
    assert_eq!(
        backups.verify_backup(1).unwrap_err().kind(),
        ErrorKind::Corruption
    );
}

#[test]
fn restoring_with_no_backup_is_not_found() {
    let (dir, _db) = open_with_cf();
    let mut backups = engine(dir.path());
    let target = dir.path().join("restore");
    let err = backups
        .restore_from_latest_backup(&target, &target, &RestoreOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}
