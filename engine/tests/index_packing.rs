//! Packing the index when a keyspace is quiet: the leaves writes made after
//! the open are packed by the compaction thread once no key has been added
//! or deleted for a while, and reads, overwrites, deletes and new keys go on
//! as before; with the option off they stay full.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyspaceId, Options, WriteOptions};

const KS: KeyspaceId = KeyspaceId(0);

fn key(i: u64) -> [u8; 8] {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes()
}

fn put_all(db: &Db, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, keys: std::ops::Range<u64>, tag: u8) {
    for i in keys {
        let value = [tag; 24];
        db.put(KS, &key(i), &value, &WriteOptions::default())
            .unwrap();
        model.insert(key(i).to_vec(), value.to_vec());
    }
}

fn assert_holds(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    assert_eq!(
        common::scan_all(db, KS),
        model.clone().into_iter().collect::<Vec<_>>()
    );
    for (k, v) in model {
        assert_eq!(db.get(KS, k).unwrap().as_deref(), Some(&v[..]));
    }
}

/// Waits up to a minute for every key to be in a packed leaf; returns how
/// long that took, or `None`.
fn wait_until_packed(db: &Db) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        let stats = db.index_stats(KS).unwrap();
        if stats.num_keys > 0 && stats.packed_keys == stats.num_keys {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn leaves_written_after_the_open_are_packed_once_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let mut model = BTreeMap::new();
    put_all(&db, &mut model, 0..60_000, 1);
    let written = db.index_stats(KS).unwrap();
    assert!(written.data_nodes > 0, "{written:?}");
    assert!(
        wait_until_packed(&db).is_some(),
        "{:?}",
        db.index_stats(KS).unwrap()
    );
    let packed = db.index_stats(KS).unwrap();
    assert!(
        packed.memory_bytes < written.memory_bytes / 2,
        "{written:?} then {packed:?}"
    );
    assert_holds(&db, &model);
    // Overwrites, deletes and new keys go into the packed leaves.
    put_all(&db, &mut model, 0..60_000, 2);
    for i in (0..60_000).step_by(3) {
        db.delete(KS, &key(i), &WriteOptions::default()).unwrap();
        model.remove(&key(i)[..]);
    }
    put_all(&db, &mut model, 60_000..90_000, 3);
    assert_holds(&db, &model);
    assert!(
        wait_until_packed(&db).is_some(),
        "{:?}",
        db.index_stats(KS).unwrap()
    );
    assert_holds(&db, &model);
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_holds(&db, &model);
}

#[test]
fn leaves_stay_full_with_the_option_off() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        pack_index_when_quiet: false,
        ..Options::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    let mut model = BTreeMap::new();
    put_all(&db, &mut model, 0..20_000, 1);
    std::thread::sleep(Duration::from_secs(4));
    let stats = db.index_stats(KS).unwrap();
    assert_eq!(stats.packed_keys, 0, "{stats:?}");
    assert_holds(&db, &model);
}
