//! RocksDB → AlexDB → RocksDB is byte-identical per family, and `verify`
//! agrees. 1M keys in three families with overwrites, deletes, range
//! deletes, empty keys and values and three 8 MiB values (about 25 s here);
//! set `ALEXDB_MIGRATE_KEYS` to iterate on fewer.

mod common;

use common::{Spec, assert_same, generate, read_alex, read_rocks, run, run_json, s};

fn spec() -> Spec {
    let keys = std::env::var("ALEXDB_MIGRATE_KEYS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(1_000_000);
    Spec {
        keys,
        max_value: 200,
        huge_values: 3,
        seed: 0x5eed,
    }
}

#[test]
fn rocksdb_to_alexdb_to_rocksdb_is_identical() {
    let dir = tempfile::tempdir().unwrap();
    let (rocks, alex, back) = (
        dir.path().join("rocks"),
        dir.path().join("alex"),
        dir.path().join("back"),
    );
    let expected = generate(&rocks, &spec());
    assert_same(&expected, &read_rocks(&rocks));
    let before = listing(&rocks);

    let (code, report) = run_json(&["copy", "--from", s(&rocks), "--to", s(&alex)]);
    assert_eq!(code, 0, "copy failed: {report}");
    assert_eq!(report["verification"]["identical"], true);
    assert_eq!(
        before,
        listing(&rocks),
        "the copy changed the source directory"
    );
    assert_same(&expected, &read_alex(&alex));
    let (code, report) = run_json(&["verify", s(&rocks), s(&alex)]);
    assert_eq!((code, &report["identical"]), (0, &true.into()), "{report}");
    if !cfg!(feature = "librocksdb") {
        return; // export writes RocksDB: only with the real library
    }

    let (code, report) = run_json(&["export", "--from", s(&alex), "--to", s(&back)]);
    assert_eq!(code, 0, "export failed: {report}");
    assert_same(&expected, &read_rocks(&back));

    for (a, b) in [(&rocks, &alex), (&alex, &back), (&rocks, &back)] {
        let (code, report) = run_json(&["verify", s(a), s(b)]);
        assert_eq!(code, 0, "verify {a:?} {b:?}: {report}");
        assert_eq!(report["identical"], true);
        assert_eq!(report["families"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn verify_reports_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let spec = Spec {
        keys: 3_000,
        max_value: 50,
        huge_values: 0,
        seed: 7,
    };
    generate(&a, &spec);
    generate(&b, &spec);
    {
        let db = common::open_rocks(&b);
        let cf = db.cf_handle("users").unwrap();
        db.put_cf(cf, b"users:0000000500x", b"extra").unwrap();
    }
    let (code, report) = run_json(&["verify", s(&a), s(&b)]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["identical"], false);
    let users = &report["families"][1];
    assert_eq!(users["name"], "users");
    assert_eq!(
        users["difference"]["key_hex"],
        hex(b"users:0000000500x"),
        "{report}"
    );
    assert_eq!(report["families"][0]["difference"], serde_json::Value::Null);

    let out = run(&["verify", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DIFFERENT"), "{text}");
}

#[test]
fn inspect_shows_kind_families_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let expected = generate(
        &rocks,
        &Spec {
            keys: 3_000,
            max_value: 50,
            huge_values: 0,
            seed: 9,
        },
    );
    let (code, report) = run_json(&["inspect", s(&rocks)]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["kind"], "rocksdb");
    for (i, (name, entries)) in ["default", "users", "events"]
        .iter()
        .map(|n| (n, &expected[*n]))
        .enumerate()
    {
        assert_eq!(report["families"][i]["name"], *name);
        assert_eq!(report["families"][i]["keys"], entries.len() as u64);
    }
    let out = run(&["inspect", s(&rocks)]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("RocksDB database"));
}

/// File names and sizes in `dir`, to show the source is left untouched.
fn listing(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, e.metadata().unwrap().len())
        })
        .collect();
    out.sort();
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
