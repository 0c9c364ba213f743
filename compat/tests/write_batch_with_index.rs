//! `WriteBatchWithIndex`: reads from the batch alone and from the batch
//! over the database, an iterator of the batch laid over a database
//! iterator (both directions, with bounds), save points, and `write_wbwi`.

use alexdb::{DB, ErrorKind, Options, ReadOptions, WriteBatchWithIndex};

fn open() -> (tempfile::TempDir, DB) {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path().join("db")).unwrap();
    for (k, v) in [("k1", "v1"), ("k2", "v2"), ("k3", "v3"), ("k5", "v5")] {
        db.put(k, v).unwrap();
    }
    (dir, db)
}

fn batch() -> WriteBatchWithIndex {
    let mut wbwi = WriteBatchWithIndex::new(0, true);
    wbwi.put(b"k0", b"b0");
    wbwi.put(b"k4", b"b4");
    wbwi.delete(b"k3");
    wbwi.put(b"k2", b"b2");
    wbwi
}

#[test]
fn reads_see_the_batch_over_the_database() {
    let (_dir, db) = open();
    let wbwi = batch();
    let opts = Options::default();
    assert_eq!(wbwi.get_from_batch(b"k4", &opts).unwrap().unwrap(), b"b4");
    assert_eq!(wbwi.get_from_batch(b"k1", &opts).unwrap(), None);
    assert_eq!(wbwi.get_from_batch(b"k3", &opts).unwrap(), None);
    let read = ReadOptions::default();
    let got = |k: &[u8]| wbwi.get_from_batch_and_db(&db, k, &read).unwrap();
    assert_eq!(got(b"k1").unwrap(), b"v1");
    assert_eq!(got(b"k2").unwrap(), b"b2");
    assert_eq!(got(b"k3"), None);
    assert_eq!(got(b"k9"), None);
}

#[test]
fn the_iterator_with_base_merges_both_directions_within_bounds() {
    let (_dir, db) = open();
    let wbwi = batch();
    let mut it = wbwi.iterator_with_base(db.raw_iterator());
    it.seek_to_first();
    let mut forward = Vec::new();
    while let Some((k, v)) = it.item() {
        forward.push((k.to_vec(), v.to_vec()));
        it.next();
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = [
        ("k0", "b0"),
        ("k1", "v1"),
        ("k2", "b2"),
        ("k4", "b4"),
        ("k5", "v5"),
    ]
    .iter()
    .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
    .collect();
    assert_eq!(forward, want);
    it.seek_to_last();
    let mut backward = Vec::new();
    while let Some((k, _)) = it.item() {
        backward.push(k.to_vec());
        it.prev();
    }
    let mut keys: Vec<_> = want.iter().map(|(k, _)| k.clone()).collect();
    keys.reverse();
    assert_eq!(backward, keys);

    let mut bounded = ReadOptions::default();
    bounded.set_iterate_lower_bound(b"k1".to_vec());
    bounded.set_iterate_upper_bound(b"k5".to_vec());
    let mut it = wbwi.iterator_with_base(db.raw_iterator_opt(bounded));
    it.seek_to_first();
    let mut inside = Vec::new();
    while let Some(k) = it.key() {
        inside.push(k.to_vec());
        it.next();
    }
    assert_eq!(inside, [b"k1".to_vec(), b"k2".to_vec(), b"k4".to_vec()]);
}

#[test]
fn write_wbwi_applies_the_batch_and_save_points_undo() {
    let (_dir, db) = open();
    let mut wbwi = batch();
    wbwi.set_save_point();
    wbwi.put(b"k9", b"undone");
    wbwi.rollback_to_save_point().unwrap();
    assert_eq!(
        wbwi.rollback_to_save_point().unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        wbwi.get_from_batch(b"k9", &Options::default()).unwrap(),
        None
    );
    assert_eq!(wbwi.len(), 4);
    db.write_wbwi(&wbwi).unwrap();
    assert_eq!(db.get(b"k2").unwrap().unwrap(), b"b2");
    assert_eq!(db.get(b"k3").unwrap(), None);
    assert_eq!(db.get(b"k9").unwrap(), None);
    wbwi.clear();
    assert!(wbwi.is_empty());
}

#[test]
fn a_merge_in_the_batch_reads_as_not_implemented() {
    let (_dir, db) = open();
    let mut wbwi = WriteBatchWithIndex::new(0, true);
    wbwi.merge(b"k1", b"operand");
    let err = wbwi
        .get_from_batch_and_db(&db, b"k1", &ReadOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
}
