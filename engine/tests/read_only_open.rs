//! Read-only handles (`Db::open_read_only`): they open beside a primary that
//! holds the lock, change nothing in the directory, refuse every write, read
//! like the primary, and catch up across the primary's compaction while old
//! snapshots keep their view.

mod common;

use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::{Db, Error, KeyspaceId, Options, WriteBatch, WriteOptions};
use common::{dir_image, quiet_options, scan_all, segment_files};

fn fill(db: &Db, ks: KeyspaceId, from: u32, to: u32, tag: &str) {
    for i in from..to {
        let key = format!("key{i:05}");
        db.put(
            ks,
            key.as_bytes(),
            format!("{tag}{i}").as_bytes(),
            &WriteOptions::default(),
        )
        .unwrap();
    }
}

/// A database with keys `0..n` written and cleanly closed.
fn closed_database(n: u32) -> (tempfile::TempDir, KeyspaceId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    fill(&db, ks, 0, n, "v");
    (dir, ks)
}

fn assert_read_only<T: std::fmt::Debug>(result: alexdb_engine::Result<T>) {
    match result {
        Err(Error::ReadOnly(_)) => {}
        other => panic!("expected a read-only refusal, got {other:?}"),
    }
}

#[test]
fn opens_beside_a_primary_and_reads_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let primary = Db::open(dir.path(), quiet_options()).unwrap();
    let ks = primary.keyspace("default").unwrap();
    let other = primary.create_keyspace("other").unwrap();
    fill(&primary, ks, 0, 2000, "v");
    primary
        .put(other, b"o", b"x", &WriteOptions::default())
        .unwrap();
    primary
        .delete(ks, b"key00007", &WriteOptions::default())
        .unwrap();

    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    assert!(reader.is_read_only());
    assert_eq!(scan_all(&reader, ks), scan_all(&primary, ks));
    assert_eq!(
        reader.get_copied(other, b"o").unwrap().as_deref(),
        Some(&b"x"[..])
    );
    assert_eq!(reader.get_copied(ks, b"key00007").unwrap(), None);
    assert_eq!(
        reader.latest_sequence_number(),
        primary.latest_sequence_number()
    );
    assert_eq!(reader.keyspace_names(), primary.keyspace_names());
    reader.verify().unwrap();
    // The primary's lock is untouched: a second primary is still refused.
    assert!(matches!(
        Db::open(dir.path(), quiet_options()),
        Err(Error::LockedHere { .. })
    ));
}

#[test]
fn a_primary_opens_while_a_reader_is_open() {
    let (dir, ks) = closed_database(100);
    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    let primary = Db::open(dir.path(), quiet_options()).unwrap();
    fill(&primary, ks, 100, 200, "v");
    assert_eq!(scan_all(&reader, ks).len(), 100);
    reader.catch_up().unwrap();
    assert_eq!(scan_all(&reader, ks), scan_all(&primary, ks));
}

#[test]
fn every_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Db::open(dir.path(), quiet_options()).unwrap());
    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    let ks = reader.keyspace("default").unwrap();
    let none = WriteOptions::default();
    assert_read_only(reader.put(ks, b"k", b"v", &none));
    assert_read_only(reader.delete(ks, b"k", &none));
    assert_read_only(reader.write(&WriteBatch::new(), &WriteOptions::synced()));
    assert_read_only(reader.sync());
    assert_read_only(reader.compact());
    assert_read_only(reader.create_keyspace("new"));
    assert_read_only(reader.drop_keyspace("other"));
    assert_read_only(reader.save_prepared(b"p", b"x"));
    assert_read_only(reader.remove_prepared(b"p"));
    assert_read_only(reader.checkpoint(dir.path().join("copy")));
    assert_eq!(reader.get_copied(ks, b"k").unwrap(), None);
}

#[test]
fn a_missing_database_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent");
    assert!(matches!(
        Db::open_read_only(&path, Options::default()),
        Err(Error::NotFound(_))
    ));
    assert!(!path.exists());
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(matches!(
        Db::open_read_only(&empty, Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
}

#[test]
fn catch_up_on_a_primary_handle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    assert!(!db.is_read_only());
    assert!(matches!(db.catch_up(), Err(Error::InvalidArgument(_))));
}

#[test]
fn catch_up_follows_a_compaction_and_old_snapshots_keep_their_view() {
    let dir = tempfile::tempdir().unwrap();
    let primary = Db::open(dir.path(), quiet_options()).unwrap();
    let ks = primary.keyspace("default").unwrap();
    fill(&primary, ks, 0, 1500, "old");
    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    let snapshot = reader.snapshot();
    let before = scan_all(&reader, ks);
    let old_files = segment_files(dir.path());

    fill(&primary, ks, 0, 1500, "new");
    assert!(primary.compact().unwrap() > 0);
    let now = segment_files(dir.path());
    // Windows removes a segment the reader still maps only once the reader
    // lets go of it (`io::os::remove_file`).
    assert!(
        cfg!(windows) || old_files.iter().any(|f| !now.contains(f)),
        "the compaction removed none of the segments the reader opened"
    );
    assert_eq!(
        scan_all(&reader, ks),
        before,
        "no catch-up yet: nothing changes"
    );
    reader.catch_up().unwrap();
    assert_eq!(scan_all(&reader, ks), scan_all(&primary, ks));
    assert_eq!(
        reader.get_copied(ks, b"key00003").unwrap().as_deref(),
        Some(&b"new3"[..])
    );
    // The snapshot still reads the segments the compaction removed.
    assert_eq!(
        snapshot.get(ks, b"key00003").unwrap().as_deref(),
        Some(&b"old3"[..])
    );
    let mut old = Vec::new();
    for (k, _) in &before {
        old.push((k.clone(), snapshot.get(ks, k).unwrap().unwrap().to_vec()));
    }
    assert_eq!(old, before);
}

#[test]
fn a_crashed_directory_is_left_exactly_as_found() {
    let (dir, ks) = closed_database(500);
    common::forget_clean_close(dir.path());
    // A torn frame at the end of the active segment, and a leftover
    // compaction output nobody listed.
    let active = segment_files(dir.path()).pop().unwrap();
    let image = std::fs::read(&active).unwrap();
    let end = image.iter().rposition(|&b| b != 0).unwrap() + 1;
    let at = end.next_multiple_of(8) as u64;
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&active)
        .unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(&[0x2a; 24]).unwrap();
    std::fs::write(dir.path().join("0000999999.seg"), b"leftover").unwrap();
    let before = dir_image(dir.path());

    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    assert_eq!(scan_all(&reader, ks).len(), 500);
    reader.catch_up().unwrap();
    drop(reader);
    assert_eq!(
        dir_image(dir.path()),
        before,
        "a read-only open changed the directory"
    );
}

#[test]
fn a_damaged_sealed_segment_is_corruption_naming_it() {
    let (dir, _) = closed_database(2000);
    let sealed = segment_files(dir.path()).remove(0);
    let mut bytes = std::fs::read(&sealed).unwrap();
    bytes[200] ^= 0x55;
    std::fs::write(&sealed, &bytes).unwrap();
    // With the index checkpoint of the clean close, open skips the segment
    // and the full check reports it; without, open does.
    let open_and_verify = || Db::open_read_only(dir.path(), quiet_options())?.verify();
    match open_and_verify() {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, sealed),
        other => panic!("expected corruption in {}, got {other:?}", sealed.display()),
    }
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    match Db::open_read_only(dir.path(), quiet_options()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, sealed),
        other => panic!("expected corruption in {}, got {other:?}", sealed.display()),
    }
}

#[test]
fn damage_in_a_segment_read_at_catch_up_is_corruption_naming_it() {
    let (dir, ks) = closed_database(100);
    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    let known = segment_files(dir.path());
    let primary = Db::open(dir.path(), quiet_options()).unwrap();
    fill(&primary, ks, 100, 3000, "v");
    drop(primary);
    // A segment the reader has not read yet, sealed by a rotation.
    let fresh: Vec<_> = segment_files(dir.path())
        .into_iter()
        .filter(|f| !known.contains(f))
        .collect();
    assert!(fresh.len() >= 2, "expected rotations");
    let damaged = &fresh[0];
    let mut bytes = std::fs::read(damaged).unwrap();
    bytes[300] ^= 0x55;
    std::fs::write(damaged, &bytes).unwrap();
    // Reported by the catch-up when it reads the segment, or (when a fresh
    // recovery starts from the index checkpoint, which covers it) by the
    // full check.
    match reader.catch_up().and_then(|()| reader.verify()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(&file, damaged),
        other => panic!(
            "expected corruption in {}, got {other:?}",
            damaged.display()
        ),
    }
    // The reader still holds a prefix of the writes: the batches before the
    // damage (whole, checksummed) may have been applied in place.
    let rows = scan_all(&reader, ks);
    assert!(rows.len() >= 100);
    for (i, (k, v)) in rows.iter().enumerate() {
        assert_eq!(k, format!("key{i:05}").as_bytes());
        assert_eq!(v, format!("v{i}").as_bytes());
    }
}

#[test]
fn a_version_1_directory_is_read_and_left_as_found() {
    let (dir, ks) = closed_database(1500);
    common::downgrade_manifest(dir.path());
    let before = dir_image(dir.path());
    let reader = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    assert_eq!(scan_all(&reader, ks).len(), 1500);
    // A version-1 MANIFEST has no list to follow in place: a full recovery.
    reader.catch_up().unwrap();
    assert_eq!(scan_all(&reader, ks).len(), 1500);
    drop(reader);
    assert_eq!(dir_image(dir.path()), before);
}
