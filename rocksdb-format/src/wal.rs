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

/// Replays every WAL in `dir` that may hold unflushed writes of a live
/// column family.
pub fn replay(dir: &Path, manifest: &Manifest) -> Result<BTreeMap<u32, Memtable>> {
    let mut tables: BTreeMap<u32, Memtable> = BTreeMap::new();
    let oldest = manifest
        .families
        .values()
        .map(|f| f.log_number)
        .min()
        .unwrap_or(0);
    for number in wal_numbers(dir)?.into_iter().filter(|&n| n >= oldest) {
        let path = dir.join(format!("{number:06}.log"));
        let bytes = std::fs::read(&path).map_err(|e| FormatError::io(&path, e))?;
        replay_log(&bytes, number, manifest, &mut tables)?;
    }
    for t in tables.values_mut() {
        t.entries.sort_by(|a, b| a.cmp_internal(b));
    }
    Ok(tables)
}

/// Applies one WAL's writes to `tables`.
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
