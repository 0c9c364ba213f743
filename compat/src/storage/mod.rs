//! The `RocksStorage`-style API: an ordered map from `i64` keys to byte
//! values, for callers of the system AlexDB grew out of.
//!
//! ```
//! use alexdb::storage::{AlexStorage, Storage, StorageBatch};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let storage = AlexStorage::new(dir.path().join("store")).unwrap();
//! storage.insert(-5, b"minus five").unwrap();
//! storage.insert_batch(vec![(3, b"three".to_vec()), (10, b"ten".to_vec())]).unwrap();
//!
//! let mut batch = StorageBatch::new();
//! batch.insert(7, b"seven");
//! batch.delete(10);
//! storage.write_batch(batch).unwrap(); // all or nothing
//!
//! let snapshot = storage.snapshot();
//! storage.delete(3).unwrap();
//! assert_eq!(snapshot.point_query(3).unwrap(), Some(b"three".to_vec()));
//! let keys: Vec<i64> = storage.range_query(-10, 7).unwrap().into_iter().map(|(k, _)| k).collect();
//! assert_eq!(keys, [-5, 7]);
//! ```
//!
//! # Key encoding
//!
//! Keys are stored as 8 bytes: the big-endian two's-complement bytes of the
//! key with the sign bit flipped (`(key as u64 ^ 1 << 63).to_be_bytes()`).
//! Bytewise order then equals numeric order, negatives first:
//! `i64::MIN` is `00 00 .. 00`, `-1` is `7f ff .. ff`, `0` is `80 00 .. 00`
//! and `i64::MAX` is `ff ff .. ff`. See [`encode_key`] and [`decode_key`].
//!
//! The old `RocksStorage` wrote plain `key.to_be_bytes()`, which orders
//! every negative key *after* every non-negative one. Its stored keys map
//! to this encoding by flipping the top bit of the first byte
//! ([`key_from_legacy`] gives the `i64`, [`legacy_to_encoded`] the new
//! bytes); values are unchanged. Old databases must be migrated, not opened
//! in place: the same bytes mean different keys in the two encodings.

mod alex;
mod batch;
mod key;
mod snapshot;

pub use alex::AlexStorage;
pub use alexdb_engine::Error;
pub use batch::StorageBatch;
pub use key::{decode_key, encode_key, key_from_legacy, legacy_to_encoded};
pub use snapshot::StorageSnapshot;

/// The result type of the storage API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An ordered map from `i64` keys to byte values, as the old
/// `RocksStorage` offered. Ranges are inclusive at both ends and come back
/// in numeric order, negatives first.
pub trait Storage {
    /// Sets `key` to `value`.
    fn insert(&self, key: i64, value: &[u8]) -> Result<()>;

    /// Sets every `(key, value)` pair, atomically; a key given twice keeps
    /// its last value.
    fn insert_batch(&self, entries: Vec<(i64, Vec<u8>)>) -> Result<()>;

    /// Applies a batch of inserts and deletes atomically, in order: after
    /// any crash it is entirely present or entirely absent.
    fn write_batch(&self, batch: StorageBatch) -> Result<()>;

    /// The value of `key`, if any.
    fn point_query(&self, key: i64) -> Result<Option<Vec<u8>>>;

    /// Every pair with `start <= key <= end`, in key order (empty if
    /// `start > end`).
    fn range_query(&self, start: i64, end: i64) -> Result<Vec<(i64, Vec<u8>)>>;

    /// Every pair, in key order.
    fn scan_all(&self) -> Result<Vec<(i64, Vec<u8>)>>;

    /// Removes `key`; returns whether it had a value.
    fn delete(&self, key: i64) -> Result<bool>;

    /// The number of keys with a value.
    fn count(&self) -> Result<usize>;

    /// A read-only view frozen now: later writes are invisible to it.
    fn snapshot(&self) -> StorageSnapshot;
}
