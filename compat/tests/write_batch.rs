//! `WriteBatch`: counting, the exact RocksDB byte format, round trips
//! through `data()`/`from_data()`, and the order and limits of `iterate`.

// Written against the rocksdb API, as users of the drop-in write it.
use alexdb as rocksdb;

use rocksdb::{AsColumnFamilyRef, WriteBatch, WriteBatchIterator, WriteBatchIteratorCf};

/// A stand-in for a column family handle of an open database.
struct Cf(u32);

impl AsColumnFamilyRef for Cf {
    fn cf_id(&self) -> u32 {
        self.0
    }

    fn cf_name(&self) -> &str {
        "test"
    }
}

/// Records the callbacks of `iterate` and `iterate_cf` as text.
#[derive(Default)]
struct Recorder(Vec<String>);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl WriteBatchIterator for Recorder {
    fn put(&mut self, key: &[u8], value: &[u8]) {
        self.0.push(format!("put {}={}", text(key), text(value)));
    }

    fn delete(&mut self, key: &[u8]) {
        self.0.push(format!("delete {}", text(key)));
    }
}

impl WriteBatchIteratorCf for Recorder {
    fn put_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]) {
        self.0
            .push(format!("put {cf_id}:{}={}", text(key), text(value)));
    }

    fn delete_cf(&mut self, cf_id: u32, key: &[u8]) {
        self.0.push(format!("delete {cf_id}:{}", text(key)));
    }

    fn merge_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]) {
        self.0
            .push(format!("merge {cf_id}:{}={}", text(key), text(value)));
    }
}

#[test]
fn empty_batch_is_a_bare_header() {
    let batch = WriteBatch::default();
    assert!(batch.is_empty());
    assert_eq!(batch.len(), 0);
    assert_eq!(batch.data(), [0u8; 12]);
    assert_eq!(batch.size_in_bytes(), 12);
    assert_eq!(WriteBatch::with_capacity_bytes(1024).data(), [0u8; 12]);
}

#[test]
fn len_counts_writes_and_clear_empties() {
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.delete(b"b");
    batch.merge(b"c", b"2");
    batch.delete_range(b"d", b"e");
    batch.put_log_data(b"not counted");
    assert_eq!(batch.len(), 4);
    assert!(!batch.is_empty());
    batch.clear();
    assert!(batch.is_empty());
    assert_eq!(batch.data(), [0u8; 12]);
}

#[test]
fn rep_bytes_match_rocksdb_format() {
    let cf = Cf(2);
    let mut batch = WriteBatch::default();
    batch.put(b"k1", b"v1");
    batch.delete(b"k2");
    batch.merge(b"k3", b"v");
    batch.delete_range(b"a", b"b");
    batch.put_cf(&cf, b"x", b"y");
    batch.delete_cf(&cf, b"z");
    batch.merge_cf(&cf, b"m", b"n");
    batch.delete_range_cf(&cf, b"c", b"d");
    batch.put_log_data(b"L");

    #[rustfmt::skip]
    let expected: &[u8] = &[
        0, 0, 0, 0, 0, 0, 0, 0, // sequence, u64 LE
        8, 0, 0, 0,             // count, u32 LE
        0x01, 2, b'k', b'1', 2, b'v', b'1', // kTypeValue
        0x00, 2, b'k', b'2',                // kTypeDeletion
        0x02, 2, b'k', b'3', 1, b'v',       // kTypeMerge
        0x0F, 1, b'a', 1, b'b',             // kTypeRangeDeletion
        0x05, 2, 1, b'x', 1, b'y',          // kTypeColumnFamilyValue, cf 2
        0x04, 2, 1, b'z',                   // kTypeColumnFamilyDeletion
        0x06, 2, 1, b'm', 1, b'n',          // kTypeColumnFamilyMerge
        0x0E, 2, 1, b'c', 1, b'd',          // kTypeColumnFamilyRangeDeletion
        0x03, 1, b'L',                      // kTypeLogData, not counted
    ];
    assert_eq!(batch.data(), expected);
    assert_eq!(batch.size_in_bytes(), expected.len());
}

#[test]
fn default_column_family_uses_plain_tags() {
    let mut via_cf = WriteBatch::default();
    via_cf.put_cf(&Cf(0), b"k", b"v");
    via_cf.delete_cf(&Cf(0), b"k");
    let mut plain = WriteBatch::default();
    plain.put(b"k", b"v");
    plain.delete(b"k");
    assert_eq!(via_cf.data(), plain.data());
}

#[test]
fn long_operands_use_multi_byte_varints() {
    let value = vec![7u8; 300];
    let mut batch = WriteBatch::default();
    batch.put(b"k", &value);
    assert_eq!(&batch.data()[12..17], [0x01, 1, b'k', 0xAC, 0x02]);
    assert_eq!(batch.size_in_bytes(), 12 + 5 + 300);
}

#[test]
fn data_round_trips_through_from_data() {
    let mut batch = WriteBatch::default();
    batch.put(b"k1", b"v1");
    batch.delete(b"k2");
    batch.put_cf(&Cf(5), b"k3", b"v3");
    let copy = WriteBatch::from_data(batch.data());
    assert_eq!(copy.data(), batch.data());
    assert_eq!(copy.len(), 3);

    let mut seen = Recorder::default();
    copy.iterate_cf(&mut seen);
    assert_eq!(seen.0, ["put 0:k1=v1", "delete 0:k2", "put 5:k3=v3"]);
}

#[test]
fn from_data_reads_a_rocksdb_batch_with_a_sequence_number() {
    #[rustfmt::skip]
    let bytes: &[u8] = &[
        42, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0,
        0x01, 1, b'a', 1, b'b',
    ];
    let batch = WriteBatch::from_data(bytes);
    assert_eq!(batch.len(), 1);
    let mut seen = Recorder::default();
    batch.iterate(&mut seen);
    assert_eq!(seen.0, ["put a=b"]);
}

#[test]
fn iterate_reports_default_puts_and_deletes_in_order() {
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.merge(b"m", b"skipped");
    batch.delete(b"b");
    batch.put_log_data(b"skipped");
    batch.put(b"c", b"3");
    let mut seen = Recorder::default();
    batch.iterate(&mut seen);
    assert_eq!(seen.0, ["put a=1", "delete b", "put c=3"]);
}

#[test]
fn iterate_stops_at_other_column_families_and_range_deletes() {
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.put_cf(&Cf(1), b"b", b"2");
    batch.put(b"c", b"3");
    let mut seen = Recorder::default();
    batch.iterate(&mut seen);
    assert_eq!(seen.0, ["put a=1"]);

    let mut batch = WriteBatch::default();
    batch.delete(b"a");
    batch.delete_range(b"b", b"c");
    batch.delete(b"d");
    let mut seen = Recorder::default();
    batch.iterate(&mut seen);
    assert_eq!(seen.0, ["delete a"]);
}

#[test]
fn iterate_cf_reports_merges_and_stops_at_range_deletes() {
    let mut batch = WriteBatch::default();
    batch.merge(b"a", b"1");
    batch.merge_cf(&Cf(3), b"b", b"2");
    batch.delete_cf(&Cf(3), b"c");
    batch.delete_range_cf(&Cf(3), b"d", b"e");
    batch.put(b"f", b"4");
    let mut seen = Recorder::default();
    batch.iterate_cf(&mut seen);
    assert_eq!(seen.0, ["merge 0:a=1", "merge 3:b=2", "delete 3:c"]);
}

#[test]
fn malformed_data_is_kept_and_iterates_to_nothing() {
    let batch = WriteBatch::from_data(b"short");
    assert_eq!(batch.data(), b"short");
    assert_eq!(batch.len(), 0);
    let mut seen = Recorder::default();
    batch.iterate(&mut seen);
    assert!(seen.0.is_empty());
}

#[test]
fn timestamped_keys_carry_the_timestamp_suffix() {
    let mut batch = WriteBatch::default();
    batch.put_cf_with_ts(&Cf(1), b"k", b"TS", b"v");
    assert_eq!(&batch.data()[12..], [0x05, 1, 3, b'k', b'T', b'S', 1, b'v']);
}
