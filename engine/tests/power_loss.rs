//! Simulated power loss at every I/O operation: a workload of batches
//! (synced and not) over two keyspaces, with segment rotations and
//! compactions, runs on `PowerLossFileSystem` until operation `k` fails as
//! if the power went out, for every `k`. For each, several crash images
//! (what the disk could hold: every synced byte, an arbitrary subset of the
//! unsynced writes torn at sector boundaries, unsynced directory changes
//! kept or lost) must open, pass `verify`, and hold exactly the state after
//! some prefix of the acknowledged batches, at least up to the last one
//! acknowledged as synced: nothing synced lost, batches whole, no hole.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use alexdb_engine::io::power_loss::PowerLossFileSystem;
use alexdb_engine::{Db, KeyRange, KeyspaceId, Options, WriteBatch, WriteOptions};

const BATCHES: u64 = 48;
const SLOTS: u64 = 12;
/// 225 crash points × 90 images: over 20,000 recoveries.
const IMAGES_PER_CRASH_POINT: u64 = 90;

fn options(fs: Option<&PowerLossFileSystem>) -> Options {
    let mut o = Options {
        segment_bytes: 8 << 10,
        background_compaction: false,
        ..Options::default()
    };
    if let Some(fs) = fs {
        o.file_system = Arc::new(fs.clone());
    }
    o
}

fn slot(i: u64) -> Vec<u8> {
    format!("slot{i:02}").into_bytes()
}

fn value(n: u64) -> Vec<u8> {
    let mut v = n.to_be_bytes().to_vec();
    v.resize(8 + (n as usize * 37) % 300, n as u8);
    v
}

fn batch(n: u64, default: KeyspaceId, other: KeyspaceId) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.put(default, &slot(n % SLOTS), &value(n));
    b.put(other, &slot(n % SLOTS), &value(n));
    b.delete(other, &slot((n + 5) % SLOTS));
    b.put(default, b"counter", &n.to_be_bytes());
    b
}

type State = (BTreeMap<Vec<u8>, Vec<u8>>, BTreeMap<Vec<u8>, Vec<u8>>);

/// The state after batches `0..count`.
fn model(count: u64) -> State {
    let (mut d, mut o) = (BTreeMap::new(), BTreeMap::new());
    for n in 0..count {
        d.insert(slot(n % SLOTS), value(n));
        o.insert(slot(n % SLOTS), value(n));
        o.remove(&slot((n + 5) % SLOTS));
        d.insert(b"counter".to_vec(), n.to_be_bytes().to_vec());
    }
    (d, o)
}

/// What the workload got acknowledged before the power went out.
struct Acked {
    /// Batches acknowledged.
    written: u64,
    /// Batches acknowledged as durable (a synced write or sync returned Ok).
    synced: u64,
}

/// Runs the workload until it ends or an operation fails.
fn workload(dir: &Path, fs: &PowerLossFileSystem) -> Acked {
    let mut acked = Acked {
        written: 0,
        synced: 0,
    };
    let Ok(db) = Db::open(dir, options(Some(fs))) else {
        return acked;
    };
    let Ok(other) = db.create_keyspace("other") else {
        return acked;
    };
    let default = db.keyspace("default").unwrap();
    for n in 0..BATCHES {
        let sync = n % 4 == 3;
        let opts = match sync {
            true => WriteOptions::synced(),
            false => WriteOptions::default(),
        };
        if db.write(&batch(n, default, other), &opts).is_err() {
            return acked;
        }
        acked.written = n + 1;
        if sync {
            acked.synced = n + 1;
        }
        if n % 16 == 15 && db.compact().is_err() {
            return acked;
        }
    }
    acked
}

fn scan(db: &Db, ks: KeyspaceId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut c = db.cursor(ks, KeyRange::default()).unwrap();
    c.seek_to_first();
    c.map(|r| {
        let (k, v) = r.unwrap();
        (k.into_vec(), v.into_vec())
    })
    .collect()
}

/// Opens a crash image and checks it against the acknowledgements.
fn check_image(image: &Path, acked: &Acked, what: &str) {
    let db = Db::open(image, options(None)).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    db.verify()
        .unwrap_or_else(|e| panic!("{what}: verify: {e}"));
    let default = db.keyspace("default").unwrap();
    let count = db
        .get_copied(default, b"counter")
        .unwrap()
        .map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()) + 1);
    assert!(
        count >= acked.synced,
        "{what}: {count} batches survived, {} were synced",
        acked.synced
    );
    assert!(
        count <= acked.written + 1,
        "{what}: more batches than written"
    );
    let other = match db.keyspace("other") {
        Some(o) => scan(&db, o),
        None => {
            assert_eq!(count, 0, "{what}: keyspace lost");
            BTreeMap::new()
        }
    };
    let got = (scan(&db, default), other);
    assert!(
        got == model(count),
        "{what}: not the state after {count} batches"
    );
}

#[test]
fn every_crash_point_recovers_a_prefix_with_every_synced_batch() {
    // tmpfs if there is one: the workload's fsyncs cost nothing there.
    let base = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    let total = {
        let fs = PowerLossFileSystem::new();
        let acked = workload(&base.path().join("full"), &fs);
        assert_eq!(acked.written, BATCHES);
        fs.ops()
    };
    assert!(total > 100, "only {total} I/O operations");
    let mut recoveries = 0;
    for k in 0..total {
        let dir = base.path().join(format!("run{k}"));
        let fs = PowerLossFileSystem::new();
        fs.crash_at(k);
        let acked = workload(&dir, &fs);
        let every_ack = Acked {
            written: acked.written,
            synced: acked.written,
        };
        check_image(&dir, &every_ack, &format!("I/O {k} failed, no power loss"));
        for seed in 0..IMAGES_PER_CRASH_POINT {
            let image = base.path().join(format!("image{k}-{seed}"));
            std::fs::create_dir(&image).unwrap();
            fs.write_crash_image(&image, seed * 7919 + k).unwrap();
            check_image(&image, &acked, &format!("crash at I/O {k}, image {seed}"));
            std::fs::remove_dir_all(&image).unwrap();
            recoveries += 1;
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    eprintln!("{recoveries} recoveries over {total} crash points");
    assert!(recoveries >= 20_000, "only {recoveries} recoveries");
}
