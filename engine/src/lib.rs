//! `alexdb-engine`: an embedded, ordered key-value store built on an ALEX
//! learned index over append-only, memory-mapped, checksummed segment files.
//!
//! The engine knows nothing of RocksDB; the `alexdb` crate builds the
//! RocksDB-compatible API on top of it.

pub mod index;
