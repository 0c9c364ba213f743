//! Recovery for a reader that holds no lock: a read-only handle opened
//! beside a primary that may be writing, rotating and compacting right now.
//!
//! The reader reads the MANIFEST and recovers in [`Mode::ReadOnly`], which
//! changes nothing in the directory. Between reading the MANIFEST and
//! opening the files it lists, the primary's compaction may remove a listed
//! segment (it lists the output, then removes the inputs): then the reader
//! reads the MANIFEST again, up to [`ATTEMPTS`] times, and otherwise fails
//! with the error of its last attempt. Once a segment is mapped, its removal
//! does not matter: the map keeps its pages.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::db::keyspace::{self, MANIFEST_FILE};
use crate::error::{Error, Result};
use crate::format::manifest::Manifest;
use crate::io::FileSystem;

use super::files::is_vanished_segment;
use super::{Mode, Recovered, recover};
use crate::index::LeafForm;
use crate::mvcc::key_order::{KeyOrder, KeyspaceOrders};

/// How many times the MANIFEST is read before a missing segment is reported.
pub(crate) const ATTEMPTS: usize = 5;

/// Recovers the database in `dir` without changing anything in it. Returns
/// the MANIFEST read by the attempt that succeeded, with what it rebuilt.
pub(crate) fn recover_read_only(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    segment_bytes: u64,
    (form, given): (LeafForm, &HashMap<String, Arc<dyn KeyOrder>>),
) -> Result<(Manifest, Recovered)> {
    let mut attempt = 1;
    loop {
        let mut manifest = read_existing_manifest(fs, dir)?;
        let orders = KeyspaceOrders::resolve_for_reader(&mut manifest, given)?;
        match recover(
            fs,
            dir,
            &manifest,
            segment_bytes,
            Mode::ReadOnly,
            (form, &orders),
        ) {
            Ok(recovered) => return Ok((manifest, recovered)),
            Err(e) if attempt < ATTEMPTS && is_vanished_segment(&e) => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Reads the MANIFEST; a directory without one is no database (a reader
/// never creates one).
fn read_existing_manifest(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<Manifest> {
    match keyspace::read_manifest(fs, dir) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            match fs.metadata(dir) {
                Ok(_) => Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: format!("the directory holds no {MANIFEST_FILE}"),
                }),
                Err(_) => Err(Error::NotFound(dir.to_path_buf())),
            }
        }
        other => other,
    }
}
