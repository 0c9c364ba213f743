//! Time to live, as RocksDB's `DBWithTTL` does it: in a database opened
//! with a TTL every put value carries its write time, a 4-byte
//! little-endian count of seconds since the Unix epoch appended to it; reads
//! strip it, and compaction (every key in `compact_range`, and the
//! background compactions) drops the entries of a column family whose write
//! time is more than its TTL ago (see `filter_hook.rs`).
//! Until then an expired entry can still be read, as in RocksDB.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::ColumnFamilyTtl;

/// Bytes of the write time appended to each value.
pub(crate) const STAMP_BYTES: usize = 4;

/// Seconds since the Unix epoch, as RocksDB's 32-bit write time.
pub(crate) fn now_seconds() -> u32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// `value` with the write time `now` appended.
pub(crate) fn stamped(value: &[u8], now: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + STAMP_BYTES);
    out.extend_from_slice(value);
    out.extend_from_slice(&now.to_le_bytes());
    out
}

/// Whether a stamped `value` was written more than `ttl` before `now`. A
/// value too short to hold a stamp is kept.
pub(crate) fn expired(value: &[u8], ttl: Duration, now: u32) -> bool {
    let Some(stamp) = value.len().checked_sub(STAMP_BYTES).map(|at| &value[at..]) else {
        return false;
    };
    let mut word = [0u8; STAMP_BYTES];
    word.copy_from_slice(stamp);
    let written = u64::from(u32::from_le_bytes(word));
    written.saturating_add(ttl.as_secs()) < u64::from(now)
}

/// The TTL of a column family opened with `ttl` in a database opened with
/// `db_ttl` (`None`: never expires). A zero TTL never expires, as in
/// RocksDB.
pub(crate) fn family_ttl(db_ttl: Option<Duration>, ttl: ColumnFamilyTtl) -> Option<Duration> {
    let ttl = match ttl {
        ColumnFamilyTtl::Disabled => None,
        ColumnFamilyTtl::Duration(d) => Some(d),
        ColumnFamilyTtl::SameAsDb => db_ttl,
    };
    ttl.filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{expired, family_ttl, stamped};
    use crate::ColumnFamilyTtl;

    #[test]
    fn stamps_expire_after_the_ttl() {
        let value = stamped(b"v", 100);
        assert_eq!(&value[..1], b"v");
        assert!(!expired(&value, Duration::from_secs(5), 105));
        assert!(expired(&value, Duration::from_secs(5), 106));
        assert!(!expired(b"ab", Duration::ZERO, 1000));
    }

    #[test]
    fn family_ttls_resolve_as_rocksdb() {
        let db = Some(Duration::from_secs(9));
        assert_eq!(family_ttl(db, ColumnFamilyTtl::SameAsDb), db);
        assert_eq!(family_ttl(db, ColumnFamilyTtl::Disabled), None);
        let own = ColumnFamilyTtl::Duration(Duration::from_secs(1));
        assert_eq!(family_ttl(db, own), Some(Duration::from_secs(1)));
        assert_eq!(
            family_ttl(db, ColumnFamilyTtl::Duration(Duration::ZERO)),
            None
        );
    }
}
