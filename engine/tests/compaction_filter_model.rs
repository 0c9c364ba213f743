//! Model test: random puts, deletes, full compactions with a filter,
//! background passes and reopens (with and without the index checkpoint)
//! against a `BTreeMap` that applies the same filter at each full
//! compaction. Background passes put new log segments in key order and
//! leave larger runs out, so a key they remove often has older versions in
//! a segment outside the pass: it must not come back, not even when a
//! reopen rebuilds the index from the segments.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use alexdb_engine::compaction_filter::Decision;
use alexdb_engine::format::index_checkpoint::INDEX_FILE;
use alexdb_engine::{Db, KeyspaceId, Options, WriteOptions};
use quickcheck::{Arbitrary, Gen, QuickCheck};

const KS: KeyspaceId = KeyspaceId(0);

/// The filter: a value starting with `r` is removed, one starting with
/// `c` becomes `k` and the rest (idempotent, since compaction may filter a
/// key again when it merges runs).
fn filter(_key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
    match value.first() {
        Some(b'r') => None,
        Some(b'c') => Some([&b"k"[..], &value[1..]].concat()),
        _ => Some(value.to_vec()),
    }
}

fn decide(key: &[u8], value: &[u8]) -> Decision {
    match filter(key, value) {
        None => Decision::Remove,
        Some(v) if v == value => Decision::Keep,
        Some(v) => Decision::Change(v),
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Puts key `id` with a value starting with `kind` (`r`, `c` or `k`),
    /// `len` bytes long.
    Put {
        id: u16,
        kind: u8,
        len: u8,
    },
    Delete {
        id: u16,
    },
    Compact,
    /// Lets the background compaction run what is due, then pauses it.
    Settle,
    /// Closes and reopens; without the index checkpoint if `rebuild`.
    Reopen {
        rebuild: bool,
    },
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 20 {
            0..=13 => Op::Put {
                id: u16::arbitrary(g) % 300,
                kind: *g.choose(b"rck").unwrap(),
                len: u8::arbitrary(g),
            },
            14..=16 => Op::Delete {
                id: u16::arbitrary(g) % 300,
            },
            17 => Op::Compact,
            18 => Op::Settle,
            _ => Op::Reopen {
                rebuild: bool::arbitrary(g),
            },
        }
    }
}

fn key(id: u16) -> Vec<u8> {
    format!("key:{id:05}").into_bytes()
}

/// Opens `dir` with 16 KiB segments and the filter, background compaction
/// paused (a pass that starts at open, before the filter is set, filters
/// nothing: the model allows for it).
fn open(dir: &std::path::Path) -> Db {
    let options = Options {
        segment_bytes: 16 << 10,
        ..Options::default()
    };
    let db = Db::open(dir, options).unwrap();
    db.set_auto_compaction(false);
    db.set_compaction_filter(KS, Some(Arc::new(decide)))
        .unwrap();
    db
}

/// Runs `ops`; whether the engine agreed with the model: exactly after
/// each full compaction, and after each reopen and at the end up to what
/// background passes may have filtered already.
fn agrees(ops: Vec<Op>) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let mut db = open(dir.path());
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let w = WriteOptions::default();
    for op in ops {
        match op {
            Op::Put { id, kind, len } => {
                let mut value = vec![kind];
                value.extend(std::iter::repeat_n(id as u8, len as usize * 4));
                db.put(KS, &key(id), &value, &w).unwrap();
                model.insert(key(id), value);
            }
            Op::Delete { id } => {
                db.delete(KS, &key(id), &w).unwrap();
                model.remove(&key(id));
            }
            Op::Compact => {
                db.compact().unwrap();
                model = model
                    .into_iter()
                    .filter_map(|(k, v)| Some((k.clone(), filter(&k, &v)?)))
                    .collect();
                if !matches(&db, &model) {
                    return false;
                }
            }
            Op::Settle => {
                db.set_auto_compaction(true);
                db.wait_for_compaction().unwrap();
                db.set_auto_compaction(false);
            }
            Op::Reopen { rebuild } => {
                drop(db);
                if rebuild {
                    // A close writes the checkpoint: recovery rebuilds without it.
                    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
                }
                db = open(dir.path());
                if !settled_matches(&db, &model) {
                    return false;
                }
            }
        }
    }
    settled_matches(&db, &model)
}

/// [`matches_maybe_filtered`] once the pass the background thread may be
/// running has ended (automatic compaction is paused, so no other starts):
/// a pass that began at the open and installs its filtered output between
/// the scan and the point reads would make them disagree.
fn settled_matches(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> bool {
    db.wait_for_compaction().unwrap();
    matches_maybe_filtered(db, model)
}

/// Whether every key holds its value in `model` or what the filter makes
/// of it (a background pass may have filtered it), and no other key is
/// there.
fn matches_maybe_filtered(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> bool {
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = common::scan_all(db, KS).into_iter().collect();
    let extra = scanned.keys().any(|k| !model.contains_key(k));
    let each = model.iter().all(|(k, v)| {
        let got = db.get_copied(KS, k).unwrap();
        got == scanned.get(k).cloned() && (got.as_ref() == Some(v) || got == filter(k, v))
    });
    !extra && each
}

/// Whether a scan, point reads and the live-key count agree with `model`.
fn matches(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> bool {
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = common::scan_all(db, KS).into_iter().collect();
    let gets =
        (0..300).all(|id| db.get_copied(KS, &key(id)).unwrap() == model.get(&key(id)).cloned());
    scanned == *model && gets && db.live_keys(KS).unwrap() == model.len() as u64
}

#[test]
fn compactions_with_a_filter_match_a_btreemap() {
    QuickCheck::new()
        .tests(40)
        .rng(Gen::new(400))
        .quickcheck(agrees as fn(Vec<Op>) -> bool);
}
