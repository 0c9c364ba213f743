//! `inspect`: what a directory holds.

use std::path::Path;

use serde::Serialize;

use crate::checksum::{Checksum, Digest};
use crate::error::Result;
use crate::keymap::Bounds;
use crate::kind::{self, Kind};
use crate::source::{self, Source};

/// One family's contents.
#[derive(Clone, Debug, Serialize)]
pub struct FamilyInfo {
    /// The family.
    pub name: String,
    /// Key count, byte totals and checksum (comparable across databases).
    #[serde(flatten)]
    pub digest: Digest,
}

/// What `inspect` found.
#[derive(Clone, Debug, Serialize)]
pub struct InspectReport {
    /// The directory.
    pub path: String,
    /// The database kind.
    pub kind: Kind,
    /// Total size of the directory's files, in bytes.
    pub bytes_on_disk: u64,
    /// Whether the database is the target of an unfinished migration.
    pub unfinished_migration: bool,
    /// Family by family.
    pub families: Vec<FamilyInfo>,
}

/// Opens `path` (read-only for RocksDB) and reads every family once.
pub fn inspect(path: &Path) -> Result<InspectReport> {
    let db = source::open_any(path)?;
    let mut families = Vec::new();
    for name in db.families() {
        families.push(FamilyInfo {
            digest: digest_of(&*db, &name)?,
            name,
        });
    }
    Ok(InspectReport {
        path: path.display().to_string(),
        kind: db.kind(),
        bytes_on_disk: kind::dir_bytes(path)?,
        unfinished_migration: db.has_marker_family(),
        families,
    })
}

/// The digest of every entry of `family`.
fn digest_of(db: &dyn Source, family: &str) -> Result<Digest> {
    let mut sum = Checksum::new();
    db.scan(family, &Bounds::default(), &mut |k, v| {
        sum.add(k, v);
        Ok(true)
    })?;
    Ok(sum.digest())
}
