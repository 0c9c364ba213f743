//! Recognizing a directory that holds a RocksDB database and the files
//! RocksDB owns in it: opening one without the opt-in says what it is and
//! how to convert it; a conversion moves exactly these files aside.

use std::fs;
use std::path::Path;

use crate::Error;

/// The first file of `dir` that only RocksDB writes (`CURRENT`,
/// `MANIFEST-<n>`, `OPTIONS-<n>`, `<n>.sst`, `<n>.log`), if any.
pub(crate) fn rocksdb_file(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.into_iter().find(|name| is_rocksdb_file(name))
}

pub(super) fn is_rocksdb_file(name: &str) -> bool {
    name == "CURRENT"
        || numbered(name.strip_prefix("MANIFEST-"))
        || numbered(name.strip_prefix("OPTIONS-"))
        || numbered(name.strip_suffix(".sst"))
        || numbered(name.strip_suffix(".log"))
}

/// Whether `name` is a file RocksDB writes into its database directory:
/// those of [`rocksdb_file`], its lock, identity and info logs, blob files,
/// old-style tables and its temporary files. A conversion moves these, and
/// only these, aside.
pub(super) fn is_rocksdb_owned(name: &str) -> bool {
    is_rocksdb_file(name)
        || matches!(name, "LOCK" | "IDENTITY" | "LOG")
        || name.starts_with("LOG.old.")
        || numbered(name.strip_suffix(".blob"))
        || numbered(name.strip_suffix(".ldb"))
        || name.ends_with(".dbtmp")
}

/// Whether `name` is one of RocksDB's WAL files (`<number>.log`), the only
/// files of a `wal_dir` kept apart from the database directory that a
/// conversion reads and moves aside.
pub(super) fn is_wal_file(name: &str) -> bool {
    numbered(name.strip_suffix(".log"))
}

/// Whether `s` is present and all ASCII digits.
fn numbered(s: Option<&str>) -> bool {
    s.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The error for opening the RocksDB database at `dir` (holding `file`)
/// without the opt-in to convert it.
pub(crate) fn not_alexdb(dir: &Path, file: &str) -> Error {
    Error::not_supported(format_args!(
        "{} holds a RocksDB database ({file}); AlexDB reads only its own format: \
         convert it in place by opening it read-write with \
         `Options::set_convert_rocksdb(true)` or the environment variable \
         {}=1 (RocksDB's files are kept in {}/{}), \
         or copy it with `alexdb-migrate copy --from {} --to <new directory>`",
        dir.display(),
        super::CONVERT_ENV,
        dir.display(),
        super::RETIRED_DIR,
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::{is_rocksdb_file, is_rocksdb_owned};

    #[test]
    fn rocksdb_names_and_not_alexdbs() {
        for name in [
            "CURRENT",
            "MANIFEST-000005",
            "OPTIONS-000007",
            "000008.sst",
            "000009.log",
        ] {
            assert!(is_rocksdb_file(name), "{name}");
        }
        for name in [
            "MANIFEST",
            "INDEX",
            "0000000001.seg",
            "LOG",
            "LOCK",
            "IDENTITY",
            "x.sst",
        ] {
            assert!(!is_rocksdb_file(name), "{name}");
        }
    }

    #[test]
    fn the_files_a_conversion_moves_aside() {
        for name in [
            "CURRENT",
            "LOCK",
            "IDENTITY",
            "LOG",
            "LOG.old.1732800000123456",
            "000012.blob",
            "000013.ldb",
            "000014.dbtmp",
            "OPTIONS-000015.dbtmp",
        ] {
            assert!(is_rocksdb_owned(name), "{name}");
        }
        for name in ["MANIFEST", "INDEX", "0000000001.seg", "notes.txt", "x.blob"] {
            assert!(!is_rocksdb_owned(name), "{name}");
        }
    }
}
