//! The database's current shape: `CURRENT` names the live MANIFEST, whose
//! `VersionEdit` records, applied in order, give each column family's name,
//! comparator, oldest WAL still holding its writes, and live table files.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{FormatError, Result};
use crate::log;
use crate::version_edit::{self, NewFile, VersionEdit};

/// One live column family as the MANIFEST describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyState {
    /// The family's id.
    pub id: u32,
    /// The family's name.
    pub name: String,
    /// The comparator name recorded when the family was created.
    pub comparator: Option<String>,
    /// WALs numbered below this hold nothing unflushed for the family.
    pub log_number: u64,
    /// Live table files by file number.
    pub files: BTreeMap<u64, NewFile>,
}

/// The state after replaying a MANIFEST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Live column families by id.
    pub families: BTreeMap<u32, FamilyState>,
    /// The last sequence number recorded.
    pub last_sequence: u64,
    /// The MANIFEST's file name.
    pub file_name: String,
}

/// Reads `CURRENT` in `dir` and replays the MANIFEST it names.
pub fn read(dir: &Path) -> Result<Manifest> {
    let current_path = dir.join("CURRENT");
    let current = std::fs::read(&current_path).map_err(|e| FormatError::io(&current_path, e))?;
    let name = parse_current(&current)?;
    let path = dir.join(&name);
    let bytes = std::fs::read(&path).map_err(|e| FormatError::io(&path, e))?;
    let number = name
        .strip_prefix("MANIFEST-")
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    let mut manifest = replay(&bytes, number, &name)?;
    manifest.file_name = name;
    Ok(manifest)
}

/// The MANIFEST file name held by a `CURRENT` file.
pub fn parse_current(bytes: &[u8]) -> Result<String> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| FormatError::corrupt("CURRENT", "not UTF-8"))?;
    let name = text
        .strip_suffix('\n')
        .ok_or_else(|| FormatError::corrupt("CURRENT", "no trailing newline"))?;
    let valid = name.starts_with("MANIFEST-") && !name.contains(['/', '\\']) && name.len() > 9;
    if !valid {
        return Err(FormatError::corrupt(
            "CURRENT",
            format!("`{name}` is not a MANIFEST name"),
        ));
    }
    Ok(name.to_string())
}

/// Applies the MANIFEST log `bytes` from an empty database.
pub fn replay(bytes: &[u8], number: u64, what: &str) -> Result<Manifest> {
    let mut state = Manifest {
        families: BTreeMap::from([(0, new_family(0, "default".into()))]),
        last_sequence: 0,
        file_name: what.to_string(),
    };
    let mut group: Vec<VersionEdit> = Vec::new();
    for record in log::read_all(bytes, number, what)? {
        let edit = version_edit::decode(&record)?;
        match edit.remaining_in_atomic_group {
            Some(remaining) => {
                group.push(edit);
                if remaining == 0 {
                    for e in group.drain(..) {
                        apply(&mut state, e)?;
                    }
                }
            }
            None => apply(&mut state, edit)?,
        }
    }
    // An unfinished atomic group at the end was never committed.
    Ok(state)
}

fn new_family(id: u32, name: String) -> FamilyState {
    FamilyState {
        id,
        name,
        comparator: None,
        log_number: 0,
        files: BTreeMap::new(),
    }
}

fn apply(state: &mut Manifest, edit: VersionEdit) -> Result<()> {
    if let Some(seq) = edit.last_sequence {
        state.last_sequence = seq;
    }
    let id = edit.column_family;
    if let Some(name) = edit.column_family_add {
        state.families.insert(id, new_family(id, name));
    }
    if edit.column_family_drop {
        state.families.remove(&id);
        return Ok(());
    }
    let Some(family) = state.families.get_mut(&id) else {
        return Err(FormatError::corrupt(
            "MANIFEST",
            format!("edit for unknown column family {id}"),
        ));
    };
    if edit.comparator.is_some() {
        family.comparator = edit.comparator;
    }
    if let Some(log) = edit.log_number {
        family.log_number = log;
    }
    for (_, number) in edit.deleted_files {
        family.files.remove(&number);
    }
    for file in edit.new_files {
        family.files.insert(file.number, file);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_must_name_a_manifest() {
        assert_eq!(
            parse_current(b"MANIFEST-000005\n").unwrap(),
            "MANIFEST-000005"
        );
        assert!(parse_current(b"MANIFEST-000005").is_err());
        assert!(parse_current(b"../etc/passwd\n").is_err());
        assert!(parse_current(&[0xff, b'\n']).is_err());
    }

    #[test]
    fn empty_manifest_has_the_default_family() {
        let m = replay(&[], 1, "MANIFEST-000001").unwrap();
        assert_eq!(m.families[&0].name, "default");
    }
}
