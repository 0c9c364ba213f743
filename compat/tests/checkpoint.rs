//! Checkpoints: an openable copy holding exactly the writes made before it,
//! in every column family, taken while writers keep going.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use alexdb as rocksdb;

use common::open_with_cf;
use rocksdb::checkpoint::Checkpoint;
use rocksdb::{DB, IteratorMode, Options};

fn contents(db: &DB) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iterator(IteratorMode::Start)
        .map(|item| {
            let (k, v) = item.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

#[test]
fn a_checkpoint_opens_with_the_same_contents_and_identity() {
    let (dir, db) = open_with_cf();
    let cf = db.cf_handle("cf").unwrap();
    for i in 0..1000u32 {
        db.put(i.to_be_bytes(), format!("v{i}")).unwrap();
    }
    db.put_cf(&cf, b"in-cf", b"yes").unwrap();
    db.delete(7u32.to_be_bytes()).unwrap();
    let path = dir.path().join("cp");
    Checkpoint::new(&db)
        .unwrap()
        .create_checkpoint(&path)
        .unwrap();
    db.put(b"after", b"not in the copy").unwrap();

    let mut opts = Options::default();
    opts.create_if_missing(false);
    let copy = DB::open_cf(&opts, &path, ["cf"]).unwrap();
    let mut expected = contents(&db);
    expected.remove(&b"after"[..]);
    assert_eq!(contents(&copy), expected);
    let copy_cf = copy.cf_handle("cf").unwrap();
    assert_eq!(
        copy.get_cf(&copy_cf, b"in-cf").unwrap(),
        Some(b"yes".to_vec())
    );
    assert_eq!(
        copy.get_db_identity().unwrap(),
        db.get_db_identity().unwrap()
    );
}

#[test]
fn a_checkpoint_into_an_existing_directory_fails() {
    let (dir, db) = open_with_cf();
    let err = Checkpoint::new(&db)
        .unwrap()
        .create_checkpoint(dir.path())
        .unwrap_err();
    assert_eq!(err.kind(), rocksdb::ErrorKind::InvalidArgument);
}

#[test]
fn a_checkpoint_during_heavy_writes_holds_a_prefix() {
    let (dir, db) = open_with_cf();
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                db.put(i.to_be_bytes(), vec![b'x'; 300]).unwrap();
                i += 1;
            }
            i
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    let path = dir.path().join("cp");
    Checkpoint::new(&*db)
        .unwrap()
        .create_checkpoint(&path)
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();

    let copy = DB::open_cf(&Options::default(), &path, ["cf"]).unwrap();
    let keys: Vec<u64> = copy
        .iterator(IteratorMode::Start)
        .map(|item| u64::from_be_bytes(item.unwrap().0[..].try_into().unwrap()))
        .collect();
    assert!(!keys.is_empty() && (keys.len() as u64) <= written);
    let prefix: Vec<u64> = (0..keys.len() as u64).collect();
    assert_eq!(
        keys, prefix,
        "the checkpoint must hold exactly a prefix of the writes"
    );
}
