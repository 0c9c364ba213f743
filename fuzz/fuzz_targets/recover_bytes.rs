//! Damaged database files: the fuzzer mutates the files of a real small
//! database (bit flips, zeroed ranges, overwrites, truncation, extension,
//! removal). Opening it must either fail with an error, or succeed and
//! either report the damage from `verify` as `Corruption` (an open from the
//! index checkpoint does not read the segments it covers) or pass its own
//! checks (a full scan of every keyspace in both directions, every value the
//! one written for its key); never panic, hang, abort or fault.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use alexdb_engine::{Db, Error, KeyRange, Options, WriteBatch, WriteOptions};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Mutation {
    Flip { file: u8, at: u32, mask: u8 },
    Zero { file: u8, at: u32, len: u16 },
    Overwrite { file: u8, at: u32, bytes: Vec<u8> },
    Truncate { file: u8, len: u32 },
    Extend { file: u8, bytes: Vec<u8> },
    Remove { file: u8 },
}

fn options() -> Options {
    Options {
        segment_bytes: 16 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

/// The value written for `key`: it names the key, so a wrong value is seen.
fn value_of(key: &[u8], version: u8) -> Vec<u8> {
    let mut v = key.to_vec();
    v.extend_from_slice(b"=");
    v.extend(std::iter::repeat_n(version, 20));
    v
}

/// Where the per-input databases go: tmpfs if there is one (no real fsyncs).
fn scratch() -> tempfile::TempDir {
    match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

/// The files of a small database with sealed segments, a compaction
/// output, two keyspaces, deletes, synced and unsynced writes.
fn template() -> &'static Vec<(String, Vec<u8>)> {
    static TEMPLATE: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let dir = scratch();
        {
            let db = Db::open(dir.path(), options()).unwrap();
            let other = db.create_keyspace("other").unwrap();
            let default = db.keyspace("default").unwrap();
            for version in 0..3u8 {
                for i in 0..120u32 {
                    let key = format!("k{:04}", (i * 7 + u32::from(version)) % 150);
                    let mut b = WriteBatch::new();
                    b.put(default, key.as_bytes(), &value_of(key.as_bytes(), version));
                    if i % 3 == 0 {
                        b.put(other, key.as_bytes(), &value_of(key.as_bytes(), version));
                    }
                    if i % 11 == 0 {
                        b.delete(default, format!("k{:04}", i % 150).as_bytes());
                    }
                    let sync = match i % 40 {
                        0 => WriteOptions::synced(),
                        _ => WriteOptions::default(),
                    };
                    db.write(&b, &sync).unwrap();
                }
                if version == 1 {
                    db.compact().unwrap();
                }
            }
        }
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name() != "LOCK")
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    })
}

fn apply(files: &mut Vec<(String, Vec<u8>)>, m: &Mutation) {
    if files.is_empty() {
        return;
    }
    let count = files.len();
    let pick = |f: &u8| usize::from(*f) % count;
    let at = |bytes: &Vec<u8>, at: &u32| (*at as usize) % (bytes.len() + 1);
    match m {
        Mutation::Flip { file, at: a, mask } => {
            let b = &mut files[pick(file)].1;
            if !b.is_empty() {
                let i = (*a as usize) % b.len();
                b[i] ^= mask | 1;
            }
        }
        Mutation::Zero { file, at: a, len } => {
            let b = &mut files[pick(file)].1;
            let start = at(b, a);
            let end = (start + usize::from(*len)).min(b.len());
            b[start..end].fill(0);
        }
        Mutation::Overwrite { file, at: a, bytes } => {
            let b = &mut files[pick(file)].1;
            let start = at(b, a);
            let end = (start + bytes.len()).min(b.len());
            b[start..end].copy_from_slice(&bytes[..end - start]);
        }
        Mutation::Truncate { file, len } => {
            let b = &mut files[pick(file)].1;
            let keep = at(b, len);
            b.truncate(keep);
        }
        Mutation::Extend { file, bytes } => files[pick(file)].1.extend_from_slice(bytes),
        Mutation::Remove { file } => {
            files.remove(pick(file));
        }
    }
}

/// What an open database must satisfy: damage it did not read at open is
/// reported by `verify` as `Corruption`, and a database that verifies reads
/// back whole.
fn check(db: &Db) {
    match db.verify() {
        Ok(()) => {}
        Err(Error::Corruption { .. }) => return,
        Err(other) => panic!("verify failed with {other}, not a corruption report"),
    }
    for name in db.keyspace_names() {
        let ks = db.keyspace(&name).unwrap();
        for reverse in [false, true] {
            let mut cursor = db.cursor(ks, KeyRange::default()).unwrap();
            match reverse {
                false => cursor.seek_to_first(),
                true => cursor.seek_to_last(),
            }
            let mut seen = 0u64;
            for item in cursor {
                let (key, value) = item.expect("a scan of a verified database");
                assert!(
                    value.starts_with(&key) && value.get(key.len()) == Some(&b'='),
                    "wrong value for {key:?}"
                );
                seen += 1;
            }
            assert_eq!(seen, db.live_keys(ks).unwrap(), "scan and count differ");
        }
    }
}

fuzz_target!(|mutations: Vec<Mutation>| {
    let mut files = template().clone();
    for m in mutations.iter().take(8) {
        apply(&mut files, m);
    }
    let dir = scratch();
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    if let Ok(db) = Db::open(dir.path(), options()) {
        check(&db);
    }
});
