//! AlexDB through `alexdb-engine` directly: the fastest path the engine
//! offers (`get_pinned`, cursors that read in place).

use std::path::Path;

use alexdb_engine::{Db, KeyRange, KeyspaceId, Options, WatchedKey, WriteBatch, WriteOptions};

use super::{Compacting, Engine, ReadModifyWrite, SharedAccess, Sizing, touch};
use crate::error::{BenchError, Result};
use crate::workloads::Workload;

/// How this engine is configured, for the report.
pub const CONFIGURATION: &str = "`alexdb_engine::Db::open` with `Options::default()` \
(32 MiB segments, background compaction, checksums verified on read); writes with \
`WriteOptions::default()` (no sync: in the page cache on return, so they survive a process \
crash); copying get = `get_copied`, zero-copy get = `get_pinned`; seek/scan with `Cursor`; \
range delete = `WriteBatch::delete_range`; compaction = `Db::compact`; compaction filter = \
`Db::set_compaction_filter`; a read-modify-write \
transaction = a snapshot, `get_copied` and `write_unless_changed` watching the key since the \
snapshot.";

/// An open engine database and its default keyspace.
pub struct AlexEngine {
    db: Db,
    ks: KeyspaceId,
}

impl AlexEngine {
    fn open_default(dir: &Path) -> Result<Self> {
        let db = Db::open(dir, Options::default())?;
        let ks = db
            .keyspace(alexdb_engine::DEFAULT_KEYSPACE)
            .ok_or_else(|| BenchError::from("alexdb-engine: no default keyspace"))?;
        Ok(AlexEngine { db, ks })
    }
}

impl SharedAccess for AlexEngine {
    fn get(&self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.db.get_copied(self.ks, key)?.map(|v| touch(&v)))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put(self.ks, key, value, &WriteOptions::default())?)
    }
}

impl ReadModifyWrite for AlexEngine {
    fn read_modify_write(&mut self, key: &[u8], value: &[u8]) -> Result<Option<u64>> {
        let snapshot = self.db.snapshot();
        let old = snapshot.get(self.ks, key)?.map(|v| touch(&v));
        let mut batch = WriteBatch::new();
        batch.put(self.ks, key, value);
        let watched = [WatchedKey {
            keyspace: self.ks,
            key,
            since_seq: snapshot.seq(),
        }];
        self.db
            .write_unless_changed(&batch, &WriteOptions::default(), &watched)?;
        Ok(old)
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

impl Compacting for AlexEngine {
    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        Engine::write_batch(self, pairs)
    }

    fn compact_all(&mut self) -> Result<()> {
        Engine::compact(self)
    }

    fn count(&mut self) -> Result<usize> {
        Ok(Engine::scan(self)?.1)
    }
}

impl Engine for AlexEngine {
    fn open(dir: &Path, _sizing: &Sizing) -> Result<Self> {
        AlexEngine::open_default(dir)
    }

    fn supports(workload: Workload) -> bool {
        !matches!(
            workload,
            Workload::CmpSeek10
                | Workload::MergeAppend
                | Workload::MergeAppendDisk
                | Workload::MergeCounter
        )
    }

    fn open_compacting(
        dir: &Path,
        _sizing: &Sizing,
        filtered: bool,
    ) -> Result<Box<dyn Compacting>> {
        let engine = AlexEngine::open_default(dir)?;
        engine.db.set_auto_compaction(false);
        if filtered {
            let half = |key: &[u8], _value: &[u8]| match crate::workloads::removed_by_filter(key) {
                true => alexdb_engine::compaction_filter::Decision::Remove,
                false => alexdb_engine::compaction_filter::Decision::Keep,
            };
            engine
                .db
                .set_compaction_filter(engine.ks, Some(std::sync::Arc::new(half)))?;
        }
        Ok(Box::new(engine))
    }

    fn shared(&self) -> Option<&dyn SharedAccess> {
        Some(self)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<()> {
        let mut batch = WriteBatch::new();
        for k in keys {
            batch.delete(self.ks, k);
        }
        Ok(self.db.write(&batch, &WriteOptions::default())?)
    }

    fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete_range(self.ks, start, end);
        Ok(self.db.write(&batch, &WriteOptions::default())?)
    }

    fn settle(&mut self) -> Result<()> {
        self.db.wait_for_compaction()?;
        Ok(())
    }

    fn compact(&mut self) -> Result<()> {
        self.db.compact()?;
        Ok(())
    }

    fn open_transactional(dir: &Path, _sizing: &Sizing) -> Result<Box<dyn ReadModifyWrite>> {
        Ok(Box::new(AlexEngine::open_default(dir)?))
    }

    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut batch = WriteBatch::new();
        for (k, v) in pairs {
            batch.put(self.ks, k, v);
        }
        Ok(self.db.write(&batch, &WriteOptions::default())?)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put(self.ks, key, value, &WriteOptions::default())?)
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.db.get_copied(self.ks, key)?.map(|v| touch(&v)))
    }

    fn get_pinned(&mut self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.db.get_pinned(self.ks, key)?.map(|v| touch(&v)))
    }

    fn multi_get(&mut self, keys: &[&[u8]]) -> Result<(u64, usize)> {
        let mut sum = 0u64;
        let mut found = 0;
        let mut failed = None;
        self.db
            .get_many_with(self.ks, keys, |_, value| match value {
                Ok(Some(v)) => {
                    // Copied, as the RocksDB API's `multi_get` returns values.
                    let copy = v.to_vec();
                    sum = sum.wrapping_add(touch(&copy));
                    found += 1;
                }
                Ok(None) => {}
                Err(e) => failed = Some(e),
            })?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok((sum, found)),
        }
    }

    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)> {
        let mut cursor = self.db.cursor(self.ks, KeyRange::default())?;
        cursor.seek(key);
        let mut sum = 0;
        let mut seen = 0;
        while seen <= nexts {
            let Some(entry) = cursor.entry() else { break };
            sum += touch(entry.key()) + touch(entry.value());
            seen += 1;
            cursor.forward();
        }
        cursor.status().map_err(|e| BenchError(e.to_string()))?;
        Ok((sum, seen))
    }

    fn scan(&mut self) -> Result<(u64, usize)> {
        let mut cursor = self.db.cursor(self.ks, KeyRange::default())?;
        cursor.seek_to_first();
        let mut sum = 0;
        let mut seen = 0;
        while let Some(entry) = cursor.entry() {
            sum += touch(entry.key()) + touch(entry.value());
            seen += 1;
            cursor.forward();
        }
        cursor.status().map_err(|e| BenchError(e.to_string()))?;
        Ok((sum, seen))
    }

    fn index_bytes(&self) -> Option<u64> {
        Some(self.db.stats().index_bytes)
    }

    fn background_errors(&self) -> Option<u64> {
        Some(self.db.stats().compaction_errors)
    }
}
