//! Checkpoints: an openable, consistent copy of an open database in another
//! directory, taken while it keeps running.
//!
//! Sealed segments never change again, so the copy hard-links them (and
//! copies them only where a link is impossible, e.g. across file systems).
//! The active log segment is still appended to: the copy takes its header
//! and every frame written so far, up to the writer's current end, with the
//! writer lock held so that no frame is half in the copy. The rest of the
//! copied file is zero, which recovery reads as never-written space. The
//! compaction lock is held too, so no segment is replaced meanwhile.
//!
//! The copy is built in `<dir>.tmp` and renamed to `<dir>` once complete and
//! synced: a crash leaves either no checkpoint or a whole one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use crate::db::keyspace::write_manifest;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::segment::Segment;

/// One file of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointFile {
    /// The file's name inside the checkpoint directory.
    pub name: String,
    /// Its length in bytes.
    pub bytes: u64,
    /// Whether the source file can never change again (a sealed segment):
    /// a backup may share it between checkpoints of the same database.
    pub immutable: bool,
}

/// Writes a checkpoint of the database behind `shared` into `dir`, which
/// must not exist yet. Returns the files it holds.
pub(crate) fn create(shared: &Shared, dir: &Path) -> Result<Vec<CheckpointFile>> {
    if dir.exists() {
        return Err(Error::InvalidArgument(format!(
            "checkpoint directory {} already exists",
            dir.display()
        )));
    }
    let staging = staging_dir(dir);
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
    }
    fs::create_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
    let files = match fill(shared, &staging) {
        Ok(files) => files,
        Err(err) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(err);
        }
    };
    shared
        .fs
        .rename(&staging, dir)
        .map_err(|e| Error::io(dir, e))?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        shared
            .fs
            .sync_dir(parent)
            .map_err(|e| Error::io(parent, e))?;
    }
    Ok(files)
}

/// `<dir>.tmp`, where the checkpoint is assembled.
fn staging_dir(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Copies the manifest and every live segment into `staging`, with
/// compaction and writers held off.
fn fill(shared: &Shared, staging: &Path) -> Result<Vec<CheckpointFile>> {
    let _compaction = shared
        .compaction_lock
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let writer = shared.lock_writer();
    shared.check_poison()?;
    write_manifest(&shared.fs, staging, &writer.manifest)?;
    let mut files = vec![file_entry(
        staging,
        crate::db::keyspace::MANIFEST_FILE,
        false,
    )?];
    let active = writer.active.id();
    for segment in shared.segments.load().iter() {
        let name = crate::segment::file_name(segment.id());
        let target = staging.join(&name);
        let immutable = segment.id() != active;
        if immutable {
            link_or_copy(segment.path(), &target)?;
        } else {
            copy_written_prefix(segment, &target)?;
        }
        files.push(file_entry(staging, &name, immutable)?);
    }
    drop(writer);
    shared
        .fs
        .sync_dir(staging)
        .map_err(|e| Error::io(staging, e))?;
    Ok(files)
}

/// Describes the file `name` of `dir`.
fn file_entry(dir: &Path, name: &str, immutable: bool) -> Result<CheckpointFile> {
    let path = dir.join(name);
    let bytes = fs::metadata(&path).map_err(|e| Error::io(&path, e))?.len();
    Ok(CheckpointFile {
        name: name.to_string(),
        bytes,
        immutable,
    })
}

/// Hard-links `source` to `target`, or copies it (and syncs the copy) where
/// the file system cannot link.
fn link_or_copy(source: &Path, target: &Path) -> Result<()> {
    if fs::hard_link(source, target).is_ok() {
        return Ok(());
    }
    fs::copy(source, target).map_err(|e| Error::io(target, e))?;
    sync_file(target)
}

/// Writes the active segment's header and frames written so far to
/// `target`, padded with zeros to the source file's current length.
fn copy_written_prefix(segment: &Segment, target: &Path) -> Result<()> {
    let bytes = segment.bytes();
    let written = usize::try_from(segment.written())
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let write = || -> io::Result<()> {
        let file = fs::File::create(target)?;
        io::Write::write_all(&mut &file, &bytes[..written])?;
        file.set_len(bytes.len() as u64)?;
        file.sync_all()
    };
    write().map_err(|e| Error::io(target, e))
}

/// fsyncs the file at `path`.
fn sync_file(path: &Path) -> Result<()> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(path, e))
}
