//! How segment maps are advised to the kernel: by whether the segments fit
//! in the memory the process may use.
//!
//! **Within memory: huge pages** (`MADV_HUGEPAGE`). A compaction output is
//! written in 2 MiB pieces (`compaction/output.rs`), so while its pages
//! stay cached from the write the kernel maps it with one huge-page entry
//! per 2 MiB, and a record read costs no TLB miss of its own. Once those
//! pages are dropped (a reboot, memory pressure), the reads that fault them
//! back in read around the fault (128 KiB) into small folios, and every
//! record read pays a page walk again, under a hypervisor a two-dimensional
//! one. With the advice, a fault reads the whole aligned 2 MiB into one
//! folio, mapped with one entry. Measured at 1M keys on a 2-vCPU virtual
//! machine, after dropping the page cache: 0 → 120 MB of the segments
//! mapped with huge pages; copying gets in the first, cold round 952–1,031
//! → 795–877 ns, in warm rounds 553–582 → 497–538 ns (three runs each,
//! alternating).
//!
//! **Larger than memory: random access** (`MADV_RANDOM`). There a cold
//! point read would read 2 MiB (huge pages) or 128 KiB (the kernel's
//! read-around) to use one record, and push out what other reads need:
//! megabytes from disk per kilobyte used. With the advice a fault reads the
//! page it needs. Reads that do walk a segment in order (compaction's
//! input, a cursor over a key-ordered run) ask for what they will read
//! next themselves (`MADV_WILLNEED`, see [`Segment::will_read`]).
//!
//! The line is a quarter of the memory the process may fill: physical
//! memory, or its control groups' lowest limit (see
//! [`crate::io::os::process_memory`]). A table that grows past it
//! switches every map to random access; one that shrinks below it (a
//! compaction that reclaimed much) switches them back.
//!
//! [`Segment::will_read`]: super::Segment::will_read

use super::{MapAdvice, SegmentTable};
use crate::io::os::process_memory;

/// Advises every segment map of `table` for the memory the process may
/// use (see the module documentation). Called at open and whenever a
/// segment is added (a log rotation, a compaction's output).
pub(crate) fn advise_if_fits(table: &SegmentTable) {
    if let Some(memory) = process_memory() {
        advise_for(table, memory);
    }
}

/// Advises every segment map of `table` for `memory` bytes of memory.
fn advise_for(table: &SegmentTable, memory: u64) {
    let bytes = table.iter().map(|s| s.bytes().len() as u64).sum();
    let advice = match fits_in_memory(bytes, memory) {
        true => MapAdvice::HugePages,
        false => MapAdvice::Random,
    };
    for segment in table.iter() {
        segment.advise(advice);
    }
}

/// Whether segments of `bytes` in all are small enough beside `memory`
/// bytes of memory for their maps to read whole huge pages.
fn fits_in_memory(bytes: u64, memory: u64) -> bool {
    bytes <= memory / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, KeyspaceId, Options, WriteOptions};

    #[test]
    fn only_a_database_within_a_quarter_of_memory_is_advised() {
        let gib = 1u64 << 30;
        assert!(fits_in_memory(6 * gib, 24 * gib));
        assert!(!fits_in_memory(6 * gib + 1, 24 * gib));
        assert!(fits_in_memory(0, 0));
    }

    /// The flags the kernel lists for the map of the file at `path`
    /// (`/proc/self/smaps`), if it is mapped. (By whole path: tests running
    /// at once map segments of the same names in other directories.)
    fn vm_flags_of(path: &std::path::Path) -> Option<String> {
        let name = path.to_str()?;
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
            let name = segment.path().display().to_string();
            let flags = vm_flags_of(segment.path()).expect("the segment is mapped");
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
    #[cfg_attr(not(target_os = "linux"), ignore = "reads Linux's /proc/self/smaps")]
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

    /// Every live segment map's flags, by file name.
    fn flags_of_every_map(db: &Db) -> Vec<(String, String)> {
        let table = db.shared().segments.load();
        table
            .iter()
            .map(|segment| {
                let name = segment.path().display().to_string();
                let flags = vm_flags_of(segment.path()).expect("the segment is mapped");
                (name, flags)
            })
            .collect()
    }

    /// Segments larger than a quarter of the memory are advised random
    /// access (`rr`: no read-around, a fault reads one page) instead of
    /// huge pages; once they fit again, huge pages again.
    #[test]
    #[cfg_attr(not(target_os = "linux"), ignore = "reads Linux's /proc/self/smaps")]
    fn segments_larger_than_memory_are_advised_random_access_and_back() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            segment_bytes: 1 << 20,
            background_compaction: false,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        for i in 0..20_000u32 {
            let key = i.to_be_bytes();
            db.put(KeyspaceId(0), &key, &[7; 100], &WriteOptions::default())
                .unwrap();
        }
        let table = db.shared().segments.load_full();
        let bytes: u64 = table.iter().map(|s| s.bytes().len() as u64).sum();
        advise_for(&table, bytes);
        for (name, flags) in flags_of_every_map(&db) {
            let flags: Vec<&str> = flags.split_whitespace().collect();
            assert!(flags.contains(&"rr"), "{name}: {flags:?}");
            assert!(!flags.contains(&"hg"), "{name}: {flags:?}");
        }
        assert!(table.iter().all(|s| s.read_at_random()));
        // Cursors read ahead on such maps (advisory): they still read
        // every key, in order, both ways, after compaction put the keys in
        // key-ordered runs.
        db.compact().unwrap();
        let table = db.shared().segments.load_full();
        advise_for(&table, 1);
        let keys = |reverse: bool| {
            let mut cursor = db.cursor(KeyspaceId(0), Default::default()).unwrap();
            match reverse {
                true => cursor.seek_to_last(),
                false => cursor.seek_to_first(),
            }
            let mut keys = Vec::new();
            while let Some(entry) = cursor.entry() {
                keys.push(u32::from_be_bytes(entry.key().try_into().unwrap()));
                match reverse {
                    true => cursor.backward(),
                    false => cursor.forward(),
                }
            }
            keys
        };
        assert_eq!(keys(false), (0..20_000).collect::<Vec<_>>());
        assert_eq!(keys(true), (0..20_000).rev().collect::<Vec<_>>());
        // Seeks and a few steps (their records' pages asked for at once),
        // and multi-gets (a batch's records asked for at once).
        for start in (0..20_000u32).step_by(997) {
            let mut cursor = db.cursor(KeyspaceId(0), Default::default()).unwrap();
            cursor.seek(&start.to_be_bytes());
            for expected in start..(start + 11).min(20_000) {
                let key = cursor
                    .key()
                    .map(|k| u32::from_be_bytes(k.try_into().unwrap()));
                assert_eq!(key, Some(expected));
                cursor.forward();
            }
        }
        let wanted: Vec<[u8; 4]> = (0..20_000u32).step_by(61).map(u32::to_be_bytes).collect();
        let wanted: Vec<&[u8]> = wanted.iter().map(|k| &k[..]).collect();
        let found = db.get_many(KeyspaceId(0), &wanted).unwrap();
        assert_eq!(found.len(), wanted.len());
        for value in found {
            assert_eq!(value.unwrap().as_deref(), Some(&[7; 100][..]));
        }
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return;
        }
        advise_for(&table, bytes * 4);
        for (name, flags) in flags_of_every_map(&db) {
            let flags: Vec<&str> = flags.split_whitespace().collect();
            assert!(!flags.contains(&"rr"), "{name}: {flags:?}");
            assert!(flags.contains(&"hg"), "{name}: {flags:?}");
        }
    }
}
