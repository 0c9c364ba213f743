//! The `RocksStorage`-style API: `i64` keys in numeric order, inclusive
//! ranges, atomic mixed batches, frozen snapshots, and reopening.

use alexdb::storage::{AlexStorage, Storage, StorageBatch, encode_key};

fn open() -> (tempfile::TempDir, AlexStorage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = AlexStorage::new(dir.path().join("store")).unwrap();
    (dir, storage)
}

fn keys(pairs: Vec<(i64, Vec<u8>)>) -> Vec<i64> {
    pairs.into_iter().map(|(k, _)| k).collect()
}

#[test]
fn point_queries_see_inserts_overwrites_and_deletes() {
    let (_dir, storage) = open();
    assert_eq!(storage.point_query(1).unwrap(), None);
    storage.insert(1, b"one").unwrap();
    storage.insert(1, b"uno").unwrap();
    assert_eq!(storage.point_query(1).unwrap(), Some(b"uno".to_vec()));
    assert!(storage.delete(1).unwrap());
    assert!(!storage.delete(1).unwrap());
    assert_eq!(storage.point_query(1).unwrap(), None);
    assert_eq!(storage.count().unwrap(), 0);
}

#[test]
fn ranges_are_inclusive_and_numeric_with_negatives_first() {
    let (_dir, storage) = open();
    let all = [i64::MIN, -300, -1, 0, 1, 255, 256, i64::MAX];
    storage
        .insert_batch(
            all.iter()
                .map(|&k| (k, k.to_string().into_bytes()))
                .collect(),
        )
        .unwrap();
    assert_eq!(keys(storage.scan_all().unwrap()), all);
    assert_eq!(
        keys(storage.range_query(-300, 1).unwrap()),
        [-300, -1, 0, 1]
    );
    assert_eq!(keys(storage.range_query(2, 255).unwrap()), [255]);
    assert_eq!(keys(storage.range_query(i64::MIN, i64::MAX).unwrap()), all);
    assert_eq!(
        keys(storage.range_query(256, i64::MAX).unwrap()),
        [256, i64::MAX]
    );
    assert!(storage.range_query(5, 4).unwrap().is_empty());
    let (key, value) = storage.range_query(-1, -1).unwrap().remove(0);
    assert_eq!((key, value), (-1, b"-1".to_vec()));
    assert_eq!(storage.count().unwrap(), all.len());
}

#[test]
fn insert_batch_keeps_the_last_value_of_a_repeated_key() {
    let (_dir, storage) = open();
    storage
        .insert_batch(vec![(5, b"a".to_vec()), (5, b"b".to_vec())])
        .unwrap();
    assert_eq!(storage.point_query(5).unwrap(), Some(b"b".to_vec()));
    assert_eq!(storage.count().unwrap(), 1);
}

#[test]
fn a_mixed_batch_applies_in_order_and_all_at_once() {
    let (_dir, storage) = open();
    storage.insert(1, b"old").unwrap();
    let mut batch = StorageBatch::new();
    batch.insert(2, b"two");
    batch.delete(1);
    batch.insert(3, b"three");
    batch.delete(3);
    batch.insert(-4, b"minus four");
    assert_eq!(batch.len(), 5);
    storage.write_batch(batch).unwrap();
    assert_eq!(keys(storage.scan_all().unwrap()), [-4, 2]);
}

#[test]
fn a_snapshot_is_frozen_at_its_creation() {
    let (_dir, storage) = open();
    storage.insert(1, b"a").unwrap();
    storage.insert(2, b"b").unwrap();
    let snapshot = storage.snapshot();
    storage.insert(1, b"changed").unwrap();
    storage.delete(2).unwrap();
    storage.insert(3, b"new").unwrap();
    assert_eq!(snapshot.point_query(1).unwrap(), Some(b"a".to_vec()));
    assert_eq!(snapshot.point_query(3).unwrap(), None);
    assert_eq!(keys(snapshot.scan_all().unwrap()), [1, 2]);
    assert_eq!(keys(snapshot.range_query(2, 3).unwrap()), [2]);
    assert_eq!(snapshot.count().unwrap(), 2);
    assert_eq!(keys(storage.scan_all().unwrap()), [1, 3]);
}

#[test]
fn data_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    {
        let storage = AlexStorage::new(&path).unwrap();
        storage.insert(-7, b"kept").unwrap();
        storage.sync().unwrap();
    }
    let storage = AlexStorage::new(&path).unwrap();
    assert_eq!(storage.point_query(-7).unwrap(), Some(b"kept".to_vec()));
}

#[test]
fn keys_are_stored_in_the_documented_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    {
        let storage = AlexStorage::new(&path).unwrap();
        storage.insert(-1, b"v").unwrap();
    }
    let db = alexdb_engine::Db::open(&path, alexdb_engine::Options::default()).unwrap();
    let stored = db
        .get_copied(alexdb_engine::KeyspaceId(0), &encode_key(-1))
        .unwrap();
    assert_eq!(stored, Some(b"v".to_vec()));
    assert_eq!(
        encode_key(-1),
        [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
}

#[test]
fn the_trait_is_usable_as_a_trait_object() {
    let (_dir, storage) = open();
    let dynamic: &dyn Storage = &storage;
    dynamic.insert(9, b"nine").unwrap();
    assert_eq!(dynamic.count().unwrap(), 1);
}
