//! The index checkpoint (`INDEX`): a clean close writes it and the next
//! open reads only what was written after it; a crash after it, compaction
//! that replaced the segments it lists, a damaged, truncated or half-written
//! one, and damage to a segment it covers all give the right state or a
//! corruption error naming the file.

mod common;

use common::{State, state};

use std::path::Path;

use alexdb_engine::format::index_checkpoint::{self, Encoder, INDEX_FILE, INDEX_TMP_FILE};
use alexdb_engine::{Db, Error, KeyspaceId, Options, WriteBatch, WriteOptions};

fn options() -> Options {
    common::quiet_options()
}

fn key(i: u32) -> Vec<u8> {
    format!("k{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes()
}

/// Puts `keys` in batches of 100, with a round-dependent value.
fn put_range(db: &Db, ks: KeyspaceId, keys: std::ops::Range<u32>, round: u32) {
    for chunk in keys.collect::<Vec<_>>().chunks(100) {
        let mut b = WriteBatch::new();
        for &i in chunk {
            b.put(ks, &key(i), format!("{round}:{i}").as_bytes());
        }
        db.write(&b, &WriteOptions::default()).unwrap();
    }
}

fn delete_every(db: &Db, ks: KeyspaceId, keys: std::ops::Range<u32>, step: usize) {
    let mut b = WriteBatch::new();
    for i in keys.step_by(step) {
        b.delete(ks, &key(i));
    }
    db.write(&b, &WriteOptions::default()).unwrap();
}

/// A database spread over many sealed segments and a compaction output,
/// with deletes, a range delete and a second keyspace.
fn build(dir: &Path) -> State {
    let db = Db::open(dir, options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let other = db.create_keyspace("other").unwrap();
    put_range(&db, ks, 0..3_000, 0);
    put_range(&db, other, 0..500, 0);
    delete_every(&db, ks, 0..3_000, 7);
    db.compact().unwrap();
    put_range(&db, ks, 1_000..2_000, 1);
    let mut b = WriteBatch::new();
    b.delete_range(ks, b"k00100000", b"k00200000");
    db.write(&b, &WriteOptions::default()).unwrap();
    state(&db)
}

fn records_read(db: &Db) -> u64 {
    db.stats().records_read_at_open
}

#[test]
fn a_clean_close_lets_the_next_open_read_only_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    assert!(dir.path().join(INDEX_FILE).exists());
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    db.verify().unwrap();
    // Nothing was written after the cut: nothing is read.
    assert_eq!(records_read(&db), 0);
    // Writing more and reopening again goes on from the new checkpoint.
    put_range(&db, db.keyspace("other").unwrap(), 500..900, 2);
    let expected = state(&db);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    assert!(records_read(&db) < 400, "read {}", records_read(&db));
}

/// Regression: the open read the whole segment that was active at the cut
/// (up to a segment's size at every reopen) and forgot the dead bytes of its
/// records below the cut, so compaction undercounted it after restarts.
#[test]
fn a_clean_close_lets_the_next_open_read_nothing_and_keep_dead_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            segment_bytes: 64 << 20,
            ..options()
        },
    )
    .unwrap();
    let ks = db.keyspace("default").unwrap();
    for round in 0..3 {
        put_range(&db, ks, 0..2_000, round);
    }
    let (expected, dead) = (state(&db), db.stats().dead_bytes);
    assert!(dead > 0);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    assert_eq!(records_read(&db), 0);
    assert_eq!(db.stats().dead_bytes, dead);
    db.verify().unwrap();
}

#[test]
fn without_a_checkpoint_every_record_is_read_and_the_state_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    assert!(records_read(&db) > 3_000, "read {}", records_read(&db));
}

/// The files of `from` copied into `to` while the database is open: what a
/// kill -9 at this point would leave (the page cache survives).
fn crash_image(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (path, bytes) in common::dir_image(from) {
        std::fs::write(to.join(path.file_name().unwrap()), bytes).unwrap();
    }
}

/// Opens a crash image with its checkpoint and, in a copy, without it:
/// both must give `expected`. Returns the records each open read.
fn open_both_ways(image: &Path, expected: &State) -> (u64, u64) {
    let full = tempfile::tempdir().unwrap();
    crash_image(image, full.path());
    let _ = std::fs::remove_file(full.path().join(INDEX_FILE));
    let scanned = Db::open(full.path(), options()).unwrap();
    assert_eq!(&state(&scanned), expected);
    let reopened = Db::open(image, options()).unwrap();
    assert_eq!(&state(&reopened), expected);
    reopened.verify().unwrap();
    // Compaction is steered by the dead bytes: both opens must know them.
    assert_eq!(reopened.stats().dead_bytes, scanned.stats().dead_bytes);
    // And it keeps working: compaction, close, reopen from the new one.
    reopened.compact().unwrap();
    let counts = (records_read(&reopened), records_read(&scanned));
    drop(reopened);
    let again = Db::open(image, options()).unwrap();
    assert_eq!(&state(&again), expected);
    counts
}

#[test]
fn a_crash_after_the_checkpoint_replays_what_came_after_it() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    // Overwrites, deletes, range deletes (overlapping, with writes into
    // their ranges between them), a new and a dropped keyspace.
    put_range(&db, ks, 2_500..4_000, 3);
    delete_every(&db, ks, 0..4_000, 5);
    for (from, to) in [
        (&b"k00500000"[..], &b"k00600000"[..]),
        (b"k00550000", b"k00700000"),
        (b"k00100000", b"k00100900"),
    ] {
        let mut b = WriteBatch::new();
        b.delete_range(ks, from, to);
        db.write(&b, &WriteOptions::default()).unwrap();
        put_range(&db, ks, 3_000..3_300, 5);
    }
    let fresh = db.create_keyspace("fresh").unwrap();
    put_range(&db, fresh, 0..300, 3);
    db.drop_keyspace("other").unwrap();
    let before_compaction = tempfile::tempdir().unwrap();
    crash_image(dir.path(), before_compaction.path());
    let expected = state(&db);
    let (with, without) = open_both_ways(before_compaction.path(), &expected);
    assert!(
        with < without,
        "{with} records read with the checkpoint, {without} without"
    );
    // A compaction that replaces segments the checkpoint lists. It then
    // removes the checkpoint; a crash between the install and the removal
    // leaves it in place, stale: put it back in the image.
    let stale = std::fs::read(dir.path().join(INDEX_FILE)).unwrap();
    db.compact().unwrap();
    put_range(&db, ks, 0..200, 4);
    let after_compaction = tempfile::tempdir().unwrap();
    crash_image(dir.path(), after_compaction.path());
    std::fs::write(after_compaction.path().join(INDEX_FILE), stale).unwrap();
    open_both_ways(after_compaction.path(), &state(&db));
}

/// Regression (the kill -9 soak's directory grew by a file or two per
/// cycle): after a clean close, writes that sealed the segment active at
/// the cut and then a crash, the open read that segment whole (the durable
/// watermark had moved past it) and forgot the dead bytes of its records
/// below the cut. Compaction never picked it again, however dead it was.
#[test]
fn a_crash_after_the_cut_segment_was_sealed_keeps_its_dead_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    // Overwritten within the segment that is active at the close.
    for round in 0..4 {
        put_range(&db, ks, 0..20, round);
    }
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(records_read(&db), 0);
    // Enough to seal the cut segment and several more.
    put_range(&db, ks, 0..2_000, 5);
    let image = tempfile::tempdir().unwrap();
    crash_image(dir.path(), image.path());
    let (with, _) = open_both_ways(image.path(), &state(&db));
    assert!(with > 0);
}

#[test]
fn a_damaged_truncated_or_half_written_checkpoint_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    let index = dir.path().join(INDEX_FILE);
    let pristine = std::fs::read(&index).unwrap();
    let mut cases: Vec<Vec<u8>> = vec![
        pristine[..pristine.len() / 2].to_vec(),
        pristine[..pristine.len() - 1].to_vec(),
        Vec::new(),
    ];
    for at in [0, 9, 20, 40, 60, pristine.len() / 3, pristine.len() - 2] {
        let mut bad = pristine.clone();
        bad[at] ^= 0x40;
        cases.push(bad);
    }
    for bad in cases {
        std::fs::write(&index, &bad).unwrap();
        std::fs::write(dir.path().join(INDEX_TMP_FILE), &pristine[..100]).unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        assert_eq!(state(&db), expected);
        assert!(records_read(&db) > 3_000, "a bad checkpoint was used");
    }
    // The last clean close wrote a good one again.
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(records_read(&db) < 400);
}

#[test]
fn damage_to_a_segment_the_checkpoint_covers_is_reported_by_reads_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    // A key whose newest record sits in the oldest sealed segment.
    let oldest = common::segment_files(dir.path())[0].clone();
    let (victim, value) = common::scan_all(&db, ks)
        .into_iter()
        .find(|(k, _)| {
            let bytes = std::fs::read(&oldest).unwrap();
            bytes.windows(k.len()).any(|w| w == k.as_slice())
        })
        .expect("a key in the oldest segment");
    drop(db);
    let mut bytes = std::fs::read(&oldest).unwrap();
    let at = bytes
        .windows(value.len())
        .position(|w| w == value.as_slice())
        .unwrap();
    bytes[at] ^= 0x01;
    std::fs::write(&oldest, &bytes).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    match db.get_copied(ks, &victim) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, oldest),
        other => panic!("read of a damaged record gave {other:?}"),
    }
    match db.verify() {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, oldest),
        other => panic!("verify gave {other:?}"),
    }
}

/// Found by the model test: a range delete not yet applied when the
/// checkpoint was written left the key it covers counted live (and in the
/// index) after the reopen, where a full scan leaves it out.
#[test]
fn a_range_delete_unapplied_at_the_cut_is_applied_by_the_open() {
    let dir = tempfile::tempdir().unwrap();
    let w = WriteOptions::default();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"a", b"1", &w).unwrap();
        db.put(ks, b"b", b"2", &w).unwrap();
        let mut batch = WriteBatch::new();
        batch.delete_range(ks, b"b", b"c");
        db.write(&batch, &w).unwrap();
    }
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(records_read(&db) < 10, "opened from the checkpoint");
    let stats = db.stats();
    assert_eq!((stats.live_keys, stats.index_entries), (1, 1));
    let ks = db.keyspace("default").unwrap();
    assert_eq!(db.get_copied(ks, b"b").unwrap(), None);
}

#[test]
fn a_checkpoint_whose_segments_compaction_replaced_is_removed_until_the_next_close() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    let index = dir.path().join(INDEX_FILE);
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(index.exists());
    db.compact().unwrap();
    assert!(
        !index.exists(),
        "a checkpoint of replaced segments only costs disk"
    );
    drop(db);
    assert!(index.exists(), "the clean close writes a current one");
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    assert!(records_read(&db) < 400, "read {}", records_read(&db));
}

/// Regression: a delete that compaction copied (an older version of its
/// key could still be in a segment not yet compacted) was counted live in
/// the output, where a full scan counts every delete dead; opens from the
/// checkpoint then undercounted every such output.
#[test]
fn a_delete_compaction_keeps_is_counted_dead_as_a_full_scan_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    put_range(&db, ks, 0..3_000, 0);
    delete_every(&db, ks, 0..3_000, 7);
    // Many passes (16 KiB outputs): earlier ones must keep the deletes.
    db.compact().unwrap();
    put_range(&db, ks, 1_000..2_000, 1);
    let running = db.stats().dead_bytes;
    let image = tempfile::tempdir().unwrap();
    crash_image(dir.path(), image.path());
    let _ = std::fs::remove_file(image.path().join(INDEX_FILE));
    let scanned = Db::open(image.path(), options()).unwrap();
    assert_eq!(scanned.stats().dead_bytes, running);
    drop(db);
    let reopened = Db::open(dir.path(), options()).unwrap();
    assert_eq!(reopened.stats().dead_bytes, running);
}

/// Lives of a process that writes, compacts (sometimes under a snapshot,
/// so old versions are moved for it), closes cleanly or is killed, and
/// reopens, as the kill -9 soak's child does: after every life its files,
/// opened from the checkpoint and by a full scan, give the same dead bytes.
/// Regression: copies moved for a snapshot were forgotten at a clean close
/// and counted live for ever after. Some batches delete a range too.
#[test]
fn restarts_and_crashes_keep_the_dead_bytes_a_full_scan_finds() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut n = 0u32;
    let mut write = |db: &Db, count: u64| {
        let ks = db.keyspace("default").unwrap();
        for _ in 0..count {
            let mut b = WriteBatch::new();
            b.put(ks, &key(n % 40), &vec![n as u8; 8 + (n % 300) as usize]);
            b.delete(ks, &key((n + 7) % 40));
            if n.is_multiple_of(37) {
                // A range delete counts dead as a point delete does.
                b.delete_range(ks, &key(n % 40), &key(n % 40 + 3));
            }
            db.write(&b, &WriteOptions::default()).unwrap();
            n += 1;
        }
    };
    for life in 0..60 {
        let db = Db::open(dir.path(), options()).unwrap();
        write(&db, next() % 300);
        let snapshot = (next() % 2 == 0).then(|| db.snapshot());
        if next() % 2 == 0 {
            write(&db, next() % 50);
            db.compact().unwrap();
        }
        write(&db, next() % 100);
        drop(snapshot);
        end_life(db, dir.path(), next() % 2 == 0, life);
    }
}

/// The files of a database that is open and busy (background compaction
/// running), as a kill -9 now could leave them: the MANIFEST and the index
/// checkpoint first, then the segments, each as it is at that moment. If
/// the MANIFEST changed meanwhile, the image is taken again: a segment it
/// names could have been installed after the hold was taken, replaced and
/// removed before the copy reached it (no crash leaves that; the image
/// would mix two moments). Segment ids only grow, so an unchanged MANIFEST
/// means every segment it names stayed listed, and so on disk, throughout.
fn busy_crash_image(db: &Db, from: &Path, to: &Path) {
    let _hold = db.hold_files();
    loop {
        let _ = std::fs::remove_dir_all(to);
        std::fs::create_dir_all(to).unwrap();
        let manifest = std::fs::read(from.join("MANIFEST")).ok();
        if let Some(bytes) = &manifest {
            std::fs::write(to.join("MANIFEST"), bytes).unwrap();
        }
        if let Ok(bytes) = std::fs::read(from.join(INDEX_FILE)) {
            std::fs::write(to.join(INDEX_FILE), bytes).unwrap();
        }
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "seg")
                && let Ok(bytes) = std::fs::read(&path)
            {
                std::fs::write(to.join(path.file_name().unwrap()), bytes).unwrap();
            }
        }
        if std::fs::read(from.join("MANIFEST")).ok() == manifest {
            return;
        }
    }
}

/// The kill -9 soak's workload in one process: two keyspaces of 40 slots
/// overwritten again and again, small segments, background compaction,
/// clean closes and kills at random. After every life the files, opened
/// from the checkpoint and by a full scan, give the same dead bytes.
/// Regression: an overwrite counted the replaced version as large as the
/// new record; values that shrink (here every 300 writes of a slot) left
/// segments counted a fifth dead that were all dead, kept for ever.
#[test]
fn busy_lives_keep_the_dead_bytes_a_full_scan_finds() {
    let dir = tempfile::tempdir().unwrap();
    let lively = Options {
        segment_bytes: 32 << 10,
        compaction_dead_ratio: 0.3,
        ..Options::default()
    };
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut n = 0u64;
    for life in 0..150 {
        let db = Db::open(dir.path(), lively.clone()).unwrap();
        let default = db.keyspace("default").unwrap();
        let other = db.create_keyspace("other").unwrap();
        for _ in 0..next() % 200 {
            let value = vec![n as u8; 8 + (n % 300) as usize];
            let mut b = WriteBatch::new();
            b.put(default, &key((n % 40) as u32), &value);
            b.put(other, &key((n % 40) as u32), &value);
            b.delete(other, &key(((n + 7) % 40) as u32));
            b.put(default, b"counter", &n.to_be_bytes());
            db.write(&b, &WriteOptions::default()).unwrap();
            n += 1;
        }
        end_life(db, dir.path(), next() % 2 == 0, life);
    }
}

/// Ends a life of the database at `dir`: a kill -9 (`killed`: the files as
/// they are now, see [`busy_crash_image`]) or a clean close. Then opens its
/// files from the checkpoint and, in a copy, by a full scan: both must
/// count the same dead bytes.
fn end_life(db: Db, dir: &Path, killed: bool, life: u32) {
    if killed {
        let image = tempfile::tempdir().unwrap();
        busy_crash_image(&db, dir, image.path());
        drop(db);
        std::fs::remove_dir_all(dir).unwrap();
        crash_image(image.path(), dir);
    } else {
        drop(db);
    }
    let full = tempfile::tempdir().unwrap();
    crash_image(dir, full.path());
    let _ = std::fs::remove_file(full.path().join(INDEX_FILE));
    let scanned = Db::open(full.path(), options()).unwrap();
    let reopened = Db::open(dir, options()).unwrap();
    assert_eq!(
        reopened.stats().dead_bytes,
        scanned.stats().dead_bytes,
        "life {life}"
    );
}

/// An index over more than 2^20 keys is loaded from the checkpoint by two
/// threads: the open must find the state a full scan finds, reading no
/// record.
#[test]
fn a_checkpoint_over_a_million_keys_opens_as_a_full_scan_does() {
    let dir = tempfile::tempdir().unwrap();
    let n = (1u64 << 20) + 50_000;
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    let keys: Vec<u64> = (0..n)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    for chunk in keys.chunks(1_000) {
        let mut b = WriteBatch::new();
        for &k in chunk {
            b.put(ks, &k.to_be_bytes(), &k.to_le_bytes()[..4]);
        }
        db.write(&b, &WriteOptions::default()).unwrap();
    }
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(records_read(&db), 0);
    let from_checkpoint = state(&db);
    drop(db);
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(records_read(&db) >= n);
    let scanned = state(&db);
    assert_eq!(scanned["default"].len() as u64, n);
    assert!(from_checkpoint == scanned, "the two opens differ");
}

/// One keyspace section's entries: (key, location) in file order.
type Entries = Vec<(Vec<u8>, u64)>;

/// An edit of a section's entries, named.
type Edit = (&'static str, fn(&mut Entries));

/// The checkpoint `bytes` written again, as the engine writes it, with the
/// entries of its largest section passed through `edit`: a checkpoint whose
/// checksums are all valid whatever order the edit leaves its keys in.
fn rewritten_checkpoint(bytes: &[u8], edit: impl Fn(&mut Entries)) -> Vec<u8> {
    let c = index_checkpoint::decode(bytes).unwrap();
    let largest = (0..c.keyspaces.len())
        .max_by_key(|&i| c.keyspaces[i].len())
        .unwrap();
    let mut enc = Encoder::new(c.cut, &c.segments, c.keyspaces.len() as u32);
    let (mut out, mut counts) = (Vec::new(), Vec::new());
    for (i, section) in c.keyspaces.iter().enumerate() {
        let mut entries: Entries = (0..section.len())
            .map(|e| (section.key(e).to_vec(), section.location(e)))
            .collect();
        if i == largest {
            edit(&mut entries);
        }
        let slot = enc.keyspace(section.id, &section.tombstones);
        let (mut prev_key, mut prev_location): (&[u8], u64) = (&[], 0);
        for (key, location) in &entries {
            enc.entry(prev_key, key, prev_location, *location);
            (prev_key, prev_location) = (key, *location);
        }
        enc.pad();
        out.extend(enc.take());
        let key_bytes = entries.iter().map(|(k, _)| k.len() as u64).sum();
        counts.push(enc.count(slot, entries.len() as u64, key_bytes));
    }
    out.extend(enc.finish());
    for patch in counts {
        let at = patch.at as usize;
        out[at..at + patch.bytes.len()].copy_from_slice(&patch.bytes);
    }
    out
}

/// Regression: the index is bulk-loaded from a section's entries in file
/// order, and a checkpoint with valid checksums but keys out of order or
/// repeated was used: the loaded index missed keys that are in the data.
/// Such a checkpoint is damaged: the open scans the segments instead.
#[test]
fn a_checkpoint_with_keys_out_of_order_or_repeated_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let expected = build(dir.path());
    let index = dir.path().join(INDEX_FILE);
    let pristine = std::fs::read(&index).unwrap();
    // Written again unedited, the checkpoint is used: the open reads no
    // record (so the fallback below is the edits' doing).
    std::fs::write(&index, rewritten_checkpoint(&pristine, |_| {})).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(state(&db), expected);
    assert_eq!(records_read(&db), 0, "the unedited checkpoint was not used");
    let (live_keys, index_entries) = (db.stats().live_keys, db.stats().index_entries);
    drop(db);
    let pristine = std::fs::read(&index).unwrap();
    let edits: [Edit; 5] = [
        ("two neighbours swapped", |e| e.swap(1_000, 1_001)),
        ("first and last swapped", |e| {
            let last = e.len() - 1;
            e.swap(0, last)
        }),
        ("an entry repeated", |e| e.insert(500, e[500].clone())),
        ("a key repeated with another location", |e| {
            e[501].0 = e[500].0.clone();
        }),
        ("all in reverse", |e| e.reverse()),
    ];
    for (what, edit) in edits {
        std::fs::write(&index, rewritten_checkpoint(&pristine, edit)).unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        assert!(
            records_read(&db) > 3_000,
            "{what}: the checkpoint was used ({} records read)",
            records_read(&db)
        );
        assert_eq!(state(&db), expected, "{what}");
        for (name, contents) in &expected {
            let ks = db.keyspace(name).unwrap();
            for (key, value) in contents {
                let got = db.get_copied(ks, key).unwrap();
                assert_eq!(got.as_ref(), Some(value), "{what}: {name} {key:?}");
            }
        }
        let stats = db.stats();
        assert_eq!(
            (stats.live_keys, stats.index_entries),
            (live_keys, index_entries),
            "{what}"
        );
        drop(db);
    }
}
