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
//! The copy is built in `<dir>.tmp`: every file synced (a hard link shares
//! the source's inode, synced through the source), then the staging
//! directory synced, then renamed to `<dir>` and the parent synced. That
//! rename is the commit: a crash leaves either no `<dir>` or a whole one
//! (and perhaps a `<dir>.tmp` leftover, which the next checkpoint to `<dir>`
//! removes). Every file operation goes through the database's
//! [`FileSystem`], so fault injection and the power-loss model cover it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use crate::db::keyspace::write_manifest;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::io::{FileHandle, FileSystem, OpenMode};
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
/// must not exist yet. Returns the files it holds. On an error `dir` is
/// not left behind.
pub(crate) fn create(shared: &Shared, dir: &Path) -> Result<Vec<CheckpointFile>> {
    let fs = &*shared.fs;
    if crate::io::exists(fs, dir).map_err(|e| Error::io(dir, e))? {
        return Err(Error::InvalidArgument(format!(
            "checkpoint directory {} already exists",
            dir.display()
        )));
    }
    let staging = staging_dir(dir);
    if crate::io::exists(fs, &staging).map_err(|e| Error::io(&staging, e))? {
        fs.remove_dir_all(&staging)
            .map_err(|e| Error::io(&staging, e))?;
    }
    if let Err(e) = crate::io::create_dir_all_durably(fs, &staging) {
        let _ = fs.remove_dir_all(&staging);
        return Err(Error::io(&staging, e));
    }
    let files = match fill(shared, &staging) {
        Ok(files) => files,
        Err(err) => {
            let _ = fs.remove_dir_all(&staging);
            return Err(err);
        }
    };
    if let Err(e) = fs.rename(&staging, dir) {
        let _ = fs.remove_dir_all(&staging);
        return Err(Error::io(dir, e));
    }
    let parent = crate::io::parent_dir(dir).unwrap_or(dir);
    if let Err(e) = fs.sync_dir(parent) {
        // Not committed: the rename may not survive a power loss. Take it
        // back rather than leave a checkpoint the caller was told failed.
        let _ = fs.remove_dir_all(dir);
        return Err(Error::io(parent, e));
    }
    Ok(files)
}

/// `<dir>.tmp`, where the checkpoint is assembled.
fn staging_dir(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Copies the manifest and every live segment into `staging` and syncs
/// them and the directory. Writers are held off while the active segment
/// is copied, compaction (which replaces segments) until the end.
fn fill(shared: &Shared, staging: &Path) -> Result<Vec<CheckpointFile>> {
    let fs = &*shared.fs;
    let _compaction = shared
        .compaction_lock
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let writer = shared.lock_writer();
    shared.check_poison()?;
    // Writes, syncs and renames the file into place (and syncs `staging`).
    write_manifest(&shared.fs, staging, &writer.manifest)?;
    let mut files = vec![file_entry(
        fs,
        staging,
        crate::db::keyspace::MANIFEST_FILE,
        false,
    )?];
    let active = writer.active.id();
    // Synced once writers may go on.
    let mut unsynced: Vec<Unsynced> = Vec::new();
    for segment in shared.segments.load().iter() {
        let name = crate::segment::file_name(segment.id());
        let target = staging.join(&name);
        let immutable = segment.id() != active;
        let copy = match immutable {
            true => link_or_copy(fs, segment, &target)?,
            false => copy_written_prefix(fs, segment, &target)?,
        };
        unsynced.push(copy);
        files.push(file_entry(fs, staging, &name, immutable)?);
    }
    drop(writer);
    for copy in unsynced {
        let (path, synced) = match &copy {
            Unsynced::Link(segment) => (segment.path(), segment.sync()),
            Unsynced::Copy(file) => (file.path(), file.sync_data()),
        };
        synced.map_err(|e| Error::io(path, e))?;
    }
    fs.sync_dir(staging).map_err(|e| Error::io(staging, e))?;
    Ok(files)
}

/// A file of the checkpoint still to be synced.
enum Unsynced {
    /// A hard link: synced through the source segment (the same inode). A
    /// sealed segment is synced when sealed, but one recovered from an
    /// unsynced log may not be yet.
    Link(Arc<Segment>),
    /// A copy.
    Copy(Arc<dyn FileHandle>),
}

/// Describes the file `name` of `dir`.
fn file_entry(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    immutable: bool,
) -> Result<CheckpointFile> {
    let path = dir.join(name);
    let bytes = fs.metadata(&path).map_err(|e| Error::io(&path, e))?.len;
    Ok(CheckpointFile {
        name: name.to_string(),
        bytes,
        immutable,
    })
}

/// Hard-links the sealed `segment` to `target`, or copies it where the file
/// system cannot link.
fn link_or_copy(fs: &dyn FileSystem, segment: &Arc<Segment>, target: &Path) -> Result<Unsynced> {
    if fs.hard_link(segment.path(), target).is_ok() {
        return Ok(Unsynced::Link(segment.clone()));
    }
    copy_file(fs, segment.path(), target)
        .map(Unsynced::Copy)
        .map_err(|e| Error::io(target, e))
}

/// Copies the file `source` to the new file `target`.
fn copy_file(fs: &dyn FileSystem, source: &Path, target: &Path) -> io::Result<Arc<dyn FileHandle>> {
    const CHUNK: u64 = 1 << 20;
    let from = fs.open(source, OpenMode::ReadOnly)?;
    let to = fs.open(target, OpenMode::CreateNew)?;
    let len = from.len()?;
    let mut buf = vec![0; CHUNK.min(len) as usize];
    let mut at = 0;
    while at < len {
        let n = CHUNK.min(len - at) as usize;
        from.read_exact_at(&mut buf[..n], at)?;
        to.write_all_at(&buf[..n], at)?;
        at += n as u64;
    }
    Ok(to)
}

/// Writes the active segment's header and frames written so far to the new
/// file `target`, padded with zeros to the source file's current length.
fn copy_written_prefix(fs: &dyn FileSystem, segment: &Segment, target: &Path) -> Result<Unsynced> {
    let bytes = segment.bytes();
    let written = usize::try_from(segment.written())
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let write = || -> io::Result<Arc<dyn FileHandle>> {
        let file = fs.open(target, OpenMode::CreateNew)?;
        file.write_all_at(&bytes[..written], 0)?;
        file.set_len(bytes.len() as u64)?;
        Ok(file)
    };
    write()
        .map(Unsynced::Copy)
        .map_err(|e| Error::io(target, e))
}
