//! `SstFileWriter` and `ingest_external_file*`: ordered writes, atomic
//! ingestion into a column family, damaged files refused whole.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{ErrorKind, IngestExternalFileOptions, Options, SstFileWriter};

fn write_file(path: &std::path::Path, fill: impl FnOnce(&mut SstFileWriter)) {
    let opts = Options::default();
    let mut writer = SstFileWriter::create(&opts);
    writer.open(path).unwrap();
    fill(&mut writer);
    writer.finish().unwrap();
    assert!(writer.file_size() > 0);
}

#[test]
fn ingested_entries_override_the_database() {
    let (dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put_cf(&cf, b"a", b"old").unwrap();
    db.put_cf(&cf, b"c", b"old").unwrap();
    db.put_cf(&cf, b"m", b"old").unwrap();
    let path = dir.path().join("ext");
    write_file(&path, |w| {
        w.put(b"a", b"new").unwrap();
        w.delete(b"c").unwrap();
        w.put(b"k", b"kept").unwrap();
        w.delete_range(b"j", b"z").unwrap();
    });
    db.ingest_external_file_cf(&cf, vec![&path]).unwrap();
    assert_eq!(db.get_cf(&cf, b"a").unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get_cf(&cf, b"c").unwrap(), None);
    assert_eq!(
        db.get_cf(&cf, b"m").unwrap(),
        None,
        "the range delete applies"
    );
    assert_eq!(
        db.get_cf(&cf, b"k").unwrap(),
        Some(b"kept".to_vec()),
        "a file's range delete does not delete the file's own keys"
    );
    assert_eq!(
        db.get(b"a").unwrap(),
        None,
        "only the named column family changes"
    );
}

#[test]
fn keys_out_of_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default();
    let mut writer = SstFileWriter::create(&opts);
    writer.open(dir.path().join("ext")).unwrap();
    writer.put(b"b", b"1").unwrap();
    for key in [&b"a"[..], b"b"] {
        let err = writer.put(key, b"2").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
    let err = writer.delete_range(b"z", b"a").unwrap_err();
    assert!(err.to_string().starts_with("Invalid argument"));
}

#[test]
fn a_damaged_file_ingests_nothing() {
    let (dir, db) = open_with_cf();
    let good = dir.path().join("good");
    let bad = dir.path().join("bad");
    write_file(&good, |w| w.put(b"g", b"1").unwrap());
    write_file(&bad, |w| w.put(b"h", b"1").unwrap());
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&bad, bytes).unwrap();
    let err = db.ingest_external_file(vec![&good, &bad]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert_eq!(db.get(b"g").unwrap(), None);
}

#[test]
fn move_files_removes_the_source() {
    let (dir, db) = open_with_cf();
    let path = dir.path().join("ext");
    write_file(&path, |w| w.put(b"k", b"v").unwrap());
    let mut opts = IngestExternalFileOptions::default();
    opts.set_move_files(true);
    db.ingest_external_file_opts(&opts, vec![&path]).unwrap();
    assert!(!path.exists());
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}
