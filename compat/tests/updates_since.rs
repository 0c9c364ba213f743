//! `get_updates_since`: the logged write batches after a sequence number,
//! in every column family, checked against what was written.

mod common;

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::{ErrorKind, WriteBatch, WriteBatchIteratorCf};

#[derive(Default, Debug, PartialEq)]
struct Ops(Vec<(u32, Vec<u8>, Option<Vec<u8>>)>);

impl WriteBatchIteratorCf for Ops {
    fn put_cf(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.0.push((cf, key.to_vec(), Some(value.to_vec())));
    }
    fn delete_cf(&mut self, cf: u32, key: &[u8]) {
        self.0.push((cf, key.to_vec(), None));
    }
    fn merge_cf(&mut self, _cf: u32, _key: &[u8], _value: &[u8]) {
        unreachable!("no merges were written");
    }
}

#[test]
fn batches_come_back_with_their_first_sequence_number() {
    let (_dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    db.put(b"a", b"1").unwrap();
    let mut batch = WriteBatch::default();
    batch.put_cf(&cf, b"b", b"2");
    batch.delete(b"a");
    db.write(batch).unwrap();
    db.delete_cf(&cf, b"b").unwrap();

    let got: Vec<(u64, Ops)> = db
        .get_updates_since(0)
        .unwrap()
        .map(|item| {
            let (seq, batch) = item.unwrap();
            let mut ops = Ops::default();
            batch.iterate_cf(&mut ops);
            (seq, ops)
        })
        .collect();
    let cf_id = 1;
    assert_eq!(
        got,
        [
            (1, Ops(vec![(0, b"a".to_vec(), Some(b"1".to_vec()))])),
            (
                2,
                Ops(vec![
                    (cf_id, b"b".to_vec(), Some(b"2".to_vec())),
                    (0, b"a".to_vec(), None)
                ])
            ),
            (4, Ops(vec![(cf_id, b"b".to_vec(), None)])),
        ]
    );
    let after_two: Vec<u64> = db
        .get_updates_since(2)
        .unwrap()
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(
        after_two,
        [4],
        "a batch that started at or before 2 is skipped"
    );
}

#[test]
fn a_sequence_number_not_yet_written_is_not_found() {
    let (_dir, db) = open_with_cf();
    db.put(b"a", b"1").unwrap();
    assert!(db.get_updates_since(1).unwrap().next().is_none());
    let err = db.get_updates_since(2).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn history_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = rocksdb::DB::open_default(dir.path()).unwrap();
        db.put(b"a", b"1").unwrap();
    }
    let db = rocksdb::DB::open_default(dir.path()).unwrap();
    db.put(b"b", b"2").unwrap();
    let seqs: Vec<u64> = db
        .get_updates_since(0)
        .unwrap()
        .map(|item| item.unwrap().0)
        .collect();
    assert_eq!(seqs, [1, 2]);
}

#[test]
fn log_data_comes_back_in_its_batch_and_takes_no_sequence_number() {
    let (_dir, db) = open_with_cf();
    let mut batch = WriteBatch::default();
    batch.put(b"k", b"v");
    batch.put_log_data(b"blob-one");
    batch.put(b"l", b"w");
    let written = batch.data().to_vec();
    db.write(batch).unwrap();
    assert_eq!(db.latest_sequence_number(), 2);
    let mut alone = WriteBatch::default();
    alone.put_log_data(b"blob-two");
    assert_eq!(alone.len(), 0);
    db.write(alone).unwrap();
    assert_eq!(db.latest_sequence_number(), 2);
    assert_eq!(db.get(b"").unwrap(), None);

    let got: Vec<(u64, WriteBatch)> = db
        .get_updates_since(0)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, 1);
    assert_eq!(got[0].1.len(), 2);
    // The same records in the same order as written (the header's
    // sequence number aside).
    assert_eq!(got[0].1.data()[12..], written[12..]);
    assert_eq!((got[1].0, got[1].1.len()), (3, 0));
    assert!(got[1].1.data().windows(8).any(|w| w == b"blob-two"));
}
