//! `full_history_ts_low`: the timestamp below which a column family's
//! history may be collapsed, so reads below it are refused.
//!
//! It is stored in the column family's own keyspace under
//! [`HISTORY_LOW_KEY`], which no user key is stored as, and written with
//! a synced engine write: it survives reopening, and checkpoints and
//! backups carry it, as RocksDB's MANIFEST entry does. (Unlike RocksDB's,
//! the write takes a sequence number.) It only ever rises.

use std::cmp::Ordering;
use std::sync::{Mutex, PoisonError};

use alexdb_engine::{Db, KeyspaceId, WriteOptions};

use super::key::HISTORY_LOW_KEY;
use crate::Error;
use crate::comparator::Comparator;
use crate::db::errors::IntoRocks;
use crate::key_hex::hex;

/// The column family's `full_history_ts_low`, if it was ever set.
pub(crate) fn read(engine: &Db, ks: KeyspaceId) -> Result<Option<Vec<u8>>, Error> {
    engine.get_copied(ks, HISTORY_LOW_KEY).rocks()
}

/// Raises the column family's `full_history_ts_low` to `ts`; fails with
/// RocksDB's `Invalid argument` if it is already higher. `raising` is held
/// meanwhile, so two raises cannot interleave their check and write.
pub(crate) fn raise(
    engine: &Db,
    ks: KeyspaceId,
    comparator: &Comparator,
    ts: &[u8],
    raising: &Mutex<()>,
) -> Result<(), Error> {
    let _one_at_a_time = raising.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(current) = read(engine, ks)?
        && comparator.compare_timestamps(ts, &current) == Ordering::Less
    {
        return Err(Error::invalid_argument(format_args!(
            "Current full_history_ts_low: {} is higher than provided ts: {}",
            hex(&current),
            hex(ts)
        )));
    }
    engine
        .put(ks, HISTORY_LOW_KEY, ts, &WriteOptions::synced())
        .rocks()
}

/// Fails with RocksDB's `Invalid argument` if `read_ts` is below the
/// column family's `full_history_ts_low`.
pub(crate) fn check_read_above(
    engine: &Db,
    ks: KeyspaceId,
    comparator: &Comparator,
    read_ts: &[u8],
) -> Result<(), Error> {
    match read(engine, ks)? {
        Some(low) if comparator.compare_timestamps(read_ts, &low) == Ordering::Less => {
            Err(Error::invalid_argument(format_args!(
                "Read timestamp: {} is smaller than full_history_ts_low: {}",
                hex(read_ts),
                hex(&low)
            )))
        }
        _ => Ok(()),
    }
}
