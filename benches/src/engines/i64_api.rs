//! The seeds' RocksStorage-style API: i64 keys, `insert`/`insert_batch` of
//! owned pairs and `point_query` returning an owned value, on RocksDB (as
//! the seeds' RocksStorage: keys as plain big-endian bytes) and on AlexDB
//! (`alexdb::storage::AlexStorage`: keys big-endian with the sign bit
//! flipped, so they sort numerically).

use std::path::Path;

use alexdb::storage::{AlexStorage, Storage};
use rocksdb::{DB, WriteBatch};

use super::rocksdb::RocksTuned;
use super::{Engine, Sizing, touch};
use crate::error::{BenchError, Result};
use crate::workloads::Workload;

/// How `rocksdb-i64` is configured, for the report.
pub const ROCKS_CONFIGURATION: &str = "the seeds' RocksStorage API (`insert_batch(Vec<(i64, \
Vec<u8>)>)`, `insert(i64, &[u8])`, `point_query(i64) -> Option<Vec<u8>>`) over RocksDB with \
the `rocksdb-tuned` options; keys stored as 8 big-endian bytes. Integer key sets only; no \
zero-copy get, seek, scan, delete or transaction in that API, and the threaded workloads \
are left to the engines above.";

/// How `alexdb-i64` is configured, for the report.
pub const ALEX_CONFIGURATION: &str = "the same API through `alexdb::storage::AlexStorage` \
(the compat crate's `Storage` trait) on the engine with `Options::default()`; keys stored \
as 8 big-endian bytes with the sign bit flipped.";

/// The seeds' storage API over i64 keys.
pub trait I64Storage: Sized {
    /// Opens, creating if needed, the store in `dir`.
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self>;
    /// Inserts (or overwrites) every pair in one batch.
    fn insert_batch(&self, pairs: Vec<(i64, Vec<u8>)>) -> Result<()>;
    /// Inserts (or overwrites) one pair.
    fn insert(&self, key: i64, value: &[u8]) -> Result<()>;
    /// The value of `key`, copied out.
    fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>>;
}

/// RocksStorage: the seeds' i64 API over tuned RocksDB.
pub struct RocksStorage {
    db: DB,
}

impl I64Storage for RocksStorage {
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self> {
        let db = DB::open(&RocksTuned::options(sizing), dir)?;
        Ok(RocksStorage { db })
    }

    fn insert_batch(&self, pairs: Vec<(i64, Vec<u8>)>) -> Result<()> {
        let mut batch = WriteBatch::default();
        for (k, v) in pairs {
            batch.put(k.to_be_bytes(), v);
        }
        Ok(self.db.write(batch)?)
    }

    fn insert(&self, key: i64, value: &[u8]) -> Result<()> {
        Ok(self.db.put(key.to_be_bytes(), value)?)
    }

    fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(key.to_be_bytes())?)
    }
}

impl I64Storage for AlexStorage {
    fn open(dir: &Path, _sizing: &Sizing) -> Result<Self> {
        Ok(AlexStorage::new(dir)?)
    }

    fn insert_batch(&self, pairs: Vec<(i64, Vec<u8>)>) -> Result<()> {
        Ok(Storage::insert_batch(self, pairs)?)
    }

    fn insert(&self, key: i64, value: &[u8]) -> Result<()> {
        Ok(Storage::insert(self, key, value)?)
    }

    fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>> {
        Ok(Storage::point_query(self, key)?)
    }
}

/// Runs the workloads through an [`I64Storage`]; the key bytes the
/// workloads hand over are decoded to i64 (the only extra work).
pub struct I64Engine<S> {
    storage: S,
}

impl<S: I64Storage> Engine for I64Engine<S> {
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self> {
        Ok(I64Engine {
            storage: S::open(dir, sizing)?,
        })
    }

    fn supports(workload: Workload) -> bool {
        matches!(
            workload,
            Workload::Load
                | Workload::Reopen
                | Workload::Get
                | Workload::GetAbsent
                | Workload::GetZipf
                | Workload::Mixed
                | Workload::DiskBytes
                | Workload::DiskSettled
                | Workload::PeakRss
        )
    }

    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut decoded = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            decoded.push((decode(k)?, v.to_vec()));
        }
        self.storage.insert_batch(decoded)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.storage.insert(decode(key)?, value)
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.storage.point_query(decode(key)?)?.map(|v| touch(&v)))
    }
}

fn decode(key: &[u8]) -> Result<i64> {
    let bytes: [u8; 8] = key
        .try_into()
        .map_err(|_| BenchError::from("the i64 API needs 8-byte integer keys"))?;
    Ok(i64::from_be_bytes(bytes))
}
