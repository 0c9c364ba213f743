//! `WriteBatch::from_data` on arbitrary bytes: reading its length, iterating
//! it and writing it to a database must never panic, and `data()` must give
//! the bytes back. When `iterate` reports every operation of a batch the
//! database accepted, replaying what it reported gives the state the write
//! left behind.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use alexdb::{DB, Options, WriteBatch, WriteBatchIterator};
use libfuzzer_sys::fuzz_target;

/// The final value (or deletion) of each key, as `iterate` reports it.
#[derive(Default)]
struct Replay {
    ops: usize,
    last: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl WriteBatchIterator for Replay {
    fn put(&mut self, key: &[u8], value: &[u8]) {
        self.ops += 1;
        self.last.insert(key.to_vec(), Some(value.to_vec()));
    }

    fn delete(&mut self, key: &[u8]) {
        self.ops += 1;
        self.last.insert(key.to_vec(), None);
    }
}

/// One database for the whole run (opening one per input would cost fsyncs).
fn db() -> &'static DB {
    static DB_CELL: OnceLock<(tempfile::TempDir, DB)> = OnceLock::new();
    &DB_CELL
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let mut opts = Options::default();
            opts.create_if_missing(true);
            let db = DB::open(&opts, dir.path()).unwrap();
            (dir, db)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    let batch = WriteBatch::from_data(data);
    assert_eq!(batch.data(), data, "from_data must keep the bytes");
    let _ = (batch.size_in_bytes(), batch.is_empty());
    let mut replay = Replay::default();
    batch.iterate(&mut replay);
    let complete = replay.ops == batch.len();
    if db().write(batch).is_err() || !complete {
        return;
    }
    for (key, value) in &replay.last {
        let got = db().get(key).unwrap();
        assert_eq!(got.as_ref(), value.as_ref(), "key {key:?}");
    }
});
