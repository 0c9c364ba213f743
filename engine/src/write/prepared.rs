//! Prepared records: named payloads made durable on their own, outside the
//! log, for the first phase of a two-phase commit. A caller saves a
//! prepared write set under a name, and later removes it after committing
//! or abandoning it; whatever is still saved when the database is opened
//! again was prepared but never finished, and the caller recovers it.
//!
//! Each record is one file, `PREPARED-<name in hex>`, replaced atomically
//! (temporary file, fsync, rename, fsync of the directory):
//!
//! ```text
//! magic "ALEXPREP" (8) | version u32 LE (4) | payload length u64 LE (8)
//! | payload | CRC-32C u32 LE of everything before it (4)
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::{FileSystem, OpenMode};

/// The file name prefix of prepared records.
pub const PREPARED_PREFIX: &str = "PREPARED-";
/// The suffix of a record being written.
const TMP_SUFFIX: &str = ".tmp";
const MAGIC: &[u8; 8] = b"ALEXPREP";
const VERSION: u32 = 1;
const MAGIC_BYTES: usize = 8;
const VERSION_AT: usize = MAGIC_BYTES;
const LEN_AT: usize = VERSION_AT + 4;
/// Bytes before the payload.
const HEADER_BYTES: usize = LEN_AT + 8;
const CRC_BYTES: usize = 4;

/// The path of the record named `name` in `dir`.
fn record_path(dir: &Path, name: &[u8]) -> PathBuf {
    let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{PREPARED_PREFIX}{hex}"))
}

/// Saves `payload` under `name`, replacing any record of that name, and
/// returns once it is on stable storage.
pub(crate) fn save(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    name: &[u8],
    payload: &[u8],
) -> Result<()> {
    let dst = record_path(dir, name);
    let mut tmp = dst.clone().into_os_string();
    tmp.push(TMP_SUFFIX);
    let tmp = PathBuf::from(tmp);
    let _ = fs.remove_file(&tmp);
    let file = fs
        .open(&tmp, OpenMode::CreateNew)
        .map_err(|e| Error::io(&tmp, e))?;
    file.write_all_at(&encode(payload), 0)
        .and_then(|()| file.sync_data())
        .map_err(|e| Error::io(&tmp, e))?;
    drop(file);
    fs.rename(&tmp, &dst).map_err(|e| Error::io(&dst, e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Removes the record named `name` (not an error if there is none).
pub(crate) fn remove(fs: &Arc<dyn FileSystem>, dir: &Path, name: &[u8]) -> Result<()> {
    let path = record_path(dir, name);
    match fs.remove_file(&path) {
        Ok(()) => fs.sync_dir(dir).map_err(|e| Error::io(dir, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// Every saved record, as `(name, payload)`, in name order. Leftover
/// temporary files (a crash mid-save) are ignored; a damaged record is a
/// corruption error.
pub(crate) fn load_all(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let names = fs.list_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut records = Vec::new();
    for file_name in names {
        let Some(hex) = file_name.strip_prefix(PREPARED_PREFIX) else {
            continue;
        };
        if hex.ends_with(TMP_SUFFIX) {
            continue;
        }
        let path = dir.join(&file_name);
        let name = decode_hex(hex).ok_or_else(|| Error::corruption(&path, 0, "bad record name"))?;
        let bytes = fs.read_file(&path).map_err(|e| Error::io(&path, e))?;
        let payload = decode(&bytes).map_err(|reason| Error::corruption(&path, 0, reason))?;
        records.push((name, payload));
    }
    records.sort();
    Ok(records)
}

fn encode(payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_BYTES + payload.len() + CRC_BYTES);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(payload);
    let crc = crate::format::crc::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn decode(b: &[u8]) -> std::result::Result<Vec<u8>, String> {
    if b.len() < HEADER_BYTES + CRC_BYTES || &b[..MAGIC_BYTES] != MAGIC {
        return Err("not a prepared record".into());
    }
    let body = &b[..b.len() - CRC_BYTES];
    let crc = u32::from_le_bytes(b[b.len() - CRC_BYTES..].try_into().expect("4 bytes"));
    if crate::format::crc::crc32c(body) != crc {
        return Err("prepared record checksum mismatch".into());
    }
    let version = u32::from_le_bytes(b[VERSION_AT..LEN_AT].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!("unknown prepared record version {version}"));
    }
    let len = u64::from_le_bytes(b[LEN_AT..HEADER_BYTES].try_into().expect("8 bytes"));
    if len != (body.len() - HEADER_BYTES) as u64 {
        return Err("prepared record length mismatch".into());
    }
    Ok(body[HEADER_BYTES..].to_vec())
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.is_empty() || !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{PREPARED_PREFIX, decode, encode, load_all, remove, save};
    use crate::io::{FileSystem, StdFileSystem};

    #[test]
    fn records_round_trip_and_damage_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(StdFileSystem);
        save(&fs, dir.path(), b"t1", b"payload one").unwrap();
        save(&fs, dir.path(), b"t2", b"").unwrap();
        save(&fs, dir.path(), b"t1", b"payload two").unwrap();
        std::fs::write(dir.path().join(format!("{PREPARED_PREFIX}74.tmp")), b"torn").unwrap();
        let all = load_all(&fs, dir.path()).unwrap();
        assert_eq!(
            all,
            [
                (b"t1".to_vec(), b"payload two".to_vec()),
                (b"t2".to_vec(), Vec::new())
            ]
        );
        remove(&fs, dir.path(), b"t1").unwrap();
        remove(&fs, dir.path(), b"t1").unwrap();
        assert_eq!(load_all(&fs, dir.path()).unwrap().len(), 1);
        let mut bytes = encode(b"abc");
        bytes[21] ^= 1;
        assert!(decode(&bytes).is_err());
        assert!(decode(&bytes[..10]).is_err());
    }
}
