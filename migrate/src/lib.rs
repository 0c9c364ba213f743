//! `alexdb-migrate`: moves data from RocksDB to AlexDB and back, resumably
//! and verified.
//!
//! * [`copy`](copy::copy): RocksDB → AlexDB, reading RocksDB's files with
//!   the pure-Rust `alexdb-rocksdb-format` (no C++ library);
//!   `export::export` (with the `librocksdb` feature, which links the real
//!   RocksDB): AlexDB → RocksDB. Both open the source read-only, refuse a non-empty
//!   target unless resuming, commit in atomic batches that carry a progress
//!   marker (so a run killed at any moment continues with `--resume` to the
//!   same result), and verify the target against the source at the end.
//! * [`verify`](verify::verify): compares two databases of either kind.
//! * [`inspect`](inspect::inspect): kind, families, key counts, sizes.
//!
//! The command-line tool (`src/main.rs`) is a thin layer over this library.
//!
//! ```
//! use alexdb_migrate::copy::{CopyConfig, copy};
//! use alexdb_migrate::progress::Silent;
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let (from, to) = (dir.path().join("rocks"), dir.path().join("alex"));
//! # {
//! #     let db = rocksdb::DB::open_default(&from).unwrap();
//! #     db.put(b"key", b"value").unwrap();
//! # }
//! let config = CopyConfig { from, to, ..CopyConfig::default() };
//! let report = copy(&config, &mut Silent).unwrap(); // copies, then verifies
//! assert!(report.verification.identical);
//! assert_eq!(report.keys, 1);
//! ```

pub mod checksum;
pub mod cli;
pub mod copy;
pub mod error;
#[cfg(feature = "librocksdb")]
pub mod export;
pub mod inspect;
pub mod keymap;
pub mod kind;
mod lock;
pub mod marker;
pub mod pipeline;
pub mod progress;
pub mod report;
pub mod sink;
pub mod source;
pub mod transfer;
pub mod verify;

pub use error::{MigrateError, Result};
