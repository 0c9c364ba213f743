//! Data written once gets clustered by key: the compaction thread puts each
//! sealed log segment in key order and merges runs of like size, while
//! writers and an iterator go on, and what it wrote survives a reopen.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn options() -> Options {
    Options {
        segment_bytes: 64 << 10,
        key_order_run_bytes: 1 << 20,
        ..Options::default()
    }
}

/// Every key and value of `ks`, in order, through a cursor.
fn scan(db: &Db, ks: KeyspaceId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
    let mut out = BTreeMap::new();
    cursor.seek_to_first();
    while let Some(e) = cursor.entry() {
        out.insert(e.key().to_vec(), e.value().to_vec());
        cursor.forward();
    }
    assert!(cursor.status().is_ok());
    out
}

/// Waits (bounded, on progress, not a timing assertion) until the only
/// segment left in log order is the active one.
fn wait_until_key_ordered(db: &Db) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while db.stats().log_segments > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn written_once_data_ends_in_few_key_ordered_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = KeyspaceId(0);
    let wo = WriteOptions::default();
    let mut model = BTreeMap::new();
    // An iterator opened before the load keeps its (empty) view throughout.
    let mut early = db.cursor(ks, KeyRange::default()).unwrap();
    for chunk in (0..40_000u64).collect::<Vec<_>>().chunks(100) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            let (k, v) = (mix(i).to_be_bytes(), i.to_le_bytes().repeat(8));
            batch.put(ks, &k, &v);
            model.insert(k.to_vec(), v);
        }
        db.write(&batch, &wo).unwrap();
    }
    wait_until_key_ordered(&db);
    let stats = db.stats();
    assert_eq!(stats.log_segments, 1, "{stats:?}");
    assert!(stats.key_order_passes > 0, "{stats:?}");
    // About 3.5 MB live in runs of at most 1 MiB that merge only with runs
    // of their own size: a few runs, not one per 64 KiB log segment.
    assert!(stats.segments <= 12, "{stats:?}");
    assert_eq!(stats.compaction_errors, 0);
    early.seek_to_first();
    assert!(early.entry().is_none());
    assert_eq!(scan(&db, ks), model);
    drop(early);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db, ks), model);
    for (k, v) in model.iter().step_by(97) {
        assert_eq!(db.get(ks, k).unwrap().as_deref(), Some(&v[..]));
    }
}
