//! AlexDB through `alexdb`, the drop-in for the `rocksdb` crate: the same
//! calls as the RocksDB engines, only the crate differs.

use alexdb::{DB, Options};

use super::Sizing;

/// How this engine is configured, for the report.
pub const CONFIGURATION: &str = "`alexdb::DB::open` with `Options::default()` + \
`create_if_missing` (the rocksdb-crate API; every RocksDB tuning knob is a no-op); writes \
not synced (survive a process crash). The same calls as the RocksDB engines: `get`, \
`get_pinned`, `write(WriteBatch)`, `raw_iterator`.";

/// An open `alexdb::DB`.
pub struct AlexCompat {
    db: DB,
}

impl AlexCompat {
    fn options(_sizing: &Sizing) -> Options {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts
    }

    /// The "Index bytes" line of `rocksdb.stats` (AlexDB's index heap bytes).
    fn index_bytes_of(db: &DB) -> Option<u64> {
        let stats = db.property_value("rocksdb.stats").ok().flatten()?;
        stats
            .lines()
            .find_map(|l| l.strip_prefix("Index bytes:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

optimistic_txn_store!(AlexOptimistic, alexdb);
rocks_api_engine!(AlexCompat, alexdb, AlexOptimistic);
