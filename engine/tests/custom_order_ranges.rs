//! Range deletes in a keyspace with an order of its own (`Options::key_orders`,
//! `Db::create_keyspace_ordered`): one record covers the keys the order puts
//! in the range, wherever their bytes sort, through writes, snapshots,
//! merges in the same batch, compaction and reopens; and the order is kept
//! in the MANIFEST, so an open without it is refused rather than reading
//! the ranges bytewise.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use alexdb_engine::key_order::{KeyOrder, RangeOrder};
use alexdb_engine::{Db, Error, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

/// Orders keys by their bytes read from the last one: a key's neighbours
/// in this order are scattered through the bytes' order.
struct LastByteFirst;

impl KeyOrder for LastByteFirst {
    fn name(&self) -> &str {
        "test.LastByteFirst"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.iter().rev().cmp(b.iter().rev())
    }
}

/// The same order under another name.
struct Renamed;

impl KeyOrder for Renamed {
    fn name(&self) -> &str {
        "test.Renamed"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        LastByteFirst.compare(a, b)
    }
}

fn options(order: Option<Arc<dyn KeyOrder>>) -> Options {
    Options {
        segment_bytes: 256 << 10,
        background_compaction: false,
        key_orders: order
            .map(|o| HashMap::from([("names".to_string(), o)]))
            .unwrap_or_default(),
        ..Options::default()
    }
}

fn ordered() -> Option<Arc<dyn KeyOrder>> {
    Some(Arc::new(LastByteFirst))
}

/// Key `i`: its number little-endian, so the order's ranges of numbers
/// are scattered bytewise.
fn key(i: u32) -> Vec<u8> {
    i.to_le_bytes().to_vec()
}

fn in_range(i: u32, from: u32, to: u32) -> bool {
    from <= i && i < to
}

fn delete_range(db: &Db, ks: KeyspaceId, from: u32, to: u32) {
    let mut b = WriteBatch::new();
    b.delete_range(ks, &key(from), &key(to));
    db.write(&b, &WriteOptions::default()).unwrap();
}

/// Every key the cursor yields, as numbers, in the bytes' order.
fn scan(db: &Db, ks: KeyspaceId) -> Vec<u32> {
    let mut c = db.cursor(ks, KeyRange::default()).unwrap();
    c.seek_to_first();
    let mut keys: Vec<u32> = c
        .map(|r| u32::from_le_bytes(r.unwrap().0[..4].try_into().unwrap()))
        .collect();
    keys.sort_unstable();
    keys
}

fn live(model: &BTreeMap<u32, Vec<u8>>) -> Vec<u32> {
    model.keys().copied().collect()
}

fn check(db: &Db, ks: KeyspaceId, model: &BTreeMap<u32, Vec<u8>>, upto: u32) {
    for i in 0..upto {
        let got = db.get_copied(ks, &key(i)).unwrap();
        assert_eq!(got.as_ref(), model.get(&i), "key {i}");
    }
    assert_eq!(scan(db, ks), live(model));
}

#[test]
fn a_range_delete_covers_the_keys_of_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(ordered())).unwrap();
    let ks = db.create_keyspace("names").unwrap();
    let mut model = BTreeMap::new();
    for i in 0..3_000u32 {
        db.put(ks, &key(i), &i.to_be_bytes(), &WriteOptions::default())
            .unwrap();
        model.insert(i, i.to_be_bytes().to_vec());
    }
    let before = db.snapshot();
    let logged = db.stats().data_bytes;
    delete_range(&db, ks, 1_000, 2_000);
    assert!(db.stats().data_bytes - logged < 100, "one record");
    model.retain(|&i, _| !in_range(i, 1_000, 2_000));
    check(&db, ks, &model, 3_000);
    let seen = before.get(ks, &key(1_500)).unwrap().map(|v| v.to_vec());
    assert_eq!(seen, Some(1_500u32.to_be_bytes().to_vec()), "the snapshot");
    // A range reversed bytewise but not in the order deletes what the
    // order puts in it.
    assert!(key(255) > key(257));
    delete_range(&db, ks, 255, 257);
    model.retain(|&i, _| !in_range(i, 255, 257));
    check(&db, ks, &model, 3_000);
    // A range reversed in the order deletes nothing.
    delete_range(&db, ks, 2_500, 2_400);
    check(&db, ks, &model, 3_000);
    // Writes after the range delete are seen.
    db.put(ks, &key(1_234), b"again", &WriteOptions::default())
        .unwrap();
    model.insert(1_234, b"again".to_vec());
    check(&db, ks, &model, 3_000);
    drop(before);
    db.compact().unwrap();
    check(&db, ks, &model, 3_000);
    assert_eq!(db.live_keys(ks).unwrap(), model.len() as u64);
}

#[test]
fn a_range_delete_in_a_batch_covers_its_earlier_writes_in_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(ordered())).unwrap();
    let ks = db.create_keyspace("names").unwrap();
    let append: Arc<dyn alexdb_engine::MergeFunction> =
        Arc::new(|_: &[u8], base: Option<&[u8]>, operand: &[u8]| {
            let mut v = base.unwrap_or_default().to_vec();
            v.extend_from_slice(operand);
            Some(v)
        });
    db.set_merge_function(ks, Some(append)).unwrap();
    db.put(ks, &key(5), b"old", &WriteOptions::default())
        .unwrap();
    let mut b = WriteBatch::new();
    b.put(ks, &key(6), b"batch");
    b.delete_range(ks, &key(0), &key(10));
    b.merge(ks, &key(5), b"+m");
    b.merge(ks, &key(6), b"+n");
    db.write(&b, &WriteOptions::default()).unwrap();
    assert_eq!(db.get_copied(ks, &key(5)).unwrap(), Some(b"+m".to_vec()));
    assert_eq!(db.get_copied(ks, &key(6)).unwrap(), Some(b"+n".to_vec()));
}

/// Random puts, deletes and range deletes against a model, with
/// compactions and reopens (from the index checkpoint and from a full
/// scan of the segments) along the way.
#[test]
fn model_through_compactions_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut db = Db::open(&path, options(ordered())).unwrap();
    let mut ks = db.create_keyspace("names").unwrap();
    let mut model: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    const KEYS: u64 = 700;
    for step in 0..4_000u32 {
        let i = next(KEYS) as u32;
        match next(20) {
            0 => {
                let to = i + next(80) as u32;
                delete_range(&db, ks, i, to);
                model.retain(|&k, _| !in_range(k, i, to));
            }
            1..=3 => {
                db.delete(ks, &key(i), &WriteOptions::default()).unwrap();
                model.remove(&i);
            }
            _ => {
                let v = [&step.to_le_bytes()[..], &[7; 60]].concat();
                db.put(ks, &key(i), &v, &WriteOptions::default()).unwrap();
                model.insert(i, v);
            }
        }
        if step % 900 == 899 {
            db.compact().unwrap();
        }
        if step % 1_300 == 1_299 {
            drop(db);
            if step % 2_600 == 2_599 {
                std::fs::remove_file(path.join("INDEX")).ok();
            }
            db = Db::open(&path, options(ordered())).unwrap();
            ks = db.keyspace("names").unwrap();
        }
        if step % 250 == 0 {
            check(&db, ks, &model, KEYS as u32);
        }
    }
    check(&db, ks, &model, KEYS as u32);
    db.compact().unwrap();
    check(&db, ks, &model, KEYS as u32);
    assert_eq!(db.live_range_deletes(ks).unwrap(), 0, "every one dropped");
}

#[test]
fn an_open_without_the_keyspace_order_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Db::open(&path, options(ordered())).unwrap();
        let ks = db.create_keyspace("names").unwrap();
        db.put(ks, &key(1), b"v", &WriteOptions::default()).unwrap();
        delete_range(&db, ks, 0, 1);
    }
    for other in [None, Some(Arc::new(Renamed) as Arc<dyn KeyOrder>)] {
        match Db::open(&path, options(other.clone())) {
            Err(Error::InvalidArgument(msg)) => {
                assert!(msg.contains("test.LastByteFirst"), "{msg}")
            }
            other => panic!("opened without its order: {:?}", other.map(|_| ())),
        }
    }
    // A reader may leave the keyspace unnamed: it does not see it then.
    let reader = Db::open_read_only(&path, options(None)).unwrap();
    assert_eq!(reader.keyspace("names"), None);
    assert!(reader.keyspace("default").is_some());
    drop(reader);
    let renamed = Some(Arc::new(Renamed) as Arc<dyn KeyOrder>);
    assert!(Db::open_read_only(&path, options(renamed)).is_err());
    let reader = Db::open_read_only(&path, options(ordered())).unwrap();
    let ks = reader.keyspace("names").unwrap();
    assert_eq!(reader.get_copied(ks, &key(1)).unwrap(), Some(b"v".to_vec()));
    drop(reader);
    let db = Db::open(&path, options(ordered())).unwrap();
    let ks = db.keyspace("names").unwrap();
    assert_eq!(db.get_copied(ks, &key(1)).unwrap(), Some(b"v".to_vec()));
}

/// A keyspace created bytewise takes an order at its first open with one,
/// unless it holds range deletes (written in the bytes' order).
#[test]
fn an_existing_keyspace_takes_an_order_only_without_range_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Db::open(&path, options(None)).unwrap();
        let ks = db.create_keyspace("names").unwrap();
        db.put(ks, &key(1), b"v", &WriteOptions::default()).unwrap();
    }
    {
        let db = Db::open(&path, options(ordered())).unwrap();
        let ks = db.keyspace("names").unwrap();
        delete_range(&db, ks, 0, 256);
        assert_eq!(db.get_copied(ks, &key(1)).unwrap(), None);
    }
    assert!(matches!(
        Db::open(&path, options(None)),
        Err(Error::InvalidArgument(_))
    ));
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join("db");
    {
        let db = Db::open(&path, options(None)).unwrap();
        let ks = db.create_keyspace("names").unwrap();
        db.put(ks, &key(1), b"v", &WriteOptions::default()).unwrap();
        delete_range(&db, ks, 0, 256);
    }
    assert!(matches!(
        Db::open(&path, options(ordered())),
        Err(Error::InvalidArgument(_))
    ));
    let db = Db::open(&path, options(None)).unwrap();
    assert!(
        db.create_keyspace_ordered("names", RangeOrder::Custom(Arc::new(LastByteFirst)))
            .is_err()
    );
}
