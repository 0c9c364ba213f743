//! What the database says about its own files and sizes: column family
//! metadata, approximate sizes of key ranges, the identity, and holding off
//! file deletions.
//!
//! AlexDB keeps all column families in shared segment files, so sizes are
//! measured on the data: the bytes of a column family's live records (key,
//! value and the 40-byte record header) in the range asked for.

use std::sync::PoisonError;

use alexdb_engine::{KeyRange, KeyspaceId};

use super::errors::IntoRocks;
use super::{DBCommon, DBInner, ThreadMode};
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::{AsColumnFamilyRef, Error};

/// Bytes a record takes besides its key and value (its header).
const RECORD_HEADER_BYTES: u64 = 40;

/// A start and end key: the range `[start_key, end_key)`.
pub struct Range<'a> {
    start_key: &'a [u8],
    end_key: &'a [u8],
}

impl<'a> Range<'a> {
    /// The range `[start_key, end_key)`.
    pub fn new(start_key: &'a [u8], end_key: &'a [u8]) -> Range<'a> {
        Range { start_key, end_key }
    }
}

/// What `get_column_family_metadata` reports about a column family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnFamilyMetaData {
    /// Bytes of the column family's live records.
    pub size: u64,
    /// The column family's name.
    pub name: String,
    /// Segment files the database has, if the column family holds any key
    /// (its records may lie in any of them); 0 if it is empty.
    pub file_count: usize,
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Metadata of the default column family.
    pub fn get_column_family_metadata(&self) -> ColumnFamilyMetaData {
        self.family_metadata(DEFAULT_COLUMN_FAMILY_ID)
    }

    /// Metadata of column family `cf`.
    pub fn get_column_family_metadata_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
    ) -> ColumnFamilyMetaData {
        self.family_metadata(cf.cf_id())
    }

    fn family_metadata(&self, cf: u32) -> ColumnFamilyMetaData {
        let size = self.live_bytes(cf, KeyRange::default()).unwrap_or(0);
        let name = self.core().family_name(cf);
        let file_count = if size > 0 {
            usize::try_from(self.core().engine.stats().segments).unwrap_or(usize::MAX)
        } else {
            0
        };
        ColumnFamilyMetaData {
            size,
            name,
            file_count,
        }
    }

    /// The bytes of the default column family's records in each range.
    pub fn get_approximate_sizes(&self, ranges: &[Range]) -> Vec<u64> {
        self.approximate_sizes(DEFAULT_COLUMN_FAMILY_ID, ranges)
    }

    /// The bytes of column family `cf`'s records in each range.
    pub fn get_approximate_sizes_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        ranges: &[Range],
    ) -> Vec<u64> {
        self.approximate_sizes(cf.cf_id(), ranges)
    }

    fn approximate_sizes(&self, cf: u32, ranges: &[Range]) -> Vec<u64> {
        ranges
            .iter()
            .map(|range| {
                let bounds = KeyRange {
                    lower: Some(range.start_key.to_vec()),
                    upper: Some(range.end_key.to_vec()),
                };
                self.live_bytes(cf, bounds).unwrap_or(0)
            })
            .collect()
    }

    /// Bytes of the live records of `cf` within `range`, counted now.
    fn live_bytes(&self, cf: u32, range: KeyRange) -> Result<u64, Error> {
        let mut cursor = self.core().engine.cursor(KeyspaceId(cf), range).rocks()?;
        cursor.seek_to_first();
        let mut bytes = 0u64;
        while let Some(entry) = cursor.entry() {
            bytes += RECORD_HEADER_BYTES + (entry.key().len() + entry.value().len()) as u64;
            cursor.forward();
        }
        Ok(bytes)
    }

    /// The database's unique id (RocksDB's `IDENTITY`): written when the
    /// database was created, kept by checkpoints.
    pub fn get_db_identity(&self) -> Result<Vec<u8>, Error> {
        Ok(self.core().identity.clone())
    }

    /// Stops the removal of segment files (compaction still runs, but the
    /// files it replaces stay on disk) until a matching
    /// [`Self::enable_file_deletions`]. Calls nest, as in RocksDB.
    pub fn disable_file_deletions(&self) -> Result<(), Error> {
        let hold = self.core().engine.hold_files();
        self.core()
            .file_holds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(hold);
        Ok(())
    }

    /// Undoes one [`Self::disable_file_deletions`]; once none is left, the
    /// files compaction replaced meanwhile are removed. Without a
    /// preceding disable it changes nothing.
    pub fn enable_file_deletions(&self) -> Result<(), Error> {
        self.core()
            .file_holds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        Ok(())
    }
}
