//! The database identity: a unique id written to `IDENTITY` in the database
//! directory when the database is first opened, as RocksDB does. Copies
//! made by `Checkpoint` keep it.

use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use alexdb_engine::io::{FileSystem, StdFileSystem};

use crate::Error;

/// Name of the identity file.
pub(crate) const IDENTITY_FILE: &str = "IDENTITY";

/// The identity of the database at `dir`, written first if it has none
/// (unless `read_only`, where a missing identity is read as empty).
pub(crate) fn ensure(dir: &Path, read_only: bool) -> Result<Vec<u8>, Error> {
    let path = dir.join(IDENTITY_FILE);
    match fs::read(&path) {
        Ok(id) => Ok(id),
        Err(e) if e.kind() == io::ErrorKind::NotFound && read_only => Ok(Vec::new()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_new(dir),
        Err(e) => Err(Error::io(format_args!("{}: {e}", path.display()))),
    }
}

/// Writes a fresh identity to `dir/IDENTITY` (through a temporary file and
/// a rename, then an fsync of the directory).
fn write_new(dir: &Path) -> Result<Vec<u8>, Error> {
    let id = new_id().into_bytes();
    let path = dir.join(IDENTITY_FILE);
    let tmp = dir.join("IDENTITY.tmp");
    let write = || -> io::Result<()> {
        let file = fs::File::create(&tmp)?;
        io::Write::write_all(&mut &file, &id)?;
        file.sync_all()?;
        fs::rename(&tmp, &path)?;
        StdFileSystem.sync_dir(dir)
    };
    write().map_err(|e| Error::io(format_args!("{}: {e}", path.display())))?;
    Ok(id)
}

/// A random id in UUID text form (`8-4-4-4-12` hex digits), from the
/// standard library's randomly keyed hasher, the time and the process id.
fn new_id() -> String {
    let mut bits = [0u64; 2];
    for (i, word) in bits.iter_mut().enumerate() {
        let mut hasher = RandomState::new().build_hasher();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(now);
        hasher.write_u32(std::process::id());
        hasher.write_usize(i);
        *word = hasher.finish();
    }
    let hex = format!("{:016x}{:016x}", bits[0], bits[1]);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Copies the identity of the database at `from` into `to`, if it has one.
pub(crate) fn copy(from: &Path, to: &Path) -> Result<(), Error> {
    match fs::copy(from.join(IDENTITY_FILE), to.join(IDENTITY_FILE)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(format_args!(
            "{}: {e}",
            to.join(IDENTITY_FILE).display()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{ensure, new_id};

    #[test]
    fn ids_are_uuid_shaped_and_differ() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 36);
        assert_ne!(a, b);
    }

    #[test]
    fn identity_is_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure(dir.path(), false).unwrap();
        assert_eq!(ensure(dir.path(), false).unwrap(), first);
    }
}
