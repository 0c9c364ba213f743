//! Replaying the write-ahead logs (`<number>.log`): the writes not yet
//! flushed to a table, per column family, sorted as a memtable would hold
//! them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::entry::Entry;
use crate::error::{FormatError, Result};
use crate::internal_key::ValueKind;
use crate::log::{LogReader, Record};
use crate::manifest::Manifest;
use crate::table::RangeTombstone;
use crate::write_batch;

/// One column family's unflushed writes.
#[derive(Debug, Clone, Default)]
pub struct Memtable {
    /// Point writes in internal-key order.
    pub entries: Vec<Entry>,
    /// Range deletions.
    pub tombstones: Vec<RangeTombstone>,
}

/// The numbers of the WAL files in `dir`, ascending.
pub fn wal_numbers(dir: &Path) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| FormatError::io(dir, e))? {
        let entry = entry.map_err(|e| FormatError::io(dir, e))?;
        let name = entry.file_name();
        if let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Where a point-in-time replay stopped: the first damaged record of the
/// WALs, and what was left unread after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalDamage {
    /// The number of the WAL holding the damaged record.
    pub log: u64,
    /// What is wrong, naming the WAL and the record's offset.
    pub detail: String,
    /// The later WALs, not replayed.
    pub later_logs: Vec<u64>,
}

/// The unflushed writes of every column family, and where the replay
/// stopped if a WAL is damaged.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    /// Each family's unflushed writes, by family id.
    pub tables: BTreeMap<u32, Memtable>,
    /// The first damaged record, if any: nothing from it on was replayed.
    pub damage: Option<WalDamage>,
}

/// Replays every WAL in `dir` that may hold unflushed writes of a live
/// column family, as RocksDB's default recovery does (point in time): the
/// writes before the first damaged record are kept, nothing after it (the
/// rest of its WAL and every later one) is replayed, and where it stopped
/// is returned. A torn tail (a record cut short by the end of its file) is
/// no damage.
pub fn replay(dir: &Path, manifest: &Manifest) -> Result<Replayed> {
    let mut replayed = Replayed::default();
    let oldest = manifest
        .families
        .values()
        .map(|f| f.log_number)
        .min()
        .unwrap_or(0);
    let numbers: Vec<u64> = wal_numbers(dir)?
        .into_iter()
        .filter(|&n| n >= oldest)
        .collect();
    for (i, &number) in numbers.iter().enumerate() {
        let path = dir.join(format!("{number:06}.log"));
        let bytes = std::fs::read(&path).map_err(|e| FormatError::io(&path, e))?;
        match replay_log(&bytes, number, manifest, &mut replayed.tables) {
            Ok(()) => {}
            Err(e @ (FormatError::Corrupt { .. } | FormatError::ChecksumMismatch { .. })) => {
                replayed.damage = Some(WalDamage {
                    log: number,
                    detail: e.to_string(),
                    later_logs: numbers[i + 1..].to_vec(),
                });
                break;
            }
            Err(e) => return Err(e),
        }
    }
    for t in replayed.tables.values_mut() {
        t.entries.sort_by(|a, b| a.cmp_internal(b));
    }
    Ok(replayed)
}

/// Applies one WAL's writes to `tables`, each batch whole; on damage the
/// batches before the damaged record stay applied.
pub fn replay_log(
    bytes: &[u8],
    number: u64,
    manifest: &Manifest,
    tables: &mut BTreeMap<u32, Memtable>,
) -> Result<()> {
    let mut reader = LogReader::new(bytes, number, format!("WAL {number:06}.log"));
    while let Some(record) = reader.next_record()? {
        match record {
            Record::Data(batch) => apply_batch(&batch, number, manifest, tables)?,
            Record::SetCompression(payload) => check_compression(&payload)?,
            Record::TimestampSizes(payload) => check_timestamp_sizes(&payload)?,
        }
    }
    Ok(())
}

fn apply_batch(
    batch: &[u8],
    number: u64,
    manifest: &Manifest,
    tables: &mut BTreeMap<u32, Memtable>,
) -> Result<()> {
    for w in write_batch::decode(batch)? {
        let Some(family) = manifest.families.get(&w.family) else {
            continue; // a dropped family
        };
        if number < family.log_number {
            continue; // already flushed to a table
        }
        let table = tables.entry(w.family).or_default();
        if w.kind == ValueKind::RangeDelete {
            table.tombstones.push(RangeTombstone {
                start: w.key,
                end: w.value,
                sequence: w.sequence,
            });
        } else {
            table.entries.push(Entry {
                user_key: w.key,
                sequence: w.sequence,
                kind: w.kind,
                value: w.value,
            });
        }
    }
    Ok(())
}

fn check_compression(payload: &[u8]) -> Result<()> {
    match payload.first() {
        Some(0) | None => Ok(()),
        Some(t) => Err(FormatError::unsupported(format!(
            "WAL compression (type {t:#x})"
        ))),
    }
}

/// A list of (column family:u32, timestamp size:u16); any non-zero size
/// means user-defined timestamps.
fn check_timestamp_sizes(payload: &[u8]) -> Result<()> {
    if !payload.len().is_multiple_of(6) {
        return Err(FormatError::corrupt(
            "WAL",
            "malformed timestamp size record",
        ));
    }
    if payload.chunks_exact(6).any(|c| c[4] != 0 || c[5] != 0) {
        return Err(FormatError::unsupported(
            "user-defined timestamps in the WAL",
        ));
    }
    Ok(())
}
