//! `--i64-keys`: the seeds' `RocksStorage` data (plain big-endian `i64`
//! keys) comes across in the compat `Storage` encoding and reads back
//! through `AlexStorage` in numeric order.

mod common;

use alexdb::storage::{AlexStorage, Storage};
use common::{run_json, s};
use rocksdb::{DB, Options};

/// Keys the old `RocksStorage` would have written, with their values.
fn seeds_data() -> Vec<(i64, Vec<u8>)> {
    let mut keys: Vec<i64> = (-3_000..3_000).map(|k| k * 7_919).collect();
    keys.extend([i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX]);
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| (k, format!("value of {k}").into_bytes()))
        .collect()
}

fn write_seeds_db(path: &std::path::Path, data: &[(i64, Vec<u8>)]) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open(&opts, path).unwrap();
    for (k, v) in data {
        db.put(k.to_be_bytes(), v).unwrap();
    }
}

#[test]
fn old_i64_keys_read_back_in_numeric_order() {
    let dir = tempfile::tempdir().unwrap();
    let (rocks, alex) = (dir.path().join("rocks"), dir.path().join("alex"));
    let data = seeds_data();
    write_seeds_db(&rocks, &data);

    let (code, report) = run_json(&["copy", "--from", s(&rocks), "--to", s(&alex), "--i64-keys"]);
    assert_eq!(code, 0, "{report}");

    let (code, report) = run_json(&["verify", s(&rocks), s(&alex), "--i64-keys"]);
    assert_eq!(code, 0, "{report}");
    let (code, _) = run_json(&["verify", s(&rocks), s(&alex)]);
    assert_eq!(code, 1, "without the mapping the encodings differ");

    let storage = AlexStorage::new(&alex).unwrap();
    assert_eq!(storage.scan_all().unwrap(), data);
    assert_eq!(
        storage.point_query(-7_919).unwrap(),
        Some(b"value of -7919".to_vec())
    );
    let range: Vec<i64> = storage
        .range_query(-2, 2)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(range, [-1, 0, 1]);
}

#[test]
fn a_key_that_is_not_eight_bytes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (rocks, alex) = (dir.path().join("rocks"), dir.path().join("alex"));
    write_seeds_db(&rocks, &seeds_data());
    {
        let db = DB::open_default(&rocks).unwrap();
        db.put(b"short", b"x").unwrap();
    }
    let (code, report) = run_json(&["copy", "--from", s(&rocks), "--to", s(&alex), "--i64-keys"]);
    assert_eq!(code, 2, "{report}");
    assert_eq!(report["error"]["kind"], "bad_i64_key");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("73686f7274")
    );
}
