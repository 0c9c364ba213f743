//! RocksDB's files on arbitrary bytes: the first byte picks the parser
//! (a block-based table read to its end, a MANIFEST replayed, a WAL
//! replayed with its write batches), the rest is the file. Every input
//! must parse or give an error; never panic, hang or allocate without
//! bound.
#![no_main]

use std::collections::BTreeMap;

use alexdb_rocksdb_format::table::{Table, TableIter};
use alexdb_rocksdb_format::{manifest, wal};
use libfuzzer_sys::fuzz_target;

fn table(bytes: &[u8]) {
    let Ok(table) = Table::from_bytes("fuzz.sst", bytes.to_vec()) else {
        return;
    };
    for entry in TableIter::new(table) {
        if entry.is_err() {
            return;
        }
    }
}

fn manifest(bytes: &[u8]) {
    let _ = manifest::replay(bytes, 1, "MANIFEST-000001");
}

fn wal(bytes: &[u8]) {
    let Ok(state) = manifest::replay(&[], 1, "MANIFEST-000001") else {
        return;
    };
    let _ = wal::replay_log(bytes, 1, &state, &mut BTreeMap::new());
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => table(rest),
        1 => manifest(rest),
        _ => wal(rest),
    }
});
