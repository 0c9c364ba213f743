//! Helpers shared by the integration tests: generating RocksDB databases
//! with the real `rocksdb` crate, reading them back, running the CLI.

#![allow(dead_code, missing_docs)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use rocksdb::{DB, IteratorMode, Options, WriteBatch};

/// Family name → key → value.
pub type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// The families of the generated databases.
pub const FAMILIES: [&str; 3] = ["default", "users", "events"];

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        out.truncate(len);
        out
    }
}

/// What to generate.
pub struct Spec {
    /// Keys put in all (before deletes), spread over the families.
    pub keys: usize,
    /// Largest ordinary value.
    pub max_value: usize,
    /// Number of 8 MiB values.
    pub huge_values: usize,
    pub seed: u64,
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o
}

/// Opens (creating) a RocksDB database with the test families.
pub fn open_rocks(path: &Path) -> DB {
    DB::open_cf(&options(), path, FAMILIES).expect("open rocksdb")
}

/// Writes a database per `spec` with puts, overwrites, deletes, range
/// deletes, an empty key, empty values and huge values, flushing midway so
/// data sits in SST files, memtables and the WAL. Returns the expected
/// content.
pub fn generate(path: &Path, spec: &Spec) -> Model {
    let db = open_rocks(path);
    let mut model = Model::new();
    let mut rng = Rng::new(spec.seed);
    for family in FAMILIES {
        model.insert(family.to_string(), BTreeMap::new());
    }
    let per_family = spec.keys / FAMILIES.len();
    for (f, family) in FAMILIES.iter().enumerate() {
        let cf = db.cf_handle(family).expect("family");
        let m = model.get_mut(*family).expect("model family");
        let mut batch = WriteBatch::default();
        for i in 0..per_family {
            let key = format!("{family}:{:010}", i * 3 + f).into_bytes();
            let len = rng.below(spec.max_value as u64 + 1) as usize;
            let value = if i % 97 == 0 {
                Vec::new()
            } else {
                rng.bytes(len)
            };
            batch.put_cf(cf, &key, &value);
            m.insert(key, value);
            if batch.len() >= 10_000 {
                db.write(std::mem::take(&mut batch)).expect("write");
            }
        }
        db.write(batch).expect("write");
        if f == 0 {
            db.flush_cf(cf).expect("flush");
        }
    }
    mutate(&db, &mut model, &mut rng, per_family, spec);
    model
}

/// Overwrites, deletes, range-deletes, the empty key and huge values.
fn mutate(db: &DB, model: &mut Model, rng: &mut Rng, per_family: usize, spec: &Spec) {
    for (f, family) in FAMILIES.iter().enumerate() {
        let cf = db.cf_handle(family).expect("family");
        let m = model.get_mut(*family).expect("model family");
        for i in (0..per_family).step_by(7) {
            let key = format!("{family}:{:010}", i * 3 + f).into_bytes();
            let len = rng.below(64) as usize;
            let value = rng.bytes(len);
            db.put_cf(cf, &key, &value).expect("overwrite");
            m.insert(key, value);
        }
        for i in (0..per_family).step_by(11) {
            let key = format!("{family}:{:010}", i * 3 + f).into_bytes();
            db.delete_cf(cf, &key).expect("delete");
            m.remove(&key);
        }
        let lo = per_family / 3;
        let (start, end) = (
            format!("{family}:{:010}", lo * 3),
            format!("{family}:{:010}", (lo + per_family / 20) * 3),
        );
        db.delete_range_cf(cf, start.as_bytes(), end.as_bytes())
            .expect("range delete");
        m.retain(|k, _| k.as_slice() < start.as_bytes() || k.as_slice() >= end.as_bytes());
        if f == 1 {
            db.flush_cf(cf).expect("flush");
        }
    }
    let users = db.cf_handle("users").expect("users");
    db.put_cf(users, b"", b"the empty key").expect("empty key");
    model
        .get_mut("users")
        .expect("users")
        .insert(Vec::new(), b"the empty key".to_vec());
    let events = db.cf_handle("events").expect("events");
    db.put_cf(events, b"", b"").expect("empty key and value");
    model
        .get_mut("events")
        .expect("events")
        .insert(Vec::new(), Vec::new());
    for i in 0..spec.huge_values {
        let key = format!("huge:{i}").into_bytes();
        let value = rng.bytes(8 << 20);
        db.put_cf(events, &key, &value).expect("huge value");
        model.get_mut("events").expect("events").insert(key, value);
    }
}

/// Every entry of every family of the RocksDB database at `path`.
pub fn read_rocks(path: &Path) -> Model {
    let names = DB::list_cf(&Options::default(), path).expect("list cf");
    let db = DB::open_cf_for_read_only(&Options::default(), path, &names, false).expect("open");
    let mut model = Model::new();
    for name in names {
        let cf = db.cf_handle(&name).expect("family");
        let entries = db
            .iterator_cf(cf, IteratorMode::Start)
            .map(|r| {
                let (k, v) = r.expect("iterate");
                (k.to_vec(), v.to_vec())
            })
            .collect();
        model.insert(name, entries);
    }
    model
}

/// Every entry of every keyspace of the AlexDB database at `path`.
pub fn read_alex(path: &Path) -> Model {
    let db = alexdb_engine::Db::open(path, alexdb_engine::Options::default()).expect("open");
    let mut model = Model::new();
    for name in db.keyspace_names() {
        let ks = db.keyspace(&name).expect("keyspace");
        let mut cursor = db
            .cursor(ks, alexdb_engine::KeyRange::default())
            .expect("cursor");
        cursor.seek_to_first();
        let entries = cursor
            .map(|r| {
                let (k, v) = r.expect("iterate");
                (k.to_vec(), v.to_vec())
            })
            .collect();
        model.insert(name, entries);
    }
    model
}

/// Asserts two models are equal, naming the first difference.
pub fn assert_same(expected: &Model, got: &Model) {
    let names = |m: &Model| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(expected), names(got), "families differ");
    for (family, entries) in expected {
        let other = &got[family];
        assert_eq!(entries.len(), other.len(), "{family}: key counts differ");
        for ((k1, v1), (k2, v2)) in entries.iter().zip(other) {
            assert_eq!(k1, k2, "{family}: keys differ");
            assert!(v1 == v2, "{family}: value of {k1:?} differs");
        }
    }
}

/// The `alexdb-migrate` binary.
pub fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_alexdb-migrate"))
}

/// Runs the CLI with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    cli().args(args).output().expect("run alexdb-migrate")
}

/// Runs the CLI with `--json` and parses standard output.
pub fn run_json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run(&all);
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "no JSON on stdout ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), value)
}

/// `path` as a `&str`.
pub fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}
