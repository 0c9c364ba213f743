//! Merge operands stored as operands: a merge appends its operand alone,
//! reads fold the key's stack over its base, the stack limit and segment
//! rotation make the writer resolve it, compaction folds every stack it
//! copies (or, without a merge function, copies it as it is), and snapshots, deletes, failures and reopen see what they saw
//! when each stack was written.

mod common;

use std::sync::Arc;

use alexdb_engine::{
    Db, Error, KeyRange, KeyspaceId, MergeFunction, Options, WriteBatch, WriteOptions,
};

fn append() -> Arc<dyn MergeFunction> {
    Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
        Some([old.unwrap_or_default(), operand].concat())
    })
}

/// Appends, refusing the operand `x`.
fn append_refusing_x() -> Arc<dyn MergeFunction> {
    Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
        (operand != b"x").then(|| [old.unwrap_or_default(), operand].concat())
    })
}

fn open_with(
    dir: &std::path::Path,
    options: Options,
    function: Option<Arc<dyn MergeFunction>>,
) -> (Db, KeyspaceId) {
    let db = Db::open(dir, options).unwrap();
    let ks = db.keyspace("default").unwrap();
    db.set_merge_function(ks, function).unwrap();
    (db, ks)
}

/// A new database with manual compaction and `function` as the default
/// keyspace's merge function.
fn fresh(function: Option<Arc<dyn MergeFunction>>) -> (tempfile::TempDir, Db, KeyspaceId) {
    let dir = tempfile::tempdir().unwrap();
    let (db, ks) = open_with(dir.path(), common::manual_compaction_options(), function);
    (dir, db, ks)
}

/// An operand long enough to stack over no value.
const STACKED: usize = 256;

/// A value long enough that merges over it stack (a merge over a short
/// value resolves: see `write/stacking.rs`).
const BASE: &[u8] = &[b'_'; 256];

/// Puts [`BASE`] as `key`'s value.
fn put_base(db: &Db, ks: KeyspaceId, key: &[u8]) {
    db.put(ks, key, BASE, &w()).unwrap();
}

/// [`BASE`] followed by `tail`.
fn on_base(tail: &[u8]) -> Option<Vec<u8>> {
    Some([BASE, tail].concat())
}

fn get(db: &Db, ks: KeyspaceId, key: &[u8]) -> Option<Vec<u8>> {
    db.get_copied(ks, key).unwrap()
}

fn w() -> WriteOptions {
    WriteOptions::default()
}

/// 2,000 operands of 64 bytes into one key log about their own bytes plus
/// a fold every 32 merges: a few megabytes, where resolving every merge
/// wrote the whole value each time (about 128 MB).
#[test]
fn an_appending_merge_logs_its_operand_not_the_value() {
    let (dir, db, ks) = fresh(Some(append()));
    let mut expected = Vec::new();
    for i in 0..2_000u32 {
        let operand = [(i % 251) as u8; 64];
        db.merge(ks, b"k", &operand, &w()).unwrap();
        expected.extend_from_slice(&operand);
    }
    assert_eq!(get(&db, ks, b"k"), Some(expected.clone()));
    let logged = common::disk_bytes(dir.path());
    assert!(logged < 12 << 20, "{logged} bytes on disk");
    drop(db);
    let (db, ks) = open_with(
        dir.path(),
        common::manual_compaction_options(),
        Some(append()),
    );
    assert_eq!(get(&db, ks, b"k"), Some(expected));
    db.verify().unwrap();
}

/// With a limit of 3, every fourth merge of a key resolves its stack: the
/// log then holds the resolved value (seen by a reader with no function,
/// which reads a resolved version without one).
#[test]
fn the_stack_limit_makes_the_writer_resolve() {
    let (_dir, db, ks) = fresh(Some(append()));
    db.set_merge_stack_limit(ks, 3).unwrap();
    put_base(&db, ks, b"k");
    for operand in [b"a", b"b", b"c"] {
        db.merge(ks, b"k", operand, &w()).unwrap();
    }
    db.set_merge_function(ks, None).unwrap();
    assert!(matches!(
        db.get_copied(ks, b"k"),
        Err(Error::MergeFailed {
            no_function: true,
            ..
        })
    ));
    db.set_merge_function(ks, Some(append())).unwrap();
    db.merge(ks, b"k", b"d", &w()).unwrap();
    db.set_merge_function(ks, None).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"abcd"));
    db.set_merge_function(ks, Some(append())).unwrap();
    db.merge(ks, b"k", b"e", &w()).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"abcde"));
}

/// A limit of 0 resolves every merge, as version 5 did.
#[test]
fn a_limit_of_zero_resolves_every_merge() {
    let (_dir, db, ks) = fresh(Some(append()));
    db.set_merge_stack_limit(ks, 0).unwrap();
    put_base(&db, ks, b"k");
    db.merge(ks, b"k", b"a", &w()).unwrap();
    db.merge(ks, b"k", b"b", &w()).unwrap();
    db.set_merge_function(ks, None).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"ab"));
}

/// Compaction writes each stack it copies as a put of its fold: after it,
/// the value reads without a merge function; before it, it cannot.
#[test]
fn compaction_folds_stacks_into_values() {
    let (dir, db, ks) = fresh(Some(append()));
    put_base(&db, ks, b"k");
    for operand in [b"a", b"b", b"c"] {
        db.merge(ks, b"k", operand, &w()).unwrap();
    }
    // A large operand over no value: the bottom of a stack without a base.
    db.merge(ks, b"fresh", BASE, &w()).unwrap();
    db.merge(ks, b"fresh", b"x", &w()).unwrap();
    db.set_merge_function(ks, None).unwrap();
    assert!(db.get_copied(ks, b"k").is_err());
    assert!(db.get_copied(ks, b"fresh").is_err());
    db.set_merge_function(ks, Some(append())).unwrap();
    db.compact().unwrap();
    db.set_merge_function(ks, None).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"abc"));
    assert_eq!(get(&db, ks, b"fresh"), on_base(b"x"));
    drop(db);
    let (db, ks) = open_with(dir.path(), common::manual_compaction_options(), None);
    assert_eq!(get(&db, ks, b"k"), on_base(b"abc"));
    db.verify().unwrap();
}

/// A compaction that meets operands of a keyspace without a merge function
/// copies them as they are (see `tests/kept_merge_stacks.rs`): reads fail
/// as before until the function is set, then fold the same value, and a
/// compaction with the function folds the stack.
#[test]
fn compaction_without_a_function_keeps_the_operands() {
    let (_dir, db, ks) = fresh(Some(append()));
    put_base(&db, ks, b"k");
    db.merge(ks, b"k", b"a", &w()).unwrap();
    db.merge(ks, b"k", b"b", &w()).unwrap();
    db.set_merge_function(ks, None).unwrap();
    db.compact().unwrap();
    assert!(matches!(
        db.get_copied(ks, b"k"),
        Err(Error::MergeFailed {
            no_function: true,
            ..
        })
    ));
    db.set_merge_function(ks, Some(append())).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"ab"));
    db.compact().unwrap();
    db.set_merge_function(ks, None).unwrap();
    assert_eq!(get(&db, ks, b"k"), on_base(b"ab"));
}

/// Snapshots taken between operands read their own fold, before and after
/// the stack is resolved by the writer and folded by compaction.
#[test]
fn snapshots_see_their_own_fold() {
    let (_dir, db, ks) = fresh(Some(append()));
    db.set_merge_stack_limit(ks, 4).unwrap();
    put_base(&db, ks, b"k");
    let mut snaps = Vec::new();
    let mut expected = BASE.to_vec();
    for i in 0..20u8 {
        db.merge(ks, b"k", &[b'a' + i], &w()).unwrap();
        expected.push(b'a' + i);
        snaps.push((db.snapshot(), expected.clone()));
    }
    let check = |snaps: &[(alexdb_engine::Snapshot, Vec<u8>)]| {
        for (snap, value) in snaps {
            assert_eq!(snap.get(ks, b"k").unwrap().as_deref(), Some(&value[..]));
        }
    };
    check(&snaps);
    db.compact().unwrap();
    check(&snaps);
    db.merge(ks, b"k", b"!", &w()).unwrap();
    db.compact().unwrap();
    check(&snaps);
    expected.push(b'!');
    assert_eq!(get(&db, ks, b"k"), Some(expected));
}

/// Deletes and range deletes between operands end the stack below them,
/// in separate writes and inside one batch. The operands are long, so
/// that each stacks even over no value.
#[test]
fn deletes_between_operands_cut_the_stack() {
    let big = |c: u8| vec![c; STACKED];
    let joined = |cs: &[u8]| Some(cs.iter().flat_map(|&c| big(c)).collect::<Vec<u8>>());
    let (dir, db, ks) = fresh(Some(append()));
    db.merge(ks, b"k", &big(b'a'), &w()).unwrap();
    let before_delete = db.snapshot();
    db.delete(ks, b"k", &w()).unwrap();
    db.merge(ks, b"k", &big(b'b'), &w()).unwrap();
    assert_eq!(get(&db, ks, b"k"), joined(b"b"));
    let mut range = WriteBatch::new();
    range.delete_range(ks, b"j", b"l");
    db.write(&range, &w()).unwrap();
    assert_eq!(get(&db, ks, b"k"), None);
    db.merge(ks, b"k", &big(b'c'), &w()).unwrap();
    db.merge(ks, b"k", &big(b'd'), &w()).unwrap();
    assert_eq!(get(&db, ks, b"k"), joined(b"cd"));
    let mut batch = WriteBatch::new();
    batch.merge(ks, b"k", &big(b'e'));
    batch.delete(ks, b"k");
    batch.merge(ks, b"k", &big(b'f'));
    batch.merge(ks, b"k", &big(b'g'));
    batch.delete_range(ks, b"k", b"l");
    batch.merge(ks, b"k", &big(b'h'));
    batch.put(ks, b"p", BASE);
    batch.merge(ks, b"p", b"q");
    db.write(&batch, &w()).unwrap();
    let check = |db: &Db, ks| {
        assert_eq!(get(db, ks, b"k"), joined(b"h"));
        assert_eq!(get(db, ks, b"p"), on_base(b"q"));
    };
    check(&db, ks);
    assert_eq!(
        before_delete.get(ks, b"k").unwrap().as_deref(),
        joined(b"a").as_deref()
    );
    db.compact().unwrap();
    drop(before_delete);
    drop(db);
    let (db, ks) = open_with(
        dir.path(),
        common::manual_compaction_options(),
        Some(append()),
    );
    check(&db, ks);
}

/// A stack the function refuses fails every read (point, batched, cursor)
/// until the key is written again; a resolve at the limit and compaction
/// keep the failure.
#[test]
fn a_refused_stack_fails_reads_until_the_key_is_written() {
    let (_dir, db, ks) = fresh(Some(append_refusing_x()));
    db.set_merge_stack_limit(ks, 2).unwrap();
    put_base(&db, ks, b"k");
    db.merge(ks, b"k", b"a", &w()).unwrap();
    db.merge(ks, b"k", b"x", &w()).unwrap();
    let failed = |db: &Db| {
        matches!(
            db.get_copied(ks, b"k"),
            Err(Error::MergeFailed {
                no_function: false,
                ..
            })
        )
    };
    assert!(failed(&db));
    let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
    cursor.seek_to_first();
    assert!(!cursor.valid() && cursor.status().is_err());
    db.merge(ks, b"k", b"b", &w()).unwrap();
    assert!(failed(&db));
    db.merge(ks, b"k", b"c", &w()).unwrap();
    assert!(failed(&db));
    db.compact().unwrap();
    assert!(failed(&db));
    db.put(ks, b"k", b"new:", &w()).unwrap();
    db.merge(ks, b"k", b"y", &w()).unwrap();
    assert_eq!(get(&db, ks, b"k").as_deref(), Some(&b"new:y"[..]));
}

/// Stacks under small segments: a merge after a rotation resolves (a stack
/// never crosses segments), and every value survives compaction and
/// reopens.
#[test]
fn stacks_survive_rotation_compaction_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let options = || Options {
        segment_bytes: 64 << 10,
        background_compaction: true,
        ..Options::default()
    };
    let mut expected: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = Default::default();
    for life in 0..3u32 {
        let (db, ks) = open_with(dir.path(), options(), Some(append()));
        db.set_merge_stack_limit(ks, 8).unwrap();
        for i in 0..3_000u32 {
            let key = format!("key{:03}", (i * 7 + life) % 97).into_bytes();
            let operand = format!("<{life}.{i}>").into_bytes();
            db.merge(ks, &key, &operand, &w()).unwrap();
            expected.entry(key).or_default().extend_from_slice(&operand);
        }
        let scanned: std::collections::BTreeMap<_, _> =
            common::scan_all(&db, ks).into_iter().collect();
        assert_eq!(scanned, expected);
        db.compact().unwrap();
        for (k, v) in &expected {
            assert_eq!(get(&db, ks, k).as_ref(), Some(v));
        }
    }
    let (db, ks) = open_with(dir.path(), options(), Some(append()));
    let scanned: std::collections::BTreeMap<_, _> = common::scan_all(&db, ks).into_iter().collect();
    assert_eq!(scanned, expected);
    db.verify().unwrap();
}

/// Counts the calls of an appending merge function; `merge` alone is
/// never called (the engine folds with `merge_many`).
struct Counted(Arc<std::sync::atomic::AtomicUsize>);

impl MergeFunction for Counted {
    fn merge(&self, _: &[u8], _: Option<&[u8]>, _: &[u8]) -> Option<Vec<u8>> {
        unreachable!("the engine folds with merge_many")
    }

    fn merge_many(&self, _: &[u8], old: Option<&[u8]>, operands: &[&[u8]]) -> Option<Vec<u8>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some([old.unwrap_or_default(), &operands.concat()].concat())
    }
}

/// A stack folds with one call of the function: when the limit makes the
/// writer resolve it, and on each read, over at most the limit's operands.
#[test]
fn a_stack_folds_in_one_call() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls_now = || calls.load(std::sync::atomic::Ordering::Relaxed);
    let (_dir, db, ks) = fresh(Some(Arc::new(Counted(calls.clone()))));
    put_base(&db, ks, b"n");
    for _ in 0..100 {
        db.merge(ks, b"n", b"+", &w()).unwrap();
    }
    assert_eq!(calls_now(), 3, "100 merges, limit 32: three resolves");
    assert_eq!(get(&db, ks, b"n"), on_base(&[b'+'; 100]));
    assert_eq!(calls_now(), 4);
}

/// A small value (a counter) resolves at every merge, as cheap as a copy,
/// so a read of it reads one record and calls nothing.
#[test]
fn a_small_value_resolves_at_every_merge() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls_now = || calls.load(std::sync::atomic::Ordering::Relaxed);
    let (_dir, db, ks) = fresh(Some(Arc::new(Counted(calls.clone()))));
    for _ in 0..100 {
        db.merge(ks, b"n", b"+", &w()).unwrap();
    }
    assert_eq!(calls_now(), 100);
    assert_eq!(get(&db, ks, b"n"), Some(vec![b'+'; 100]));
    assert_eq!(calls_now(), 100);
}

/// Rewrites the stack depth of the last record of `key` in `segment`
/// (a single-record batch, as a lone merge writes) to `depth`, with its
/// record and frame checksums made good again: damage only the stack rules
/// can see.
fn set_depth_of_last(segment: &std::path::Path, key: &[u8], depth: u16) -> u64 {
    use alexdb_engine::format::frame::FRAME_HEADER_BYTES;
    use alexdb_engine::format::record::RECORD_HEADER_BYTES;
    let mut bytes = std::fs::read(segment).unwrap();
    let key_at = bytes
        .windows(key.len())
        .rposition(|w| w == key)
        .expect("the key is in the segment");
    let record = key_at - RECORD_HEADER_BYTES;
    let u32_at =
        |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    bytes[record + 6..record + 8].copy_from_slice(&depth.to_le_bytes());
    let covered = RECORD_HEADER_BYTES + u32_at(&bytes, record + 12) + u32_at(&bytes, record + 16);
    let crc = crc32c::crc32c(&bytes[record + 4..record + covered]);
    bytes[record..record + 4].copy_from_slice(&crc.to_le_bytes());
    let frame = record - FRAME_HEADER_BYTES;
    let body = u32_at(&bytes, frame + 8);
    let body_crc = crc32c::crc32c(&bytes[record..record + body]);
    bytes[frame + 16..frame + 20].copy_from_slice(&body_crc.to_le_bytes());
    let header_crc = crc32c::crc32c(&bytes[frame..frame + 20]);
    bytes[frame + 20..frame + 24].copy_from_slice(&header_crc.to_le_bytes());
    std::fs::write(segment, bytes).unwrap();
    record as u64
}

/// A stack whose depths do not step down is corruption naming the file
/// and the offset of the record read, not a wrong value.
#[test]
fn a_broken_stack_is_corruption_naming_its_top() {
    let (dir, db, ks) = fresh(Some(append()));
    put_base(&db, ks, b"stacked-key");
    for operand in [b"a", b"b", b"c"] {
        db.merge(ks, b"stacked-key", operand, &w()).unwrap();
    }
    drop(db);
    let segment = common::segment_files(dir.path()).pop().unwrap();
    let top = set_depth_of_last(&segment, b"stacked-key", 5);
    let (db, ks) = open_with(
        dir.path(),
        common::manual_compaction_options(),
        Some(append()),
    );
    match db.get_copied(ks, b"stacked-key") {
        Err(Error::Corruption {
            file,
            offset,
            reason,
        }) => {
            assert_eq!((file, offset), (segment.clone(), top), "{reason}");
            assert!(reason.contains("depths do not step down"), "{reason}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    // `verify` walks every stack's steps, not only the checksums (the
    // damaged record's checksum was rewritten to match).
    match db.verify() {
        Err(Error::Corruption { file, offset, .. }) => assert_eq!((file, offset), (segment, top)),
        other => panic!("verify: expected corruption, got {other:?}"),
    }
}

/// `verify` passes a database whose stacks are whole: operands over a
/// base, over nothing, and stacks cut by a resolved merge.
#[test]
fn verify_passes_whole_stacks() {
    let (_dir, db, ks) = fresh(Some(append()));
    put_base(&db, ks, b"over-base");
    for i in 0..40u32 {
        db.merge(ks, b"over-base", &i.to_be_bytes(), &w()).unwrap();
        db.merge(ks, b"over-none", &[i as u8; STACKED], &w())
            .unwrap();
    }
    db.verify().unwrap();
}
