//! Merge operators through the rocksdb API: `merge`, `merge_cf`, merges in
//! write batches, every read path, snapshots, compaction and reopen, and
//! RocksDB's errors for a refused operand and for a missing operator.

use alexdb::{
    ColumnFamilyDescriptor, DB, Direction, ErrorKind, IteratorMode, MergeOperands, Options,
    WriteBatch,
};

/// A merge function of these tests.
type MergeFunction = fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>>;

fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.unwrap_or_default().to_vec();
    for op in operands {
        out.extend_from_slice(op);
    }
    Some(out)
}

fn add(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut sum = existing.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
    for op in operands {
        sum += u64::from_le_bytes(op.try_into().ok()?);
    }
    Some(sum.to_le_bytes().to_vec())
}

fn options_with(name: &str, f: MergeFunction) -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_merge_operator_associative(name, f);
    opts
}

#[test]
fn merges_concatenate_over_puts_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options_with("concat", concat), dir.path()).unwrap();
    db.put(b"k", b"a").unwrap();
    db.merge(b"k", b"b").unwrap();
    db.merge(b"k", b"c").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abc"[..]));
    assert_eq!(&*db.get_pinned(b"k").unwrap().unwrap(), b"abc");
    db.delete(b"k").unwrap();
    db.merge(b"k", b"z").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"z"[..]));
    db.merge(b"new", b"1").unwrap();
    let got: Vec<_> = db
        .multi_get([&b"k"[..], b"new", b"none"])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, vec![Some(b"z".to_vec()), Some(b"1".to_vec()), None]);
    assert_eq!(db.latest_sequence_number(), 6);
}

#[test]
fn batches_merge_in_order_and_iterators_see_results_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options_with("concat", concat), dir.path()).unwrap();
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.merge(b"a", b"2");
    batch.merge(b"b", b"x");
    batch.delete(b"b");
    batch.merge(b"b", b"y");
    batch.merge(b"c", b"3");
    db.write(batch).unwrap();
    let forward: Vec<_> = db
        .iterator(IteratorMode::Start)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(
        forward,
        vec![
            (b"a".to_vec(), b"12".to_vec()),
            (b"b".to_vec(), b"y".to_vec()),
            (b"c".to_vec(), b"3".to_vec()),
        ]
    );
    let reverse: Vec<_> = db
        .iterator(IteratorMode::From(b"b", Direction::Reverse))
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    assert_eq!(reverse, vec![b"b".to_vec(), b"a".to_vec()]);
}

#[test]
fn snapshots_see_the_merge_state_they_were_taken_at() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options_with("add", add), dir.path()).unwrap();
    db.merge(b"n", 5u64.to_le_bytes()).unwrap();
    let snap = db.snapshot();
    db.merge(b"n", 7u64.to_le_bytes()).unwrap();
    assert_eq!(snap.get(b"n").unwrap(), Some(5u64.to_le_bytes().to_vec()));
    assert_eq!(db.get(b"n").unwrap(), Some(12u64.to_le_bytes().to_vec()));
}

#[test]
fn merged_values_survive_compaction_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options_with("add", add);
    {
        let db = DB::open(&opts, dir.path()).unwrap();
        for i in 0..3000u64 {
            db.merge((i % 30).to_be_bytes(), 1u64.to_le_bytes())
                .unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        assert_eq!(
            db.get(7u64.to_be_bytes()).unwrap(),
            Some(100u64.to_le_bytes().to_vec())
        );
    }
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(db.iterator(IteratorMode::Start).count(), 30);
    db.merge(7u64.to_be_bytes(), 1u64.to_le_bytes()).unwrap();
    assert_eq!(
        db.get(7u64.to_be_bytes()).unwrap(),
        Some(101u64.to_le_bytes().to_vec())
    );
}

#[test]
fn each_column_family_merges_with_its_own_operator() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options_with("concat", concat);
    // As in RocksDB, a family left out of the descriptors ("default" here
    // too) gets `Options::default()`, without a merge operator.
    let cfs = vec![
        ColumnFamilyDescriptor::new("default", options_with("concat", concat)),
        ColumnFamilyDescriptor::new("sums", options_with("add", add)),
        ColumnFamilyDescriptor::new("plain", Options::default()),
    ];
    let db = DB::open_cf_descriptors(&opts, dir.path(), cfs).unwrap();
    let sums = db.cf_handle("sums").unwrap();
    db.merge_cf(&sums, b"k", 2u64.to_le_bytes()).unwrap();
    db.merge_cf(&sums, b"k", 3u64.to_le_bytes()).unwrap();
    assert_eq!(
        db.get_cf(&sums, b"k").unwrap(),
        Some(5u64.to_le_bytes().to_vec())
    );
    db.merge(b"k", b"x").unwrap();
    db.merge(b"k", b"y").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"xy"[..]));

    let plain = db.cf_handle("plain").unwrap();
    let err = db.merge_cf(&plain, b"k", b"v").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert_eq!(
        err.to_string(),
        "Not implemented: Provide a merge_operator when opening DB"
    );
    let mut batch = WriteBatch::default();
    batch.put_cf(&plain, b"before", b"v");
    batch.merge_cf(&plain, b"k", b"v");
    let err = db.write(batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.get_cf(&plain, b"before").unwrap(), None);
}

#[test]
fn a_refused_operand_fails_reads_with_rocksdbs_error_until_rewritten() {
    fn refuse(_: &[u8], _: Option<&[u8]>, _: &MergeOperands) -> Option<Vec<u8>> {
        None
    }
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options_with("refuse", refuse), dir.path()).unwrap();
    db.put(b"key", b"value").unwrap();
    db.merge(b"key", b"operand").unwrap();
    let err = db.get(b"key").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert_eq!(err.to_string(), "Corruption: Merge operator failed");
    let mut iter = db.iterator(IteratorMode::Start);
    assert!(iter.next().unwrap().is_err());
    db.put(b"key", b"again").unwrap();
    assert_eq!(db.get(b"key").unwrap().as_deref(), Some(&b"again"[..]));
}

/// A base value long enough for merges over it to stack.
const BASE: &str = "________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________________";

#[test]
fn a_family_reopened_without_its_merge_operator_stops_no_compaction() {
    const KEYS: u32 = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let families = |log: Options| {
        vec![
            ColumnFamilyDescriptor::new("default", Options::default()),
            ColumnFamilyDescriptor::new("log", log),
        ]
    };
    let opts = options_with("concat", concat);
    {
        let db =
            DB::open_cf_descriptors(&opts, dir.path(), families(options_with("concat", concat)))
                .unwrap();
        let log = db.cf_handle("log").unwrap();
        // Over a value this long, merges stack as operands.
        for key in 0..20u32 {
            db.put_cf(&log, format!("entry{key}"), BASE).unwrap();
        }
        for i in 0..2_000u32 {
            db.merge_cf(&log, format!("entry{}", i % 20), format!("{i},"))
                .unwrap();
        }
    }
    {
        // A tool that opens every family with default options.
        let db = DB::open_cf_descriptors(&opts, dir.path(), families(Options::default())).unwrap();
        for round in 0..5u8 {
            let mut batch = WriteBatch::default();
            for i in 0..KEYS {
                batch.put(i.to_be_bytes(), [round; 100]);
            }
            db.write(batch).unwrap();
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
        // The data the segments hold against the live data, both as the
        // database counts them (a file's length is no measure on Windows,
        // where the log segment keeps its whole capacity as its length).
        let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
        let held = int("rocksdb.total-sst-files-size");
        let live = int("rocksdb.estimate-live-data-size");
        let ratio = held as f64 / live as f64;
        assert!(ratio < 1.5, "the segments hold {ratio:.2}x the live data");
        let log = db.cf_handle("log").unwrap();
        let read = db.get_cf(&log, "entry0");
        assert!(read.is_err(), "no operator to fold with: {read:?}");
    }
    let db = DB::open_cf_descriptors(&opts, dir.path(), families(options_with("concat", concat)))
        .unwrap();
    let log = db.cf_handle("log").unwrap();
    for key in 0..20u32 {
        let merged: String = (0..2_000u32)
            .filter(|i| i % 20 == key)
            .map(|i| format!("{i},"))
            .collect();
        let expected = format!("{BASE}{merged}");
        let got = db.get_cf(&log, format!("entry{key}")).unwrap().unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), expected);
    }
    assert_eq!(db.get(5u32.to_be_bytes()).unwrap(), Some(vec![4u8; 100]));
}
