//! Which segment maps ask the kernel for huge pages (`MADV_HUGEPAGE`).
//!
//! A compaction output is written in 2 MiB pieces (`compaction/output.rs`),
//! so while its pages stay cached from the write the kernel maps it with
//! one huge-page entry per 2 MiB, and a record read costs no TLB miss of
//! its own. Once those pages are dropped (a reboot, memory pressure), the
//! reads that fault them back in read around the fault (128 KiB) into
//! small folios, and every record read pays a page walk again, under a
//! hypervisor a two-dimensional one. With the advice, a fault reads the
//! whole aligned 2 MiB into one folio, mapped with one entry. Measured at
//! 1M keys on a 2-vCPU virtual machine, after dropping the page cache:
//! 0 → 120 MB of the segments mapped with huge pages; copying gets in the
//! first, cold round 952–1,031 → 795–877 ns, in warm rounds 553–582 →
//! 497–538 ns (three runs each, alternating).
//!
//! The cost is the size of a cold read: 2 MiB instead of 128 KiB. For a
//! database well within memory that only fills the cache sooner; for one
//! larger than memory, random reads would read 16 times what they use and
//! push out the rest. So maps are advised only while the segments add up
//! to at most a quarter of physical memory, or of the control group's
//! memory limit if that is lower ([`fits_in_memory`]). A map
//! advised while the database was small keeps the advice once it has
//! grown; compaction replaces such segments over time.

use std::sync::OnceLock;

use super::SegmentTable;

/// Advises every segment map of `table` not advised yet, if the segments
/// fit in memory (see the module documentation). Called at open and
/// whenever a segment is added (a log rotation, a compaction's output).
pub(crate) fn advise_if_fits(table: &SegmentTable) {
    let Some(memory) = physical_memory() else {
        return;
    };
    let bytes = table.iter().map(|s| s.bytes().len() as u64).sum();
    if fits_in_memory(bytes, memory) {
        for segment in table.iter() {
            segment.advise_huge_pages();
        }
    }
}

/// Whether segments of `bytes` in all are small enough beside `memory`
/// bytes of physical memory for their maps to read whole huge pages.
fn fits_in_memory(bytes: u64, memory: u64) -> bool {
    bytes <= memory / 4
}

/// The memory the process may fill, read once: the machine's physical
/// memory (`MemTotal`), or the memory limit of the process's control group
/// if that is lower (a container's page cache is charged to it); `None`
/// where `/proc/meminfo` does not say.
fn physical_memory() -> Option<u64> {
    static MEMORY: OnceLock<Option<u64>> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let total = mem_total(&info)?;
        Some(
            CGROUP_LIMITS
                .iter()
                .filter_map(|path| cgroup_limit(path))
                .fold(total, u64::min),
        )
    })
}

/// Where a control group's memory limit is read: version 2, version 1.
const CGROUP_LIMITS: [&str; 2] = [
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
];

/// The memory limit in the file at `path`: `None` if it is missing or
/// unlimited (`max`).
fn cgroup_limit(path: &str) -> Option<u64> {
    parse_limit(&std::fs::read_to_string(path).ok()?)
}

/// A control group memory limit's text, in bytes (`max` is no limit).
fn parse_limit(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The `MemTotal` line of `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, KeyspaceId, Options, WriteOptions};

    #[test]
    fn mem_total_is_read_in_bytes() {
        let info = "MemTotal:       24616400 kB\nMemFree:         1000 kB\n";
        assert_eq!(mem_total(info), Some(24_616_400 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(mem_total("MemTotal: lots kB\n"), None);
    }

    #[test]
    fn a_control_groups_limit_is_read_in_bytes() {
        assert_eq!(parse_limit("1073741824\n"), Some(1 << 30));
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit(""), None);
    }

    #[test]
    fn only_a_database_within_a_quarter_of_memory_is_advised() {
        let gib = 1u64 << 30;
        assert!(fits_in_memory(6 * gib, 24 * gib));
        assert!(!fits_in_memory(6 * gib + 1, 24 * gib));
        assert!(fits_in_memory(0, 0));
    }

    /// The flags the kernel lists for the map of the file named `name`
    /// (`/proc/self/smaps`), if it is mapped.
    fn vm_flags_of(name: &str) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut in_map = false;
        for line in smaps.lines() {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                if in_map {
                    return Some(flags.to_string());
                }
            } else if !line.ends_with(" kB") && line.contains('-') {
                in_map = line.ends_with(name);
            }
        }
        None
    }

    /// Asserts that every live segment's map carries the advice.
    fn assert_every_map_advised(db: &Db) {
        let shared = db.shared();
        let table = shared.segments.load();
        for segment in table.iter() {
            let name = super::super::file_name(segment.id());
            let flags = vm_flags_of(&name).expect("the segment is mapped");
            assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "{name}: {flags}"
            );
        }
    }

    /// Where the kernel has transparent huge pages, a small database's
    /// segment maps carry the advice (`hg`) after an open, and those of
    /// segments the log rotates to afterwards too.
    #[test]
    fn a_small_databases_segment_maps_are_advised_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            segment_bytes: 1 << 20,
            background_compaction: false,
            ..Options::default()
        };
        let write = |db: &Db, from: u32| {
            for i in from..from + 20_000 {
                db.put(
                    KeyspaceId(0),
                    &i.to_be_bytes(),
                    &[7; 100],
                    &WriteOptions::default(),
                )
                .unwrap();
            }
        };
        let db = Db::open(dir.path(), options.clone()).unwrap();
        write(&db, 0);
        drop(db);
        let db = Db::open(dir.path(), options).unwrap();
        assert!(
            db.shared().segments.load().len() > 2,
            "the writes rotated the log"
        );
        assert_every_map_advised(&db);
        let before = db.shared().segments.load().len();
        write(&db, 20_000);
        assert!(
            db.shared().segments.load().len() > before,
            "the log rotated again"
        );
        assert_every_map_advised(&db);
    }
}
