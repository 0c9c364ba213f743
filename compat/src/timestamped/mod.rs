//! User-defined timestamps: column families whose comparator was set with
//! `Options::set_comparator_with_ts`.
//!
//! Such a column family keeps every version of a key, each at the
//! timestamp it was written with, and a read at timestamp `T` sees for each
//! key its newest version whose timestamp is not after `T` (by the
//! comparator's timestamp order), as in RocksDB. AlexDB stores each version
//! as its own engine key (`key.rs`: the user key escaped, a terminator,
//! the timestamp), so the engine's bytewise order keeps the versions of one
//! key together; the stored value says whether the version is a put or a
//! delete (`version.rs`). Point reads walk the versions of one key; an
//! iterator reads the versions visible at its timestamp into a copy sorted
//! by the comparator's user-key order (`family_cursor.rs`), as for any
//! custom comparator.
//!
//! `full_history_ts_low` is kept in the column family itself, under a key
//! no user key is stored as (`history_low.rs`), so it survives reopening,
//! checkpoints and backups as RocksDB's (kept in its MANIFEST) does. Reads
//! below it fail with `Invalid argument`. Versions below it are kept, not
//! collapsed: no read can reach them, and compaction does not drop them.

mod history_low;
mod key;
mod version;

use alexdb_engine::{Cursor, KeyRange, KeyspaceId};

use crate::Error;
use crate::comparator::Comparator;
use crate::db::errors::from_engine_ref;
use crate::write_batch::BatchOp;

pub(crate) use history_low::{
    check_read_above, raise as raise_history_low, read as read_history_low,
};

/// One version visible at a read timestamp: user key, stored value (the
/// user's value, then a TTL stamp if the database has one), timestamp.
pub(crate) type VisibleEntry = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Adds the rocksdb record `op`, whose key ends with its `ts_size`-byte
/// timestamp, to the engine batch as a version of keyspace `ks`; `stamp`
/// adds the TTL stamp to a put's value.
pub(crate) fn translate(
    op: BatchOp<'_>,
    ks: KeyspaceId,
    ts_size: usize,
    stamp: impl Fn(&[u8]) -> Vec<u8>,
    out: &mut alexdb_engine::WriteBatch,
) -> Result<(), Error> {
    let (key, value) = match op {
        BatchOp::Put { key, value, .. } => (key, Some(value)),
        BatchOp::Delete { key, .. } | BatchOp::SingleDelete { key, .. } => (key, None),
        BatchOp::Merge { .. } | BatchOp::DeleteRange { .. } => {
            return Err(Error::not_supported(
                "AlexDB does not implement merges or range deletes in a column family with \
                 user-defined timestamps",
            ));
        }
        BatchOp::LogData(_) | BatchOp::Noop => return Ok(()),
    };
    let Some(split) = key.len().checked_sub(ts_size) else {
        return Err(Error::invalid_argument(
            "write batch must have timestamp(s) set",
        ));
    };
    let stored = key::encode(&key[..split], &key[split..]);
    match value {
        Some(value) => out.put(ks, &stored, &version::put_value(&stamp(value))),
        None => out.put(ks, &stored, version::delete_value()),
    }
    Ok(())
}

/// The range of stored keys holding the versions of `user_key`, for the
/// cursor [`get`] reads through.
pub(crate) fn versions_range(user_key: &[u8]) -> KeyRange {
    let (start, end) = key::versions_of(user_key);
    KeyRange {
        lower: Some(start),
        upper: Some(end),
    }
}

/// The stored value (the user's value, then a TTL stamp if any) of
/// `user_key` visible at `read_ts`, read through `cursor` (over the
/// keyspace, or at least [`versions_range`]).
pub(crate) fn get(
    mut cursor: Cursor,
    user_key: &[u8],
    comparator: &Comparator,
    read_ts: &[u8],
) -> Result<Option<Vec<u8>>, Error> {
    let ts_size = comparator.timestamp_size;
    let (start, end) = key::versions_of(user_key);
    let mut newest = version::Newest::new(comparator, read_ts);
    cursor.seek(&start);
    while let Some(entry) = cursor.entry() {
        if entry.key() >= end.as_slice() {
            break;
        }
        if let Some(ts) = entry
            .key()
            .get(start.len()..)
            .filter(|t| t.len() == ts_size)
        {
            newest.offer(ts, || entry.value().to_vec());
        }
        cursor.forward();
    }
    cursor.status().map_err(from_engine_ref)?;
    Ok(newest
        .take()
        .and_then(|(_, stored)| version::user_value(&stored).map(<[u8]>::to_vec)))
}

/// Every key's version visible at `read_ts` (deleted keys left out), in
/// bytewise order of user keys, read through `cursor`.
pub(crate) fn visible(
    mut cursor: Cursor,
    comparator: &Comparator,
    read_ts: &[u8],
) -> Result<Vec<VisibleEntry>, Error> {
    let ts_size = comparator.timestamp_size;
    let mut out = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut newest = version::Newest::new(comparator, read_ts);
    cursor.seek_to_first();
    while let Some(entry) = cursor.entry() {
        if let Some((user_key, ts)) = key::decode(entry.key(), ts_size) {
            if current.as_ref() != Some(&user_key) {
                push_visible(&mut out, current.take(), &mut newest);
                current = Some(user_key);
            }
            newest.offer(ts, || entry.value().to_vec());
        }
        cursor.forward();
    }
    push_visible(&mut out, current, &mut newest);
    cursor.status().map_err(from_engine_ref)?;
    Ok(out)
}

/// Adds `user_key`'s newest visible version to `out`, unless it is a
/// delete.
fn push_visible(
    out: &mut Vec<VisibleEntry>,
    user_key: Option<Vec<u8>>,
    newest: &mut version::Newest<'_, Vec<u8>>,
) {
    let (Some(user_key), Some((ts, stored))) = (user_key, newest.take()) else {
        return;
    };
    if let Some(value) = version::user_value(&stored) {
        out.push((user_key, value.to_vec(), ts));
    }
}

/// A stored version as RocksDB logs it: the key followed by its
/// timestamp, and the value (`None` for a delete). `None` for the column
/// family's own bookkeeping, which RocksDB does not log.
pub(crate) fn logged<'v>(
    stored_key: &[u8],
    stored_value: &'v [u8],
    ts_size: usize,
) -> Option<(Vec<u8>, Option<&'v [u8]>)> {
    let (mut user_key, ts) = key::decode(stored_key, ts_size)?;
    user_key.extend_from_slice(ts);
    Some((user_key, version::user_value(stored_value)))
}

/// Fails unless `ts` is a timestamp of `comparator`'s size.
pub(crate) fn check_size(comparator: &Comparator, ts: &[u8]) -> Result<(), Error> {
    if ts.len() != comparator.timestamp_size {
        return Err(Error::invalid_argument(format_args!(
            "Timestamp sizes mismatch: expect {}, {} given",
            comparator.timestamp_size,
            ts.len()
        )));
    }
    Ok(())
}
