//! A backup's description file, `meta/<id>`: a few lines of text naming
//! the backup's files, ending with a CRC-32C of everything before it.
//!
//! ```text
//! alexdb-backup 1
//! timestamp 1700000000
//! file private/3/MANIFEST MANIFEST 64
//! file shared/0000000001.seg_1a2b3c4d_33554432 0000000001.seg 33554432
//! crc 89abcdef
//! ```
//!
//! Each `file` line names the file inside the backup directory, its name in
//! a restored database, and its length.

use std::fmt::Write as _;

use crate::Error;

const HEADER: &str = "alexdb-backup 1";

/// One file of a backup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BackupFile {
    /// Path relative to the backup directory.
    pub(crate) stored: String,
    /// Name in the database directory.
    pub(crate) name: String,
    /// Length in bytes.
    pub(crate) bytes: u64,
}

/// What `meta/<id>` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BackupMeta {
    pub(crate) timestamp: i64,
    pub(crate) files: Vec<BackupFile>,
}

impl BackupMeta {
    /// The file's text.
    pub(crate) fn encode(&self) -> String {
        let mut text = format!("{HEADER}\ntimestamp {}\n", self.timestamp);
        for file in &self.files {
            let _ = writeln!(text, "file {} {} {}", file.stored, file.name, file.bytes);
        }
        let crc = crc32c::crc32c(text.as_bytes());
        let _ = writeln!(text, "crc {crc:08x}");
        text
    }

    /// Parses the file's text; damage is RocksDB's `Corruption`.
    pub(crate) fn decode(text: &str) -> Result<Self, Error> {
        let bad = || Error::corruption("backup meta file is damaged");
        let body_end = text.rfind("crc ").ok_or_else(bad)?;
        let (body, crc_line) = text.split_at(body_end);
        let crc = u32::from_str_radix(crc_line.trim_start_matches("crc ").trim(), 16)
            .map_err(|_| bad())?;
        if crc != crc32c::crc32c(body.as_bytes()) {
            return Err(bad());
        }
        let mut lines = body.lines();
        if lines.next() != Some(HEADER) {
            return Err(bad());
        }
        let timestamp = lines
            .next()
            .and_then(|l| l.strip_prefix("timestamp "))
            .and_then(|t| t.parse().ok())
            .ok_or_else(bad)?;
        let files = lines
            .map(parse_file)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        Ok(Self { timestamp, files })
    }
}

/// Parses a `file <stored> <name> <bytes>` line.
fn parse_file(line: &str) -> Option<BackupFile> {
    let mut words = line.strip_prefix("file ")?.split(' ');
    let file = BackupFile {
        stored: words.next()?.to_string(),
        name: words.next()?.to_string(),
        bytes: words.next()?.parse().ok()?,
    };
    words.next().is_none().then_some(file)
}

#[cfg(test)]
mod tests {
    use super::{BackupFile, BackupMeta};

    fn sample() -> BackupMeta {
        BackupMeta {
            timestamp: 1_700_000_000,
            files: vec![BackupFile {
                stored: "private/1/MANIFEST".into(),
                name: "MANIFEST".into(),
                bytes: 64,
            }],
        }
    }

    #[test]
    fn round_trips() {
        let meta = sample();
        assert_eq!(BackupMeta::decode(&meta.encode()).unwrap(), meta);
    }

    #[test]
    fn a_changed_byte_is_corruption() {
        let text = sample().encode().replace("64", "65");
        let err = BackupMeta::decode(&text).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Corruption);
    }
}
