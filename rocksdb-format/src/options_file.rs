//! The `OPTIONS-<number>` file: an ini-like text file RocksDB writes on
//! every open. We read each column family's `comparator` and
//! `merge_operator` from its `[CFOptions "name"]` section.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{FormatError, Result};

/// What the OPTIONS file says about one column family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyOptions {
    /// The comparator's name, e.g. `leveldb.BytewiseComparator`.
    pub comparator: Option<String>,
    /// The merge operator's name; `None` when the file says `nullptr`.
    pub merge_operator: Option<String>,
}

/// Reads the newest `OPTIONS-*` file in `dir`; an empty map when there is
/// none (databases from before RocksDB 4.x).
pub fn read_newest(dir: &Path) -> Result<BTreeMap<String, FamilyOptions>> {
    let Some(path) = newest(dir)? else {
        return Ok(BTreeMap::new());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| FormatError::io(&path, e))?;
    Ok(parse(&text))
}

fn newest(dir: &Path) -> Result<Option<std::path::PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| FormatError::io(dir, e))?;
    let mut best: Option<(u64, std::path::PathBuf)> = None;
    for entry in entries {
        let entry = entry.map_err(|e| FormatError::io(dir, e))?;
        let name = entry.file_name();
        let Some(number) = name
            .to_str()
            .and_then(|n| n.strip_prefix("OPTIONS-"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| number > *b) {
            best = Some((number, entry.path()));
        }
    }
    Ok(best.map(|(_, p)| p))
}

/// Parses OPTIONS text into per-family settings.
pub fn parse(text: &str) -> BTreeMap<String, FamilyOptions> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            current = family_section(line);
            if let Some(name) = &current {
                out.entry(name.clone())
                    .or_insert_with(FamilyOptions::default);
            }
            continue;
        }
        let (Some(name), Some((key, value))) = (&current, line.split_once('=')) else {
            continue;
        };
        let Some(opts) = out.get_mut(name) else {
            continue;
        };
        match key.trim() {
            "comparator" => opts.comparator = named(value),
            "merge_operator" => opts.merge_operator = named(value),
            _ => {}
        }
    }
    out
}

/// The family name of a `[CFOptions "name"]` header.
fn family_section(line: &str) -> Option<String> {
    let inner = line.strip_prefix("[CFOptions \"")?.strip_suffix("\"]")?;
    Some(inner.to_string())
}

/// A customizable object's name: `nullptr` is none, `{id=X;...}` is X.
fn named(value: &str) -> Option<String> {
    let v = value.trim();
    if v.is_empty() || v == "nullptr" {
        return None;
    }
    if let Some(body) = v.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        return body
            .split(';')
            .find_map(|kv| kv.trim().strip_prefix("id="))
            .map(|id| id.trim().to_string());
    }
    Some(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_comparator_and_merge_operator_per_family() {
        let text = "[Version]\n  rocksdb_version=11.8.1\n\n[CFOptions \"default\"]\n  \
                    comparator=leveldb.BytewiseComparator\n  merge_operator=nullptr\n\n\
                    [TableOptions/BlockBasedTable \"default\"]\n  format_version=7\n\n\
                    [CFOptions \"counts\"]\n  merge_operator={id=add;}\n";
        let got = parse(text);
        assert_eq!(
            got["default"].comparator.as_deref(),
            Some("leveldb.BytewiseComparator")
        );
        assert_eq!(got["default"].merge_operator, None);
        assert_eq!(got["counts"].merge_operator.as_deref(), Some("add"));
    }
}
