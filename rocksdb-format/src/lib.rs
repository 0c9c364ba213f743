//! Reads RocksDB's on-disk format in pure Rust: `CURRENT`, the MANIFEST,
//! the OPTIONS file, block-based table (`.sst`) files and the write-ahead
//! logs, with no C or C++ dependency.
//!
//! [`RocksDir::open`] gives the column families of a database directory
//! and, per family, the live entries a RocksDB reader would see: every
//! level and the WAL's unflushed writes merged by internal key, the newest
//! version winning, deletions, single deletions and range deletions
//! applied, merge operands folded by a caller-supplied function.
//!
//! Features this reader does not implement (BlobDB, user-defined
//! timestamps, comparators other than the bytewise one, plain and cuckoo
//! tables, compression dictionaries, two-phase-commit WAL markers, wide
//! columns…) are refused with [`FormatError::Unsupported`] naming the
//! feature; damaged bytes give [`FormatError::Corrupt`] or
//! [`FormatError::ChecksumMismatch`], never a panic.
//!
//! ```no_run
//! use alexdb_rocksdb_format::RocksDir;
//!
//! let db = RocksDir::open("/path/to/rocksdb".as_ref())?;
//! for family in db.column_families() {
//!     for entry in db.iter(&family.name, None)? {
//!         let (key, value) = entry?;
//!         println!("{}: {key:?} = {value:?}", family.name);
//!     }
//! }
//! # Ok::<(), alexdb_rocksdb_format::FormatError>(())
//! ```

pub mod checksum;
pub mod coding;
mod dir;
pub mod entry;
pub mod error;
pub mod internal_key;
pub mod lock;
pub mod log;
pub mod manifest;
pub mod options_file;
pub mod table;
pub mod version_edit;
pub mod view;
pub mod wal;
pub mod write_batch;

pub use dir::{ColumnFamily, RocksDir};
pub use error::{FormatError, Result};
pub use view::{FamilyIter, MergeFn};
