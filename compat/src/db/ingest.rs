//! `ingest_external_file*`: adds the files of an
//! [`crate::SstFileWriter`] to a column family.
//!
//! All files of one call are read and checked first, then applied as one
//! write batch, so the ingestion is atomic: it happens whole or not at all,
//! and readers see all of it at once. As in RocksDB, the ingested entries
//! are newer than everything in the database, and within a file a range
//! deletion does not delete the file's own point entries (they share one
//! sequence number in RocksDB), so range deletions are applied first.

use std::fs;
use std::path::Path;

use super::{DBCommon, DBInner, ThreadMode};
use crate::column_family::DEFAULT_COLUMN_FAMILY_ID;
use crate::sst_file_writer::{EntryKind, decode};
use crate::{AsColumnFamilyRef, Error, IngestExternalFileOptions, WriteBatch, WriteOptions};

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Adds the entries of the files at `paths` to the default column
    /// family, atomically.
    pub fn ingest_external_file<P: AsRef<Path>>(&self, paths: Vec<P>) -> Result<(), Error> {
        self.ingest_external_file_opts(&IngestExternalFileOptions::default(), paths)
    }

    /// [`Self::ingest_external_file`] with options: `move_files` removes
    /// the source files once ingested; the others change nothing in AlexDB.
    pub fn ingest_external_file_opts<P: AsRef<Path>>(
        &self,
        opts: &IngestExternalFileOptions,
        paths: Vec<P>,
    ) -> Result<(), Error> {
        self.ingest(DEFAULT_COLUMN_FAMILY_ID, opts, &paths)
    }

    /// Adds the entries of the files at `paths` to column family `cf`.
    pub fn ingest_external_file_cf<P: AsRef<Path>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        paths: Vec<P>,
    ) -> Result<(), Error> {
        self.ingest(cf.cf_id(), &IngestExternalFileOptions::default(), &paths)
    }

    /// [`Self::ingest_external_file_cf`] with options.
    pub fn ingest_external_file_cf_opts<P: AsRef<Path>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        opts: &IngestExternalFileOptions,
        paths: Vec<P>,
    ) -> Result<(), Error> {
        self.ingest(cf.cf_id(), opts, &paths)
    }

    fn ingest<P: AsRef<Path>>(
        &self,
        cf: u32,
        opts: &IngestExternalFileOptions,
        paths: &[P],
    ) -> Result<(), Error> {
        let files = paths
            .iter()
            .map(|path| {
                let path = path.as_ref();
                fs::read(path).map_err(|e| Error::io(format_args!("{}: {e}", path.display())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let entries = files
            .iter()
            .map(|bytes| decode(bytes))
            .collect::<Result<Vec<_>, _>>()?;
        let mut batch = WriteBatch::default();
        let all = || entries.iter().flatten();
        for range in all().filter(|e| e.kind == EntryKind::DeleteRange) {
            batch.delete_range_in(cf, range.key, range.value);
        }
        for entry in all() {
            match entry.kind {
                EntryKind::Put => batch.put_in(cf, entry.key, entry.value),
                EntryKind::Delete => batch.delete_in(cf, entry.key),
                EntryKind::Merge => batch.merge_in(cf, entry.key, entry.value),
                EntryKind::DeleteRange => {}
            }
        }
        self.core().write(&batch, &WriteOptions::default())?;
        if opts.move_files {
            for path in paths {
                let path = path.as_ref();
                fs::remove_file(path)
                    .map_err(|e| Error::io(format_args!("{}: {e}", path.display())))?;
            }
        }
        Ok(())
    }
}
