//! The comparator name of each column family, persisted in `COMPARATORS` in
//! the database directory, so that a column family is never opened with a
//! comparator other than the one that ordered it: RocksDB keeps the name in
//! its MANIFEST and refuses such an open with `Invalid argument: <new>:
//! does not match existing comparator <old>`, and so does AlexDB.
//!
//! A column family is recorded the first time a read-write handle opens or
//! creates it (one without a custom comparator as
//! [`BYTEWISE_COMPARATOR`]), and forgotten when it is dropped. A column
//! family with no record (one written before the file existed, or opened
//! only read-only since) is accepted with any comparator. Checkpoints copy
//! the file.
//!
//! The file, all integers little-endian:
//!
//! ```text
//! offset  size  field
//! 0       8     magic, "ALXCMPN1"
//! 8       4     number of records, n
//! 12      ...   n records: name length (4), name, comparator length (4), comparator
//! end-4   4     CRC-32C of every byte before it
//! ```
//!
//! It is replaced atomically (temporary file, fsync, rename, fsync of the
//! directory). A file whose checksum or lengths do not hold is reported as
//! `Corruption`.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use alexdb_engine::io::{FileSystem, StdFileSystem};

use crate::{ColumnFamilyDescriptor, Error, Options};

/// Name of the file.
pub(crate) const COMPARATORS_FILE: &str = "COMPARATORS";

/// The name RocksDB gives its default, bytewise comparator.
pub(crate) const BYTEWISE_COMPARATOR: &str = "leveldb.BytewiseComparator";

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"ALXCMPN1";
/// Where the record count starts.
const COUNT_OFFSET: usize = MAGIC.len();
/// Where the records start.
const RECORDS_OFFSET: usize = COUNT_OFFSET + 4;
/// Bytes of the trailing checksum.
const CRC_BYTES: usize = 4;

/// Column family name to comparator name.
type Names = BTreeMap<String, String>;

/// The comparator name of `opts`.
pub(crate) fn name_of(opts: &Options) -> &str {
    opts.comparator
        .as_ref()
        .map_or(BYTEWISE_COMPARATOR, |c| c.name.as_str())
}

/// Fails as RocksDB does if a column family of `cfs` was recorded with
/// another comparator than its options'; with `record`, records the ones
/// not recorded yet.
pub(crate) fn check_open(
    dir: &Path,
    cfs: &[ColumnFamilyDescriptor],
    record: bool,
) -> Result<(), Error> {
    let mut names = read(dir)?;
    let mut added = false;
    for cf in cfs {
        let new = name_of(&cf.options);
        match names.get(&cf.name) {
            Some(old) if old != new => return Err(mismatch(new, old)),
            Some(_) => {}
            None if record => {
                names.insert(cf.name.clone(), new.to_owned());
                added = true;
            }
            None => {}
        }
    }
    if added {
        write(dir, &names)?;
    }
    Ok(())
}

/// [`check_open`] before the engine opens (or for an open it refused),
/// recording nothing: a comparator that does not match the recorded one
/// fails with RocksDB's error, before the engine records it as the
/// family's key order or refuses the open for the order it keeps. A file
/// that cannot be read is left for [`check_open`] to report.
pub(crate) fn check_before_open(dir: &Path, cfs: &[ColumnFamilyDescriptor]) -> Result<(), Error> {
    let Ok(names) = read(dir) else {
        return Ok(());
    };
    for cf in cfs {
        let new = name_of(&cf.options);
        if let Some(old) = names.get(&cf.name)
            && old != new
        {
            return Err(mismatch(new, old));
        }
    }
    Ok(())
}

/// Records that column family `name` now has comparator `comparator` (it
/// was just created).
pub(crate) fn record(dir: &Path, name: &str, comparator: &str) -> Result<(), Error> {
    let mut names = read(dir)?;
    names.insert(name.to_owned(), comparator.to_owned());
    write(dir, &names)
}

/// Forgets column family `name` (it was just dropped).
pub(crate) fn forget(dir: &Path, name: &str) -> Result<(), Error> {
    let mut names = read(dir)?;
    if names.remove(name).is_some() {
        write(dir, &names)?;
    }
    Ok(())
}

/// Copies the file of the database at `from` into `to`, if it has one.
pub(crate) fn copy(from: &Path, to: &Path) -> Result<(), Error> {
    match fs::copy(from.join(COMPARATORS_FILE), to.join(COMPARATORS_FILE)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(format_args!(
            "{}: {e}",
            to.join(COMPARATORS_FILE).display()
        ))),
        _ => Ok(()),
    }
}

/// RocksDB's error for opening a column family ordered by `old` with `new`.
fn mismatch(new: &str, old: &str) -> Error {
    Error::invalid_argument(format_args!(
        "{new}: does not match existing comparator {old}"
    ))
}

/// The recorded names (none if there is no file).
fn read(dir: &Path) -> Result<Names, Error> {
    let path = dir.join(COMPARATORS_FILE);
    match fs::read(&path) {
        Ok(bytes) => decode(&bytes).ok_or_else(|| {
            Error::corruption(format_args!(
                "{}: bad comparator names file",
                path.display()
            ))
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Names::new()),
        Err(e) => Err(Error::io(format_args!("{}: {e}", path.display()))),
    }
}

/// Replaces the file with `names`.
fn write(dir: &Path, names: &Names) -> Result<(), Error> {
    let path = dir.join(COMPARATORS_FILE);
    let tmp = dir.join("COMPARATORS.tmp");
    let bytes = encode(names);
    let write = || -> io::Result<()> {
        let file = fs::File::create(&tmp)?;
        io::Write::write_all(&mut &file, &bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, &path)?;
        StdFileSystem.sync_dir(dir)
    };
    write().map_err(|e| Error::io(format_args!("{}: {e}", path.display())))
}

/// The file's bytes for `names`.
fn encode(names: &Names) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(names.len() as u32).to_le_bytes());
    for (family, comparator) in names {
        for text in [family, comparator] {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The names in `bytes`, or `None` if they are not a whole, intact file.
fn decode(bytes: &[u8]) -> Option<Names> {
    let body_len = bytes.len().checked_sub(CRC_BYTES)?;
    let (body, crc) = bytes.split_at(body_len);
    if crc32c::crc32c(body).to_le_bytes() != crc || body.get(..MAGIC.len())? != MAGIC {
        return None;
    }
    let count = read_u32(body, COUNT_OFFSET)?;
    let mut at = RECORDS_OFFSET;
    let mut names = Names::new();
    for _ in 0..count {
        let family = read_text(body, &mut at)?;
        let comparator = read_text(body, &mut at)?;
        names.insert(family, comparator);
    }
    (at == body.len()).then_some(names)
}

/// The little-endian `u32` at `at`.
fn read_u32(bytes: &[u8], at: usize) -> Option<usize> {
    let raw = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(raw.try_into().ok()?) as usize)
}

/// The length-prefixed UTF-8 text at `*at`, moving `*at` past it.
fn read_text(bytes: &[u8], at: &mut usize) -> Option<String> {
    let len = read_u32(bytes, *at)?;
    let start = at.checked_add(4)?;
    let end = start.checked_add(len)?;
    let text = String::from_utf8(bytes.get(start..end)?.to_vec()).ok()?;
    *at = end;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::{Names, decode, encode};

    #[test]
    fn names_round_trip() {
        let mut names = Names::new();
        names.insert("default".into(), "leveldb.BytewiseComparator".into());
        names.insert("rev".into(), "reverse".into());
        assert_eq!(decode(&encode(&names)), Some(names));
    }

    #[test]
    fn a_flipped_byte_or_a_torn_tail_is_refused() {
        let mut names = Names::new();
        names.insert("rev".into(), "reverse".into());
        let bytes = encode(&names);
        let mut flipped = bytes.clone();
        flipped[14] ^= 1;
        assert_eq!(decode(&flipped), None);
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode(&[]), None);
    }
}
