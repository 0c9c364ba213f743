//! Compaction filters: `compact_range` applies each column family's filter
//! to its live entries; factories are refused rather than ignored.

use std::ffi::CStr;

use alexdb as rocksdb;

use rocksdb::compaction_filter::CompactionFilter;
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{ColumnFamilyDescriptor, CompactionDecision, DB, ErrorKind, Options};

fn drop_underscored(_level: u32, key: &[u8], _value: &[u8]) -> CompactionDecision {
    match key.first() {
        Some(b'_') => CompactionDecision::Remove,
        Some(b'%') => CompactionDecision::Change(b"changed"),
        _ => CompactionDecision::Keep,
    }
}

#[test]
fn compact_range_applies_the_filter_of_each_column_family() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let mut filtered = Options::default();
    filtered.set_compaction_filter("drop", drop_underscored);
    let cfs = vec![ColumnFamilyDescriptor::new("filtered", filtered)];
    let db = DB::open_cf_descriptors(&opts, dir.path(), cfs).unwrap();
    let cf = db.cf_handle("filtered").unwrap();
    for key in [&b"_a"[..], b"%b", b"c"] {
        db.put_cf(&cf, key, b"v").unwrap();
        db.put(key, b"v").unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get_cf(&cf, b"_a").unwrap(), None);
    assert_eq!(db.get_cf(&cf, b"%b").unwrap(), Some(b"changed".to_vec()));
    assert_eq!(db.get_cf(&cf, b"c").unwrap(), Some(b"v".to_vec()));
    assert_eq!(
        db.get(b"_a").unwrap(),
        Some(b"v".to_vec()),
        "default has no filter"
    );
}

struct KeepAll;

impl CompactionFilter for KeepAll {
    fn filter(&mut self, _level: u32, _key: &[u8], _value: &[u8]) -> CompactionDecision {
        CompactionDecision::Keep
    }
    fn name(&self) -> &CStr {
        c"keep-all"
    }
}

struct KeepAllFactory;

impl CompactionFilterFactory for KeepAllFactory {
    type Filter = KeepAll;
    fn create(&mut self, _context: CompactionFilterContext) -> KeepAll {
        KeepAll
    }
    fn name(&self) -> &CStr {
        c"keep-all-factory"
    }
}

#[test]
fn a_compaction_filter_factory_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compaction_filter_factory(KeepAllFactory);
    let err = DB::open(&opts, dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert!(err.to_string().contains("keep-all-factory"));
}
