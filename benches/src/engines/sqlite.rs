//! SQLite through `rusqlite` (bundled): on disk, WAL, `synchronous=NORMAL`,
//! a `WITHOUT ROWID` table, prepared (cached) statements.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};

use super::{Engine, ReadModifyWrite, Sizing, touch};
use crate::error::Result;

/// How this engine is configured, for the report.
pub const CONFIGURATION: &str = "`rusqlite` 0.41 with bundled SQLite, a file on disk, \
`journal_mode=WAL`, `synchronous=NORMAL` (no fsync per commit; committed transactions \
survive a process crash), table `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, statements \
prepared once and reused (`prepare_cached`), default page cache. A batch is one transaction; \
a single put is one autocommit statement. Zero-copy get reads the blob in place \
(`get_ref`); seek + 10 is `WHERE k >= ? ORDER BY k LIMIT 11`. Range delete = `DELETE \
WHERE k >= ? AND k < ?`; compaction = `PRAGMA wal_checkpoint(TRUNCATE)` + `VACUUM`; a \
read-modify-write transaction = `BEGIN IMMEDIATE`, `SELECT`, `INSERT OR REPLACE`, `COMMIT`. \
No threaded workloads: a `Connection` cannot be shared between threads (one connection per \
thread would be another configuration).";

const GET: &str = "SELECT v FROM kv WHERE k = ?1";
const PUT: &str = "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)";
const SEEK: &str = "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k LIMIT ?2";
const SCAN: &str = "SELECT k, v FROM kv ORDER BY k";
const DELETE: &str = "DELETE FROM kv WHERE k = ?1";
const DELETE_RANGE: &str = "DELETE FROM kv WHERE k >= ?1 AND k < ?2";

/// An open SQLite database.
pub struct Sqlite {
    conn: Connection,
}

impl ReadModifyWrite for Sqlite {
    fn read_modify_write(&mut self, key: &[u8], value: &[u8]) -> Result<Option<u64>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let old: Option<Vec<u8>> = tx
            .prepare_cached(GET)?
            .query_row([key], |row| row.get(0))
            .optional()?;
        tx.prepare_cached(PUT)?.execute(params![key, value])?;
        tx.commit()?;
        Ok(old.map(|v| touch(&v)))
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

impl Engine for Sqlite {
    fn open(dir: &Path, _sizing: &Sizing) -> Result<Self> {
        let conn = Connection::open(dir.join("kv.sqlite"))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID",
        )?;
        Ok(Sqlite { conn })
    }

    fn write_batch(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut put = tx.prepare_cached(PUT)?;
            for (k, v) in pairs {
                put.execute(params![k, v])?;
            }
        }
        Ok(tx.commit()?)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.conn
            .prepare_cached(PUT)?
            .execute(params![key, value])?;
        Ok(())
    }

    fn delete_batch(&mut self, keys: &[&[u8]]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut delete = tx.prepare_cached(DELETE)?;
            for k in keys {
                delete.execute([k])?;
            }
        }
        Ok(tx.commit()?)
    }

    fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        self.conn
            .prepare_cached(DELETE_RANGE)?
            .execute(params![start, end])?;
        Ok(())
    }

    fn compact(&mut self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        self.conn.execute_batch("VACUUM")?;
        Ok(())
    }

    fn open_transactional(dir: &Path, sizing: &Sizing) -> Result<Box<dyn ReadModifyWrite>> {
        Ok(Box::new(Sqlite::open(dir, sizing)?))
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<u64>> {
        let mut get = self.conn.prepare_cached(GET)?;
        let value: Option<Vec<u8>> = get.query_row([key], |row| row.get(0)).optional()?;
        Ok(value.map(|v| touch(&v)))
    }

    fn get_pinned(&mut self, key: &[u8]) -> Result<Option<u64>> {
        let mut get = self.conn.prepare_cached(GET)?;
        Ok(get
            .query_row([key], |row| Ok(touch_ref(row.get_ref(0)?)))
            .optional()?)
    }

    fn seek_next(&mut self, key: &[u8], nexts: usize) -> Result<(u64, usize)> {
        let mut seek = self.conn.prepare_cached(SEEK)?;
        let mut rows = seek.query(params![key, (nexts + 1) as i64])?;
        visit(&mut rows)
    }

    fn scan(&mut self) -> Result<(u64, usize)> {
        let mut scan = self.conn.prepare_cached(SCAN)?;
        let mut rows = scan.query([])?;
        visit(&mut rows)
    }
}

fn visit(rows: &mut rusqlite::Rows<'_>) -> Result<(u64, usize)> {
    let mut sum = 0;
    let mut seen = 0;
    while let Some(row) = rows.next()? {
        sum += touch_ref(row.get_ref(0)?) + touch_ref(row.get_ref(1)?);
        seen += 1;
    }
    Ok((sum, seen))
}

fn touch_ref(value: ValueRef<'_>) -> u64 {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => touch(b),
        _ => 0,
    }
}
