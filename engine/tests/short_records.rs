//! Compaction writes puts and deletes in the short record form (version 4:
//! a 24-byte header without the previous version's location) unless a
//! snapshot older than the record may follow its version chain; snapshots
//! read what they read before, across compactions and a reopen.

mod common;

use alexdb_engine::{Db, KeyspaceId, WriteBatch, WriteOptions};

const KEYS: u32 = 20_000;
/// A record of a 24-byte key and a 100-byte value: 40 + 124 rounded up to
/// 8 in the long form, 24 + 124 rounded up to 8 in the short one.
const LONG: u64 = 168;
const SHORT: u64 = 152;

fn key(i: u32) -> Vec<u8> {
    format!(
        "key:{:020}",
        u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    )
    .into_bytes()
}

fn put_all(db: &Db, ks: KeyspaceId, fill: u8) {
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(1000) {
        let mut b = WriteBatch::new();
        for &i in chunk {
            b.put(ks, &key(i), &[fill; 100]);
        }
        db.write(&b, &WriteOptions::default()).unwrap();
    }
}

/// Live record bytes per key, frame headers included.
fn live_per_key(db: &Db) -> u64 {
    db.stats().live_bytes() / u64::from(KEYS)
}

#[test]
fn compaction_writes_short_records_unless_a_snapshot_needs_their_chain() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    put_all(&db, ks, b'a');
    assert!(live_per_key(&db) >= LONG, "{:?}", db.stats());
    db.compact().unwrap();
    let short = live_per_key(&db);
    assert!(
        (SHORT..LONG).contains(&short),
        "{short} bytes per key after compaction"
    );

    // Overwrites under a snapshot: the new heads keep their chain (long
    // form) for the snapshot, which still reads the first values.
    let snapshot = db.snapshot();
    put_all(&db, ks, b'b');
    db.compact().unwrap();
    for i in (0..KEYS).step_by(97) {
        let old = snapshot.get(ks, &key(i)).unwrap().unwrap();
        assert_eq!(&*old, &[b'a'; 100][..]);
        assert_eq!(&*db.get(ks, &key(i)).unwrap().unwrap(), &[b'b'; 100][..]);
    }
    drop(snapshot);
    db.compact().unwrap();
    assert!(live_per_key(&db) < LONG, "{:?}", db.stats());
    drop(db);
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    assert_eq!(db.stats().live_keys, u64::from(KEYS));
    for i in (0..KEYS).step_by(89) {
        assert_eq!(&*db.get(ks, &key(i)).unwrap().unwrap(), &[b'b'; 100][..]);
    }
    db.verify().unwrap();
}
