//! Secondary instances and read-only handles: they open beside a primary
//! (no lock), refuse writes with RocksDB's messages, name a subset of the
//! column families, and a secondary catches up with the primary's writes,
//! column family changes and compactions.

use alexdb as rocksdb;

use rocksdb::{ColumnFamilyDescriptor, DB, ErrorKind, Options, WriteBatch};

fn fresh() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let secondary = dir.path().join("secondary");
    (dir, path, secondary)
}

fn primary_with_cfs(path: &std::path::Path, cfs: &[&str]) -> DB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    DB::open_cf(&opts, path, cfs).unwrap()
}

#[test]
fn a_secondary_reads_beside_the_primary_and_catches_up() {
    let (_dir, path, secondary_path) = fresh();
    let primary = DB::open_default(&path).unwrap();
    primary.put(b"a", b"1").unwrap();
    let secondary = DB::open_as_secondary(&Options::default(), &path, &secondary_path).unwrap();
    assert!(secondary_path.is_dir());
    assert_eq!(secondary.get(b"a").unwrap(), Some(b"1".to_vec()));

    let mut batch = WriteBatch::default();
    batch.put(b"a", b"2");
    batch.put(b"b", b"2");
    batch.delete(b"c");
    primary.write(batch).unwrap();
    assert_eq!(secondary.get(b"a").unwrap(), Some(b"1".to_vec()));
    let snapshot = secondary.snapshot();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get(b"a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(secondary.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(snapshot.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(snapshot.get(b"b").unwrap(), None);
    assert_eq!(
        secondary.latest_sequence_number(),
        primary.latest_sequence_number()
    );
}

#[test]
fn writes_to_a_secondary_fail_with_rocksdbs_message() {
    let (_dir, path, secondary_path) = fresh();
    let _primary = DB::open_default(&path).unwrap();
    let secondary = DB::open_as_secondary(&Options::default(), &path, &secondary_path).unwrap();
    for err in [
        secondary.put(b"k", b"v").unwrap_err(),
        secondary.delete(b"k").unwrap_err(),
        secondary.write(WriteBatch::default()).unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::NotSupported);
        assert_eq!(
            err.to_string(),
            "Not implemented: Not supported operation in secondary mode."
        );
    }
    assert_eq!(
        secondary.flush().unwrap_err().kind(),
        ErrorKind::NotSupported
    );
}

#[test]
fn catch_up_is_only_for_secondaries() {
    let (_dir, path, _secondary) = fresh();
    let primary = DB::open_default(&path).unwrap();
    let err = primary.try_catch_up_with_primary().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Not implemented: Supported only by secondary instance"
    );
    let reader = DB::open_for_read_only(&Options::default(), &path, false).unwrap();
    let err = reader.try_catch_up_with_primary().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
}

#[test]
fn a_read_only_handle_opens_while_the_primary_holds_the_lock() {
    let (_dir, path, _secondary) = fresh();
    let primary = DB::open_default(&path).unwrap();
    primary.put(b"k", b"v").unwrap();
    let reader = DB::open_for_read_only(&Options::default(), &path, false).unwrap();
    assert_eq!(reader.get(b"k").unwrap(), Some(b"v".to_vec()));
    let err = reader.put(b"k", b"w").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Not implemented: Not supported operation in read only mode."
    );
    primary.put(b"k", b"w").unwrap();
    assert_eq!(reader.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn error_if_log_file_exist_refuses_writes_no_clean_close_recorded() {
    let (_dir, path, _secondary) = fresh();
    let primary = DB::open_default(&path).unwrap();
    // Nothing written since the open recorded its end.
    drop(DB::open_for_read_only(&Options::default(), &path, true).unwrap());
    primary.put(b"k", b"v").unwrap();
    let err = DB::open_for_read_only(&Options::default(), &path, true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(
        err.to_string().contains("error_if_wal_file_exists"),
        "{err}"
    );
    drop(DB::open_for_read_only(&Options::default(), &path, false).unwrap());
    drop(primary);
    let reader = DB::open_for_read_only(&Options::default(), &path, true).unwrap();
    assert_eq!(reader.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_secondary_may_name_a_subset_of_the_column_families() {
    let (_dir, path, secondary_path) = fresh();
    let primary = primary_with_cfs(&path, &["cf1", "cf2"]);
    let cf1 = primary.cf_handle("cf1").unwrap();
    primary.put_cf(&cf1, b"k1", b"v1").unwrap();
    let cfs = [ColumnFamilyDescriptor::new("cf1", Options::default())];
    let secondary =
        DB::open_cf_descriptors_as_secondary(&Options::default(), &path, &secondary_path, cfs)
            .unwrap();
    let s1 = secondary.cf_handle("cf1").unwrap();
    assert!(secondary.cf_handle("cf2").is_none());
    assert_eq!(secondary.get_cf(&s1, b"k1").unwrap(), Some(b"v1".to_vec()));
    let err = secondary.put_cf(&s1, b"k2", b"v2").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);

    // A column family created after the secondary opened gets no handle.
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut primary = primary;
    primary.create_cf("cf3", &Options::default()).unwrap();
    let cf1 = primary.cf_handle("cf1").unwrap();
    primary.put_cf(&cf1, b"k1", b"v2").unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert!(secondary.cf_handle("cf3").is_none());
    assert_eq!(secondary.get_cf(&s1, b"k1").unwrap(), Some(b"v2".to_vec()));
    // A read-only handle may name a subset too; an unknown one is refused.
    let reader = DB::open_cf_for_read_only(&Options::default(), &path, ["cf2"], false).unwrap();
    assert!(reader.cf_handle("cf2").is_some());
    let err = DB::open_cf_for_read_only(&Options::default(), &path, ["nope"], false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: Column family not found: nope"
    );
}

#[test]
fn a_secondary_catches_up_across_a_compaction() {
    let (_dir, path, secondary_path) = fresh();
    let primary = DB::open_default(&path).unwrap();
    for i in 0..3000u32 {
        primary.put(format!("k{i:05}"), format!("old{i}")).unwrap();
    }
    let secondary = DB::open_as_secondary(&Options::default(), &path, &secondary_path).unwrap();
    let mut iter = secondary.raw_iterator();
    iter.seek(b"k00010");
    for i in 0..3000u32 {
        primary.put(format!("k{i:05}"), format!("new{i}")).unwrap();
    }
    primary.compact_range(None::<&[u8]>, None::<&[u8]>);
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get(b"k00010").unwrap(), Some(b"new10".to_vec()));
    let all: Vec<_> = secondary
        .iterator(rocksdb::IteratorMode::Start)
        .map(Result::unwrap)
        .collect();
    assert_eq!(all.len(), 3000);
    assert!(all.iter().all(|(_, v)| v.starts_with(b"new")));
    // The iterator made before the catch-up keeps its view.
    assert_eq!(iter.value(), Some(&b"old10"[..]));
    iter.next();
    assert_eq!(iter.value(), Some(&b"old11"[..]));
}

#[test]
fn a_missing_database_is_an_io_error_and_is_not_created() {
    let (_dir, path, secondary_path) = fresh();
    let err = DB::open_as_secondary(&Options::default(), &path, &secondary_path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError);
    let err = DB::open_for_read_only(&Options::default(), &path, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError);
    assert!(!path.exists());
}
