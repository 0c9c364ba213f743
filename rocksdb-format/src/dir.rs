//! A RocksDB directory opened for reading: its column families and, per
//! family, the live entries a RocksDB reader would see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{FormatError, Result};
use crate::internal_key;
use crate::manifest::{self, FamilyState, Manifest};
use crate::options_file;
use crate::table::properties::{BYTEWISE, comparator_error};
use crate::table::{RangeTombstone, Table, TableIter, TableMeta};
use crate::version_edit::NewFile;
use crate::view::level::LevelIter;
use crate::view::merging::{EntryStream, MergingIter};
use crate::view::tombstones::{TombstoneSweep, truncate_to_table};
use crate::view::{FamilyIter, MergeFn};
use crate::wal::{self, Memtable, WalDamage};

/// A column family of the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnFamily {
    /// The family's name.
    pub name: String,
    /// The family's id.
    pub id: u32,
    /// The comparator's name (always the bytewise comparator: others are
    /// refused at open).
    pub comparator: String,
    /// The merge operator's name from the OPTIONS file, if one is set.
    pub merge_operator: Option<String>,
}

/// A RocksDB database directory, read without RocksDB. Nothing in the
/// directory is written. The directory must not be modified while open
/// (open it when no RocksDB process has it open).
#[derive(Debug)]
pub struct RocksDir {
    path: PathBuf,
    manifest: Manifest,
    families: Vec<ColumnFamily>,
    memtables: BTreeMap<u32, Memtable>,
    wal_damage: Option<WalDamage>,
    tombstones: BTreeMap<u32, Vec<RangeTombstone>>,
    table_entries: BTreeMap<u32, u64>,
    tables: BTreeMap<u64, TableMeta>,
}

impl RocksDir {
    /// Opens the database at `path`: reads `CURRENT`, the MANIFEST, the
    /// newest OPTIONS file, every live table's footer, properties, index
    /// and range tombstones, and replays the WALs' unflushed writes into
    /// memory, up to the first damaged record (see
    /// [`RocksDir::wal_damage`]). Refuses, with
    /// [`FormatError::Unsupported`], features this reader does not
    /// implement, before any entry is read (a feature visible only in a
    /// data block, such as a wide-column entity, is refused when the scan
    /// reaches it).
    pub fn open(path: &Path) -> Result<RocksDir> {
        Self::open_with_wal_dir(path, path)
    }

    /// [`RocksDir::open`] for a database whose WALs are kept in `wal_dir`
    /// (RocksDB's `wal_dir` option) rather than beside its other files.
    pub fn open_with_wal_dir(path: &Path, wal_dir: &Path) -> Result<RocksDir> {
        let manifest = manifest::read(path)?;
        let options = options_file::read_newest(path)?;
        let mut families = Vec::new();
        let mut tombstones = BTreeMap::new();
        let mut table_entries = BTreeMap::new();
        let mut tables = BTreeMap::new();
        for state in manifest.families.values() {
            families.push(describe(state, options.get(&state.name))?);
            let (entries, ranges) = check_tables(path, state, &mut tables)?;
            table_entries.insert(state.id, entries);
            tombstones.insert(state.id, ranges);
        }
        let replayed = wal::replay(wal_dir, &manifest)?;
        Ok(RocksDir {
            path: path.to_path_buf(),
            manifest,
            families,
            memtables: replayed.tables,
            wal_damage: replayed.damage,
            tombstones,
            table_entries,
            tables,
        })
    }

    /// Where the WAL replay stopped, if a WAL holds a damaged record: the
    /// writes before it are read, none after it (RocksDB's default
    /// point-in-time recovery opens such a database the same way).
    pub fn wal_damage(&self) -> Option<&WalDamage> {
        self.wal_damage.as_ref()
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The column families, by id.
    pub fn column_families(&self) -> &[ColumnFamily] {
        &self.families
    }

    /// The family named `name`.
    pub fn family(&self, name: &str) -> Result<&ColumnFamily> {
        self.families
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| FormatError::NoSuchFamily(name.to_string()))
    }

    /// The number of live table files and their total size in bytes, for
    /// one family.
    pub fn table_stats(&self, name: &str) -> Result<(usize, u64)> {
        let state = self.state(name)?;
        Ok((
            state.files.len(),
            state.files.values().map(|f| f.size).sum(),
        ))
    }

    /// An estimate of the number of keys in a family: the entries of its
    /// tables and WAL, versions and deletions included.
    pub fn estimate_keys(&self, name: &str) -> Result<u64> {
        let id = self.family(name)?.id;
        let tables = self.table_entries.get(&id).copied().unwrap_or(0);
        Ok(tables + self.wal_entries(name)? as u64)
    }

    /// The value of `key` in family `name`, as [`RocksDir::iter`] would
    /// yield it.
    pub fn get(&self, name: &str, key: &[u8], merge: Option<&MergeFn>) -> Result<Option<Vec<u8>>> {
        match self.iter_from(name, Some(key), merge)?.next().transpose()? {
            Some((k, v)) if k == key => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// The live table files of one family (level, number, size, key range).
    pub fn tables(&self, name: &str) -> Result<Vec<&NewFile>> {
        Ok(self.state(name)?.files.values().collect())
    }

    /// The number of unflushed writes of a family held in the WAL.
    pub fn wal_entries(&self, name: &str) -> Result<usize> {
        let id = self.family(name)?.id;
        Ok(self.memtables.get(&id).map_or(0, |m| m.entries.len()))
    }

    fn state(&self, name: &str) -> Result<&FamilyState> {
        let id = self.family(name)?.id;
        self.manifest
            .families
            .get(&id)
            .ok_or_else(|| FormatError::NoSuchFamily(name.to_string()))
    }

    /// The live entries of family `name` in key order. Merge operands are
    /// folded with `merge`; without one, a family holding merges fails with
    /// [`FormatError::MergeOperatorRequired`].
    pub fn iter<'a>(&'a self, name: &str, merge: Option<&'a MergeFn>) -> Result<FamilyIter<'a>> {
        self.iter_from(name, None, merge)
    }

    /// As [`RocksDir::iter`], starting at the first key at or after `lower`.
    pub fn iter_from<'a>(
        &'a self,
        name: &str,
        lower: Option<&[u8]>,
        merge: Option<&'a MergeFn>,
    ) -> Result<FamilyIter<'a>> {
        let family = self.family(name)?;
        let state = self.state(name)?;
        let mut tombstones = self.tombstones.get(&family.id).cloned().unwrap_or_default();
        let mut sources: Vec<EntryStream<'a>> = Vec::new();
        if let Some(mem) = self.memtables.get(&family.id) {
            tombstones.extend(mem.tombstones.iter().cloned());
            let first = lower.map_or(0, |l| {
                mem.entries.partition_point(|e| e.user_key.as_slice() < l)
            });
            sources.push(Box::new(mem.entries[first..].iter().cloned().map(Ok)));
        }
        self.table_sources(state, lower, &mut sources)?;
        Ok(FamilyIter::new(
            MergingIter::new(sources),
            TombstoneSweep::new(tombstones),
            merge,
            family.name.clone(),
            family.merge_operator.clone().unwrap_or_default(),
            lower.map(<[u8]>::to_vec),
        ))
    }

    /// All live entries of family `name`, collected.
    pub fn entries(&self, name: &str, merge: Option<&MergeFn>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.iter(name, merge)?.collect()
    }

    fn meta(&self, file: &NewFile) -> Result<&TableMeta> {
        self.tables.get(&file.number).ok_or_else(|| {
            FormatError::corrupt("MANIFEST", format!("table {} was not opened", file.number))
        })
    }

    /// One stream per level-0 table and one per deeper level.
    fn table_sources<'a>(
        &self,
        state: &FamilyState,
        lower: Option<&[u8]>,
        sources: &mut Vec<EntryStream<'a>>,
    ) -> Result<()> {
        let mut levels: BTreeMap<u32, Vec<&NewFile>> = BTreeMap::new();
        for file in state.files.values() {
            levels.entry(file.level).or_default().push(file);
        }
        for (level, mut files) in levels {
            files.retain(|f| lower.is_none_or(|l| largest_user_key(f) >= l));
            if level == 0 {
                for f in files {
                    let table = Table::reopen(self.meta(f)?)?;
                    sources.push(Box::new(TableIter::seek(table, lower)));
                }
                continue;
            }
            files.sort_by(|a, b| smallest_user_key(a).cmp(smallest_user_key(b)));
            let metas = files
                .iter()
                .map(|f| self.meta(f).cloned())
                .collect::<Result<Vec<_>>>()?;
            sources.push(Box::new(LevelIter::new(metas, lower.map(<[u8]>::to_vec))));
        }
        Ok(())
    }
}

fn table_path(dir: &Path, file: &NewFile) -> PathBuf {
    dir.join(format!("{:06}.sst", file.number))
}

/// Opens every table of a family once, checking it can be read and
/// keeping its metadata in `tables`; returns the tables' entry count and
/// their range tombstones.
fn check_tables(
    dir: &Path,
    state: &FamilyState,
    tables: &mut BTreeMap<u64, TableMeta>,
) -> Result<(u64, Vec<RangeTombstone>)> {
    let mut ranges = Vec::new();
    let mut entries = 0;
    for file in state.files.values() {
        let table = Table::open(&table_path(dir, file))?;
        check_table_family(&table, state)?;
        entries += table.properties.num_entries;
        tables.insert(file.number, table.meta());
        ranges.extend(
            table
                .range_tombstones
                .into_iter()
                .filter_map(|t| truncate_to_table(t, &file.smallest, &file.largest)),
        );
    }
    Ok((entries, ranges))
}

fn smallest_user_key(f: &NewFile) -> &[u8] {
    internal_key::split(&f.smallest).map_or(&f.smallest[..], |(u, _, _)| u)
}

fn largest_user_key(f: &NewFile) -> &[u8] {
    internal_key::split(&f.largest).map_or(&f.largest[..], |(u, _, _)| u)
}

fn describe(
    state: &FamilyState,
    options: Option<&options_file::FamilyOptions>,
) -> Result<ColumnFamily> {
    let comparator = state
        .comparator
        .clone()
        .or_else(|| options.and_then(|o| o.comparator.clone()))
        .unwrap_or_else(|| BYTEWISE.to_string());
    if comparator != BYTEWISE {
        return Err(comparator_error(&comparator));
    }
    Ok(ColumnFamily {
        name: state.name.clone(),
        id: state.id,
        comparator,
        merge_operator: options.and_then(|o| o.merge_operator.clone()),
    })
}

/// The column family id of tables written outside a family (RocksDB's
/// kUnknownColumnFamily, e.g. by `SstFileWriter`).
const UNKNOWN_FAMILY: u64 = i32::MAX as u64;

fn check_table_family(table: &Table, state: &FamilyState) -> Result<()> {
    match table.properties.column_family_id {
        Some(id) if id != u64::from(state.id) && id != UNKNOWN_FAMILY => Err(FormatError::corrupt(
            "table",
            format!(
                "a table of column family {id} listed under family {}",
                state.id
            ),
        )),
        _ => Ok(()),
    }
}
