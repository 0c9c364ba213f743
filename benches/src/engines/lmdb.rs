//! LMDB through `heed`, with no sync per commit.

use std::ops::Bound;
use std::path::Path;

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions};

use super::{Engine, ReadModifyWrite, SharedAccess, Sizing, touch};
use crate::error::Result;

/// How this engine is configured, for the report.
pub const CONFIGURATION: &str = "`heed` 0.23 (LMDB), `EnvOpenOptions` with \
`NO_SYNC | NO_META_SYNC` (commits reach the OS, no fsync: they survive a process crash) and \
`NO_READ_AHEAD` (LMDB's advice for random reads of data larger than memory; no effect on cached \
data), map \
size 4x the raw data (at least 1 GiB), one unnamed `Database<Bytes, Bytes>`. A batch is one \
write transaction; a single put is its own transaction; each get opens a read transaction. \
Copying get = `get(..).to_vec()`, zero-copy get = the `&[u8]` into the map. Range delete = \
`delete_range` in a write transaction (LMDB deletes key by key); LMDB has no compaction (freed \
pages are reused in place, the file never shrinks), so `compact` does nothing; a \
read-modify-write transaction is a write transaction (`get` + `put` + `commit`).";

/// An open LMDB environment and its database.
///
/// heed 0.23 ties a `Database` to a borrow of its `Env`, so the `Env` is
/// leaked to get a `'static` borrow and reclaimed in [`Engine::close`]
/// (dropping an `Lmdb` without closing it leaks the environment until the
/// process exits, which a benchmark child soon does).
pub struct Lmdb {
    env: &'static Env,
    db: Database<'static, Bytes, Bytes>,
}

impl SharedAccess for Lmdb {
    fn get(&self, key: &[u8]) -> Result<Option<u64>> {
        let rtxn = self.env.read_txn()?;
        let value = self.db.get(&rtxn, key)?.map(<[u8]>::to_vec);
        Ok(value.map(|v| touch(&v)))
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut wtxn = self.env.write_txn()?;
        self.db.put(&mut wtxn, key, value)?;
        Ok(wtxn.commit()?)
    }
}

impl ReadModifyWrite for Lmdb {
    fn read_modify_write(&mut self, key: &[u8], value: &[u8]) -> Result<Option<u64>> {
        let mut wtxn = self.env.write_txn()?;
        let old = self.db.get(&wtxn, key)?.map(touch);
        self.db.put(&mut wtxn, key, value)?;
        wtxn.commit()?;
        Ok(old)
    }

    fn close(self: Box<Self>) -> Result<()> {
        Engine::close(*self)
    }
}

impl Engine for Lmdb {
    fn open(dir: &Path, sizing: &Sizing) -> Result<Self> {
        let env: &'static Env = Box::leak(Box::new(open_env(dir, map_size(sizing))?));
        let wtxn = env.write_txn()?;
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| {
                opener
                    .create_database::<Bytes, Bytes>(wtxn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })?
            .unwrap_commit();
        Ok(Lmdb { env, db })
    }

    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut wtxn = self.env.write_txn()?;
        for (k, v) in pairs {
            self.db.put(&mut wtxn, k, v)?;
        }
        Ok(wtxn.commit()?)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        SharedAccess::put(self, key, value)
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<u64>> {
        SharedAccess::get(self, key)
    }

    fn shared(&self) -> Option<&dyn SharedAccess> {
        Some(self)
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<()> {
        let mut wtxn = self.env.write_txn()?;
        for k in keys {
            self.db.delete(&mut wtxn, k)?;
        }
        Ok(wtxn.commit()?)
    }

    fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut wtxn = self.env.write_txn()?;
        self.db
            .delete_range(&mut wtxn, &(Bound::Included(start), Bound::Excluded(end)))?;
        Ok(wtxn.commit()?)
    }

    /// LMDB has no compaction: freed pages are reused in place.
    fn compact(&mut self) -> Result<()> {
        Ok(())
    }

    fn open_transactional(dir: &Path, sizing: &Sizing) -> Result<Box<dyn ReadModifyWrite>> {
        Ok(Box::new(Lmdb::open(dir, sizing)?))
    }

    fn get_pinned(&mut self, key: &[u8]) -> Result<Option<u64>> {
        let rtxn = self.env.read_txn()?;
        Ok(self.db.get(&rtxn, key)?.map(touch))
    }

    /// Every key in one read transaction (LMDB has no multi-get).
    fn multi_get(&mut self, keys: &[&[u8]]) -> Result<(u64, usize)> {
        let rtxn = self.env.read_txn()?;
        let mut sum = 0u64;
        let mut found = 0;
        for key in keys {
            if let Some(v) = self.db.get(&rtxn, key)? {
                // Copied, as the RocksDB API's `multi_get` returns values.
                let copy = v.to_vec();
                sum = sum.wrapping_add(touch(&copy));
                found += 1;
            }
        }
        Ok((sum, found))
    }

    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)> {
        let rtxn = self.env.read_txn()?;
        let mut sum = 0;
        let mut seen = 0;
        for item in self
            .db
            .range(&rtxn, &(Bound::Included(key), Bound::Unbounded))?
            .take(nexts + 1)
        {
            let (k, v) = item?;
            sum += touch(k) + touch(v);
            seen += 1;
        }
        Ok((sum, seen))
    }

    fn scan(&mut self) -> Result<(u64, usize)> {
        let rtxn = self.env.read_txn()?;
        let mut sum = 0;
        let mut seen = 0;
        for item in self.db.iter(&rtxn)? {
            let (k, v) = item?;
            sum += touch(k) + touch(v);
            seen += 1;
        }
        Ok((sum, seen))
    }

    fn close(self) -> Result<()> {
        let Lmdb { env, db } = self;
        let _ = db;
        let closing = env.clone().prepare_for_closing();
        let env: *mut Env = std::ptr::from_ref(env).cast_mut();
        // SAFETY: `env` came from `Box::leak` in `open` and is reclaimed only
        // here, once: `self` was consumed, its `Database` (the only value
        // borrowing the `Env`) is gone, and every transaction lived only
        // inside one method call.
        drop(unsafe { Box::from_raw(env) });
        closing.wait();
        Ok(())
    }
}

/// 4x the raw data, at least 1 GiB, rounded to 1 MiB (a multiple of any
/// page size).
fn map_size(sizing: &Sizing) -> usize {
    let bytes = (sizing.data_bytes() * 4).max(1 << 30);
    let rounded = bytes.div_ceil(1 << 20) << 20;
    usize::try_from(rounded).unwrap_or(usize::MAX)
}

fn open_env(dir: &Path, map_size: usize) -> Result<Env> {
    let mut options = EnvOpenOptions::new();
    options.map_size(map_size);
    // SAFETY: NO_SYNC and NO_META_SYNC only weaken durability against a
    // power loss or OS crash (the class every engine here runs in); they do
    // not affect memory safety. NO_READ_AHEAD only advises the kernel not
    // to read ahead of faults in the map (a larger-than-memory run would
    // otherwise read 128 KiB for each 4 KiB page it touches).
    unsafe { options.flags(EnvFlags::NO_SYNC | EnvFlags::NO_META_SYNC | EnvFlags::NO_READ_AHEAD) };
    // SAFETY: `dir` is this benchmark's private temporary directory: no
    // other process or handle maps or modifies these files while it is open.
    let env = unsafe { options.open(dir) }?;
    Ok(env)
}
