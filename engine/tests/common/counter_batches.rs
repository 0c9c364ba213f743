//! Batches that make a consistent prefix checkable: batch `n` sets a
//! counter and [`KEYS`] keys to `n` and moves a marker key, so a state is a
//! prefix of whole batches exactly when it equals [`batch_state`] of its
//! counter.

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options, WriteBatch};

/// Options for a primary that rotates and compacts often under a reader:
/// 32 KiB segments, compaction at 30% dead bytes.
pub fn options() -> Options {
    Options {
        segment_bytes: 32 << 10,
        compaction_dead_ratio: 0.3,
        ..Options::default()
    }
}

/// Keys every batch rewrites with its counter.
pub const KEYS: u64 = 16;

/// Batch `n` sets the counter and all [`KEYS`] keys to `n`, and deletes
/// the key of batch `n - 1`'s tail marker.
pub fn batch(ks: KeyspaceId, n: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.put(ks, b"counter", &n.to_be_bytes());
    for i in 0..KEYS {
        let mut value = n.to_be_bytes().to_vec();
        value.resize(8 + ((n + i) % 200) as usize, i as u8);
        b.put(ks, format!("key{i:03}").as_bytes(), &value);
    }
    b.delete(ks, format!("marker{}", n.wrapping_sub(1)).as_bytes());
    b.put(ks, format!("marker{n}").as_bytes(), b"");
    b
}

/// Checks that `db` holds exactly the state after batches `0..=n` for
/// some `n`, and returns that `n` (`None` before the first batch).
pub fn consistent_prefix(db: &Db) -> Option<u64> {
    let ks = db.keyspace("default").unwrap();
    let snapshot = db.snapshot();
    let counter = snapshot
        .get(ks, b"counter")
        .unwrap()
        .map(|v| u64::from_be_bytes(v[..8].try_into().unwrap()));
    let mut cursor = snapshot.cursor(ks, KeyRange::default()).unwrap();
    cursor.seek_to_first();
    let entries: Vec<(Vec<u8>, Vec<u8>)> = cursor
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.into_vec(), v.into_vec())
        })
        .collect();
    let Some(n) = counter else {
        assert!(entries.is_empty(), "keys without a counter: {entries:?}");
        return None;
    };
    let mut expected: Vec<(Vec<u8>, Vec<u8>)> = batch_state(n);
    expected.sort();
    assert_eq!(entries.len(), expected.len(), "at counter {n}");
    for ((k, v), (ek, ev)) in entries.iter().zip(&expected) {
        assert_eq!(k, ek, "at counter {n}");
        assert_eq!(v, ev, "key {} at counter {n}", String::from_utf8_lossy(k));
    }
    Some(n)
}

/// Every (key, value) after batches `0..=n`.
pub fn batch_state(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = vec![(b"counter".to_vec(), n.to_be_bytes().to_vec())];
    for i in 0..KEYS {
        let mut value = n.to_be_bytes().to_vec();
        value.resize(8 + ((n + i) % 200) as usize, i as u8);
        out.push((format!("key{i:03}").into_bytes(), value));
    }
    out.push((format!("marker{n}").into_bytes(), Vec::new()));
    out
}
