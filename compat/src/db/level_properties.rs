//! The properties that describe a column family's data files level by
//! level: `rocksdb.num-files-at-level<N>`, `rocksdb.compression-ratio-at-level<N>`,
//! `rocksdb.aggregated-table-properties` (and `-at-level<N>`),
//! `rocksdb.levelstats` and `rocksdb.sstables`.
//!
//! AlexDB has no levels. As `live_files` does, these report every segment
//! file holding records of the family at level 0, and levels 1 up to the
//! family's `num_levels` (RocksDB's 7 unless set) empty; a level at or past
//! `num_levels`, or a suffix that is not a decimal number, is no property
//! (`None`), as in RocksDB. The texts follow RocksDB's layout with the
//! figures AlexDB has: its records are stored uncompressed, in no blocks
//! and with no filter, so those figures are 0. Building them reads every
//! record (the engine's segment summaries).

use std::fmt::Write as _;

use alexdb_engine::SegmentSummary;

use crate::key_hex::hex;

/// The properties of one column family's data files.
pub(crate) struct FamilyFiles {
    /// The column family's name.
    pub name: String,
    /// Its id.
    pub id: u32,
    /// Levels RocksDB would have for it (`num_levels`).
    pub levels: usize,
    /// Its segment files (all at level 0).
    pub files: Vec<SegmentSummary>,
}

/// Bytes in a megabyte, as RocksDB's statistics count them.
const MB: f64 = 1048576.0;

impl FamilyFiles {
    /// The files at `level` (every file at level 0, none elsewhere).
    fn at(&self, level: usize) -> &[SegmentSummary] {
        match level {
            0 => &self.files,
            _ => &[],
        }
    }

    /// `rocksdb.num-files-at-level<N>`.
    pub fn num_files_at_level(&self, level: usize) -> Option<String> {
        (level < self.levels).then(|| self.at(level).len().to_string())
    }

    /// `rocksdb.compression-ratio-at-level<N>`: the bytes of the keys and
    /// values over the bytes of the files, `-1` for a level without files
    /// (C's `%f`, as RocksDB prints it).
    pub fn compression_ratio_at_level(&self, level: usize) -> Option<String> {
        if level >= self.levels {
            return None;
        }
        let files = self.at(level);
        let raw: u64 = files.iter().map(|f| f.key_bytes + f.value_bytes).sum();
        let stored: u64 = files.iter().map(|f| f.file_bytes).sum();
        let ratio = match (raw, stored) {
            (0, _) | (_, 0) => -1.0,
            _ => raw as f64 / stored as f64,
        };
        Some(format!("{ratio:.6}"))
    }

    /// `rocksdb.aggregated-table-properties-at-level<N>`.
    pub fn table_properties_at_level(&self, level: usize) -> Option<String> {
        (level < self.levels).then(|| self.table_properties(self.at(level)))
    }

    /// `rocksdb.aggregated-table-properties`: every file's properties
    /// added up, in RocksDB's `name=value; ` layout.
    pub fn table_properties(&self, files: &[SegmentSummary]) -> String {
        let sum = |f: fn(&SegmentSummary) -> u64| files.iter().map(f).sum::<u64>();
        let entries = sum(|f| f.entries);
        let key_bytes = sum(|f| f.key_bytes);
        let value_bytes = sum(|f| f.value_bytes);
        let data_bytes = sum(|f| f.file_bytes);
        let average = |bytes: u64| match entries {
            0 => 0.0,
            n => bytes as f64 / n as f64,
        };
        let fields: [(&str, String); 18] = [
            ("# data blocks", "0".into()),
            ("# entries", entries.to_string()),
            (
                "# deletions",
                sum(|f| f.deletions - f.range_deletions).to_string(),
            ),
            ("# merge operands", sum(|f| f.merges).to_string()),
            ("# range deletions", sum(|f| f.range_deletions).to_string()),
            ("raw key size", key_bytes.to_string()),
            ("raw average key size", format!("{:.6}", average(key_bytes))),
            ("raw value size", value_bytes.to_string()),
            (
                "raw average value size",
                format!("{:.6}", average(value_bytes)),
            ),
            ("data block size", data_bytes.to_string()),
            ("data uncompressed size", data_bytes.to_string()),
            ("index block size (user-key? 1, delta-value? 0)", "0".into()),
            ("filter block size", "0".into()),
            ("# entries for filter", "0".into()),
            ("(estimated) table size", data_bytes.to_string()),
            ("filter policy name", "N/A".into()),
            ("column family ID", self.id.to_string()),
            ("column family name", self.name.clone()),
        ];
        let mut out = String::new();
        for (name, value) in fields {
            let _ = write!(out, "{name}={value}; ");
        }
        out
    }

    /// `rocksdb.levelstats`: files and megabytes per level.
    pub fn level_stats(&self) -> String {
        let mut out = String::from("Level Files Size(MB)\n--------------------\n");
        for level in 0..self.levels {
            let files = self.at(level);
            let bytes: u64 = files.iter().map(|f| f.file_bytes).sum();
            let _ = writeln!(out, "{level:3} {:8} {:8.0}", files.len(), bytes as f64 / MB);
        }
        out
    }

    /// `rocksdb.sstables`: each level's files as RocksDB lists them:
    /// `number:size[smallest seq .. largest seq]['smallest key' .. 'largest
    /// key'](reads sampled)`, keys in hexadecimal; `version` numbers the
    /// listing.
    pub fn sstables(&self, version: u64) -> String {
        let mut out = String::new();
        for level in 0..self.levels {
            let _ = writeln!(out, "--- level {level} --- version# {version} ---");
            for f in self.at(level) {
                let _ = writeln!(
                    out,
                    " {}:{}[{} .. {}]['{}' .. '{}'](0)",
                    f.segment_id,
                    f.file_bytes,
                    f.seq_range.0,
                    f.seq_range.1,
                    hex(&f.smallest_key),
                    hex(&f.largest_key),
                );
            }
        }
        out
    }
}

/// For a property named `prefix` followed by a level: `Some` with the
/// level, or `Some(None)` when what follows is not a decimal number (no
/// such property); `None` when the name does not start with `prefix`.
pub(crate) fn level_suffix(name: &str, prefix: &str) -> Option<Option<usize>> {
    let suffix = name.strip_prefix(prefix)?;
    let digits = !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit());
    Some(digits.then(|| suffix.parse().ok()).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alexdb_engine::KeyspaceId;

    fn file(id: u32, keys: (&[u8], &[u8])) -> SegmentSummary {
        SegmentSummary {
            segment_id: id,
            file_name: format!("{id:010}.seg"),
            file_bytes: 2 << 20,
            compacted: true,
            keyspace: KeyspaceId(0),
            smallest_key: keys.0.to_vec(),
            largest_key: keys.1.to_vec(),
            entries: 10,
            deletions: 3,
            range_deletions: 1,
            merges: 2,
            key_bytes: 40,
            value_bytes: 60,
            seq_range: (4, 90),
        }
    }

    fn family() -> FamilyFiles {
        FamilyFiles {
            name: "default".into(),
            id: 0,
            levels: 7,
            files: vec![file(7, (b"a", b"k")), file(9, (b"b", b"z"))],
        }
    }

    #[test]
    fn every_file_is_at_level_zero_and_levels_end_at_num_levels() {
        let f = family();
        assert_eq!(f.num_files_at_level(0).as_deref(), Some("2"));
        assert_eq!(f.num_files_at_level(6).as_deref(), Some("0"));
        assert_eq!(f.num_files_at_level(7), None);
        assert_eq!(
            f.compression_ratio_at_level(3).as_deref(),
            Some("-1.000000")
        );
        assert_eq!(f.compression_ratio_at_level(7), None);
        let ratio: f64 = f.compression_ratio_at_level(0).unwrap().parse().unwrap();
        assert!((ratio - 200.0 / (4 << 20) as f64).abs() < 1e-6);
        assert_eq!(
            f.level_stats().lines().take(4).collect::<Vec<_>>(),
            [
                "Level Files Size(MB)",
                "--------------------",
                "  0        2        4",
                "  1        0        0"
            ]
        );
    }

    #[test]
    fn texts_name_each_file_and_add_up_the_records() {
        let f = family();
        let tables = f.sstables(3);
        assert!(
            tables.starts_with(
                "--- level 0 --- version# 3 ---\n 7:2097152[4 .. 90]['61' .. '6B'](0)\n"
            )
        );
        assert!(tables.ends_with("--- level 6 --- version# 3 ---\n"));
        let props = f.table_properties(&f.files);
        for field in [
            "# entries=20; ",
            "# deletions=4; ",
            "# range deletions=2; ",
            "raw key size=80; ",
            "raw average value size=6.000000; ",
            "column family name=default; ",
        ] {
            assert!(props.contains(field), "{field} missing from {props}");
        }
        assert!(
            f.table_properties_at_level(1)
                .unwrap()
                .contains("# entries=0; ")
        );
    }

    #[test]
    fn a_level_suffix_is_a_decimal_number() {
        let prefix = "rocksdb.num-files-at-level";
        assert_eq!(
            level_suffix("rocksdb.num-files-at-level12", prefix),
            Some(Some(12))
        );
        assert_eq!(
            level_suffix("rocksdb.num-files-at-level", prefix),
            Some(None)
        );
        assert_eq!(
            level_suffix("rocksdb.num-files-at-level-1", prefix),
            Some(None)
        );
        assert_eq!(
            level_suffix("rocksdb.num-files-at-levelx", prefix),
            Some(None)
        );
        assert_eq!(level_suffix("rocksdb.levelstats", prefix), None);
    }
}
