//! Recognizing a directory that holds a RocksDB database, so that opening
//! one says what it is: AlexDB reads only its own format, and a RocksDB
//! database is copied into it with `alexdb-migrate`.

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

fn is_rocksdb_file(name: &str) -> bool {
    let numbered =
        |s: Option<&str>| s.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    name == "CURRENT"
        || numbered(name.strip_prefix("MANIFEST-"))
        || numbered(name.strip_prefix("OPTIONS-"))
        || numbered(name.strip_suffix(".sst"))
        || numbered(name.strip_suffix(".log"))
}

/// The error for opening the RocksDB database at `dir` (holding `file`).
pub(crate) fn not_alexdb(dir: &Path, file: &str) -> Error {
    Error::not_supported(format_args!(
        "{} holds a RocksDB database ({file}); AlexDB reads only its own format: \
         copy it with `alexdb-migrate copy --from {} --to <new directory>`",
        dir.display(),
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::is_rocksdb_file;

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
}
