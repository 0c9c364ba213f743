//! Failed fsyncs and failed writes (a full disk): the write reports the
//! error, the handle refuses further writes, and nothing acknowledged
//! before is lost.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use alexdb_engine::io::faulty::FaultyFileSystem;
use alexdb_engine::{Db, Error, Options, WriteOptions};

fn options(fs: &FaultyFileSystem) -> Options {
    Options {
        file_system: Arc::new(fs.clone()),
        ..Options::default()
    }
}

#[test]
fn failed_fsync_poisons_the_handle_and_keeps_earlier_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    {
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"before", b"1", &WriteOptions::synced())
            .unwrap();
        fs.faults.fail_sync.store(true, Ordering::SeqCst);
        let err = db
            .put(ks, b"during", b"2", &WriteOptions::synced())
            .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        fs.faults.fail_sync.store(false, Ordering::SeqCst);
        let refused = db
            .put(ks, b"after", b"3", &WriteOptions::default())
            .unwrap_err();
        assert!(matches!(refused, Error::Poisoned(_)), "{refused}");
        assert!(refused.to_string().contains("reopen"));
        // The disk syncs again, but a caller who syncs to confirm
        // durability must still see that the handle failed.
        assert!(matches!(db.sync(), Err(Error::Poisoned(_))));
        assert_eq!(
            db.get_copied(ks, b"before").unwrap().as_deref(),
            Some(&b"1"[..])
        );
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("default").unwrap();
    assert_eq!(
        db.get_copied(ks, b"before").unwrap().as_deref(),
        Some(&b"1"[..])
    );
    assert_eq!(db.get_copied(ks, b"after").unwrap(), None);
    db.put(ks, b"after", b"3", &WriteOptions::synced()).unwrap();
}

#[test]
fn group_commit_shares_fsyncs_between_concurrent_sync_writers() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    let db = Arc::new(Db::open(dir.path(), options(&fs)).unwrap());
    let ks = db.keyspace("default").unwrap();
    let before = fs.faults.syncs.load(Ordering::SeqCst);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..50u32 {
                    let key = format!("{t}:{i}");
                    db.put(ks, key.as_bytes(), b"v", &WriteOptions::synced())
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let syncs = fs.faults.syncs.load(Ordering::SeqCst) - before;
    assert!(syncs <= 200, "200 sync writes took {syncs} fsyncs");
    assert_eq!(db.live_keys(ks).unwrap(), 200);
}

#[test]
fn full_disk_is_an_error_and_poisons_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    let ks = db.keyspace("default").unwrap();
    db.put(ks, b"a", b"1", &WriteOptions::default()).unwrap();
    db.sync().unwrap();
    fs.faults.fail_writes.store(true, Ordering::SeqCst);
    let err = db
        .put(ks, b"b", b"2", &WriteOptions::default())
        .unwrap_err();
    // The system's own text: ENOSPC, or ERROR_DISK_FULL on Windows.
    let disk_full = std::io::Error::from_raw_os_error(if cfg!(windows) { 112 } else { 28 });
    assert!(err.to_string().contains(&disk_full.to_string()), "{err}");
    fs.faults.fail_writes.store(false, Ordering::SeqCst);
    assert!(matches!(
        db.put(ks, b"c", b"3", &WriteOptions::default()),
        Err(Error::Poisoned(_))
    ));
    // Everything acknowledged was synced before the failure, yet a caller
    // who syncs to confirm durability sees that the handle failed.
    assert!(matches!(db.sync(), Err(Error::Poisoned(_))));
    assert_eq!(db.get_copied(ks, b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get_copied(ks, b"b").unwrap(), None);
}

/// A compaction whose output cannot be written (the disk fills while the
/// new segment is written) leaves no partial output behind, however often
/// it is retried; once space is back the compaction completes and every
/// key reads back.
#[test]
fn a_failed_compaction_output_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFileSystem::new();
    let db = Db::open(
        dir.path(),
        Options {
            segment_bytes: 256 << 10,
            background_compaction: false,
            ..options(&fs)
        },
    )
    .unwrap();
    let ks = db.keyspace("default").unwrap();
    for i in 0..20_000u32 {
        let key = format!("key:{:08}", (i * 7919) % 20_000);
        db.put(ks, key.as_bytes(), &[b'v'; 100], &WriteOptions::default())
            .unwrap();
    }
    let files = |dir: &std::path::Path| std::fs::read_dir(dir).unwrap().count();
    fs.faults
        .new_file_bytes_limit
        .store(64 << 10, Ordering::SeqCst);
    // The first pass seals the active log and starts a new one (one file
    // more); from then on a failed pass must leave the count as it was.
    let mut before = None;
    for _ in 0..10 {
        let err = db.compact().unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        let now = files(dir.path());
        assert_eq!(
            *before.get_or_insert(now),
            now,
            "a failed output stayed on disk"
        );
    }
    fs.faults.new_file_bytes_limit.store(0, Ordering::SeqCst);
    db.compact().unwrap();
    for i in 0..20_000u32 {
        let key = format!("key:{i:08}");
        assert!(
            db.get_copied(ks, key.as_bytes()).unwrap().is_some(),
            "{key}"
        );
    }
    db.verify().unwrap();
}
