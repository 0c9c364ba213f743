//! Compressed values (format version 5): compaction stores a keyspace's
//! values compressed with a dictionary of its output when the keyspace asks
//! for it, and every read path returns them as written: point reads
//! (pinned, owned, batched), cursors both ways, snapshots, reopens with and
//! without the index checkpoint, a second compaction (decode with one
//! dictionary, encode with another) and `verify`.

mod common;

use std::collections::BTreeMap;

use alexdb_engine::{Compression, Db, KeyRange, KeyspaceId, WriteBatch, WriteOptions};

const KEYS: u32 = 5_000;

fn key(i: u32) -> Vec<u8> {
    format!(
        "user:{:08}",
        u64::from(i).wrapping_mul(0x9E37_79B9) % 100_000_000
    )
    .into_bytes()
}

/// A JSON-like value of about 300 bytes: repeated field names, dates and
/// small numbers, as the probe wrote.
fn json(i: u32, round: u32) -> Vec<u8> {
    format!(
        "{{\"id\":{i},\"round\":{round},\"name\":\"user{i:06}\",\"email\":\"user{i:06}@example.com\",\
         \"created_at\":\"2026-{:02}-{:02}T10:{:02}:00Z\",\"status\":\"{}\",\"score\":{},\
         \"address\":{{\"street\":\"{} Main Street\",\"city\":\"Springfield\",\"zip\":\"{:05}\"}},\
         \"tags\":[\"alpha\",\"beta\"],\"active\":true}}",
        i % 12 + 1,
        i % 28 + 1,
        i % 60,
        ["active", "pending", "closed"][(i % 3) as usize],
        i % 97,
        i % 900,
        i % 99_999,
    )
    .into_bytes()
}

fn write_round(db: &Db, ks: KeyspaceId, round: u32, model: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(500) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            let (k, v) = (key(i), json(i, round));
            batch.put(ks, &k, &v);
            model.insert(k, v);
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }
}

fn open_compressed(dir: &std::path::Path) -> (Db, KeyspaceId) {
    let db = Db::open(dir, common::manual_compaction_options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    db.set_compression(ks, Compression::Lz4).unwrap();
    (db, ks)
}

/// Every read path agrees with `model`.
fn check_reads(db: &Db, ks: KeyspaceId, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(ks, k).unwrap().as_deref(), Some(&v[..]));
        assert_eq!(db.get_pinned(ks, k).unwrap().as_deref(), Some(&v[..]));
        assert_eq!(
            db.get_pinned(ks, k)
                .unwrap()
                .unwrap()
                .to_value_ref()
                .as_ref(),
            &v[..]
        );
    }
    let keys: Vec<&[u8]> = model.keys().take(300).map(Vec::as_slice).collect();
    for (found, k) in db
        .snapshot()
        .get_many(ks, &keys)
        .unwrap()
        .into_iter()
        .zip(&keys)
    {
        assert_eq!(found.unwrap().as_deref(), model.get(*k).map(Vec::as_slice));
    }
    let mut seen = 0;
    db.get_many_with(ks, &keys, |at, value| {
        assert_eq!(value.unwrap(), model.get(keys[at]).map(Vec::as_slice));
        seen += 1;
    })
    .unwrap();
    assert_eq!(seen, keys.len());
    let forward: Vec<(Vec<u8>, Vec<u8>)> = common::scan_all(db, ks);
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
    assert_eq!(forward, expected);
    let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
    cursor.seek_to_last();
    let mut backward = Vec::new();
    while let Some(e) = cursor.entry() {
        backward.push((e.key().to_vec(), e.value().to_vec()));
        cursor.backward();
    }
    backward.reverse();
    assert_eq!(backward, expected);
    db.verify().unwrap();
}

fn data_bytes(db: &Db) -> u64 {
    db.stats().live_bytes()
}

#[test]
fn compressed_values_read_back_on_every_path_and_take_less_room() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ks) = open_compressed(dir.path());
    let mut model = BTreeMap::new();
    write_round(&db, ks, 1, &mut model);
    let before = data_bytes(&db);
    db.compact().unwrap();
    let after = data_bytes(&db);
    assert!(
        after * 2 < before,
        "compaction with LZ4 kept {after} of {before} bytes"
    );
    check_reads(&db, ks, &model);

    // A snapshot keeps round 1 while round 2 is written and compacted
    // (decoded with the first output's dictionary, encoded with the next).
    let snapshot = db.snapshot();
    let round_one = model.clone();
    write_round(&db, ks, 2, &mut model);
    db.compact().unwrap();
    for (k, v) in round_one.iter().step_by(11) {
        assert_eq!(snapshot.get(ks, k).unwrap().as_deref(), Some(&v[..]));
    }
    drop(snapshot);
    db.compact().unwrap();
    check_reads(&db, ks, &model);

    // Clean close (checkpoint), then a reopen that scans everything.
    drop(db);
    let (db, ks) = open_compressed(dir.path());
    check_reads(&db, ks, &model);
    drop(db);
    std::fs::remove_file(dir.path().join("INDEX")).unwrap();
    let (db, ks) = open_compressed(dir.path());
    check_reads(&db, ks, &model);

    // Turning compression off decodes the values at the next rewrite.
    db.set_compression(ks, Compression::None).unwrap();
    write_round(&db, ks, 3, &mut model);
    db.compact().unwrap();
    check_reads(&db, ks, &model);
}

#[test]
fn a_keyspace_without_compression_keeps_its_values_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::manual_compaction_options()).unwrap();
    let plain = db.keyspace("default").unwrap();
    let packed = db.create_keyspace("packed").unwrap();
    db.set_compression(packed, Compression::Lz4).unwrap();
    let (mut plain_model, mut packed_model) = (BTreeMap::new(), BTreeMap::new());
    write_round(&db, plain, 1, &mut plain_model);
    write_round(&db, packed, 1, &mut packed_model);
    db.compact().unwrap();
    let summaries = db.segment_summaries().unwrap();
    let stored = |ks: KeyspaceId| -> u64 {
        summaries
            .iter()
            .filter(|s| s.keyspace == ks)
            .map(|s| s.value_bytes)
            .sum()
    };
    let written: u64 = plain_model.values().map(|v| v.len() as u64).sum();
    assert_eq!(stored(plain), written, "values as written");
    assert!(
        stored(packed) * 2 < written,
        "{} of {written}",
        stored(packed)
    );
    check_reads(&db, plain, &plain_model);
    check_reads(&db, packed, &packed_model);
}

#[test]
fn incompressible_values_get_no_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ks) = open_compressed(dir.path());
    let mut model = BTreeMap::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(500) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            let v: Vec<u8> = (0..200)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            batch.put(ks, &key(i), &v);
            model.insert(key(i), v);
        }
        db.write(&batch, &WriteOptions::default()).unwrap();
    }
    db.compact().unwrap();
    let summaries = db.segment_summaries().unwrap();
    let stored: u64 = summaries.iter().map(|s| s.value_bytes).sum();
    let written: u64 = model.values().map(|v| v.len() as u64).sum();
    assert_eq!(stored, written, "random bytes are stored as written");
    check_reads(&db, ks, &model);
}

/// The compacted segment holding the dictionary: the one whose first frame
/// (at offset 64) is of kind 5.
fn segment_with_dictionary(dir: &std::path::Path) -> std::path::PathBuf {
    common::segment_files(dir)
        .into_iter()
        .find(|p| std::fs::read(p).unwrap().get(64 + 4) == Some(&5))
        .expect("a segment with a value dictionary")
}

fn flip(path: &std::path::Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_dictionary_is_corruption_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ks) = open_compressed(dir.path());
    let mut model = BTreeMap::new();
    write_round(&db, ks, 1, &mut model);
    db.compact().unwrap();
    drop(db);
    let damaged = segment_with_dictionary(dir.path());
    let name = damaged.file_name().unwrap().to_string_lossy().into_owned();
    // Inside the dictionary's bytes: frame header 24, body header 8.
    flip(&damaged, 64 + 24 + 8 + 100);

    // With the index checkpoint, open reads no frame: the first read of a
    // compressed value meets the damage, and so does `verify`.
    let (db, ks) = open_compressed(dir.path());
    let (k, _) = model.iter().next().unwrap();
    match db.get(ks, k) {
        Err(e @ alexdb_engine::Error::Corruption { .. }) => {
            assert!(e.to_string().contains(&name), "{e}")
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    let e = db.verify().unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains(&name), "{e}");
    drop(db);

    // Without it, the scan at open finds the frame's checksum wrong.
    std::fs::remove_file(dir.path().join("INDEX")).unwrap();
    let e = Db::open(dir.path(), common::manual_compaction_options()).unwrap_err();
    assert!(e.is_corruption() && e.to_string().contains(&name), "{e}");
}

/// The bodies of the database's value-dictionary frames.
fn dictionaries(dir: &std::path::Path) -> Vec<Vec<u8>> {
    common::segment_files(dir)
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(p).unwrap();
            (bytes.get(64 + 4) == Some(&5)).then(|| {
                let body_len = u32::from_le_bytes(bytes[72..76].try_into().unwrap()) as usize;
                bytes[64 + 24..64 + 24 + body_len].to_vec()
            })
        })
        .collect()
}

#[test]
fn a_merge_of_runs_keeps_the_largest_runs_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ks) = open_compressed(dir.path());
    let mut model = BTreeMap::new();
    write_round(&db, ks, 1, &mut model);
    db.compact().unwrap();
    let first = dictionaries(dir.path());
    assert!(!first.is_empty(), "compressed runs");
    let mut batch = WriteBatch::new();
    for i in 0..300 {
        let (k, v) = (key(KEYS + i), json(KEYS + i, 2));
        batch.put(ks, &k, &v);
        model.insert(k, v);
    }
    db.write(&batch, &WriteOptions::default()).unwrap();
    db.compact().unwrap();
    let after = dictionaries(dir.path());
    assert!(
        after.iter().any(|d| first.contains(d)),
        "the merged run took over the large run's dictionary"
    );
    check_reads(&db, ks, &model);
}
