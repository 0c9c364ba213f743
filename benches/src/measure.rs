//! Measurements of the process and the disk: peak RSS, anonymous memory,
//! bytes read from the disk and allocated bytes.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::Result;

/// Peak resident set size of this process in bytes (`VmHWM` from
/// `/proc/self/status`). It counts mapped file pages that were touched, so
/// for memory-mapped engines it includes the part of the data they read.
pub fn peak_rss_bytes() -> Result<u64> {
    status_kib("VmHWM:").map(|kib| kib * 1024)
}

/// The figure of the `/proc/self/status` line starting with `field`, in KiB.
fn status_kib(field: &str) -> Result<u64> {
    let status = fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .ok_or_else(|| format!("{field} not found in /proc/self/status").into())
}

/// Bytes this process has caused to be read from the storage layer so
/// far (`read_bytes` of `/proc/self/io`): what the disk delivered, not
/// what the page cache served.
pub fn disk_read_bytes() -> Result<u64> {
    let io = fs::read_to_string("/proc/self/io")?;
    read_bytes_in(&io).ok_or_else(|| "read_bytes not found in /proc/self/io".into())
}

/// The `read_bytes` field of a `/proc/<pid>/io` text.
pub fn read_bytes_in(io: &str) -> Option<u64> {
    io.lines()
        .find_map(|line| line.strip_prefix("read_bytes:"))
        .and_then(|rest| rest.trim().parse().ok())
}

/// The process's resident anonymous memory (`RssAnon` of
/// `/proc/self/status`): its heap and anonymous maps, not file pages.
pub fn anon_rss_bytes() -> Result<u64> {
    status_kib("RssAnon:").map(|kib| kib * 1024)
}

/// Resets this process's peak resident set (`VmHWM`) to its current
/// resident set (writes 5 to `/proc/self/clear_refs`, Linux 4.0 on).
pub fn reset_peak_rss() -> Result<()> {
    fs::write("/proc/self/clear_refs", "5")?;
    Ok(())
}

/// Bytes of disk blocks allocated to every file under `dir` (what `du`
/// counts, not the apparent sizes).
pub fn allocated_bytes(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            allocated_bytes(&entry.path())?
        } else {
            meta.blocks() * 512
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_peak_rss() {
        assert!(peak_rss_bytes().unwrap() > 0);
    }

    #[test]
    fn parses_read_bytes() {
        let io = "rchar: 4096\nwchar: 10\nsyscr: 3\nsyscw: 1\nread_bytes: 12288\n\
                  write_bytes: 0\ncancelled_write_bytes: 0\n";
        assert_eq!(read_bytes_in(io), Some(12288));
        assert_eq!(read_bytes_in("rchar: 4096\n"), None);
        assert_eq!(read_bytes_in("read_bytes: lots\n"), None);
    }

    #[test]
    fn counts_allocated_blocks() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/f"), vec![1u8; 10_000]).unwrap();
        assert!(allocated_bytes(dir.path()).unwrap() >= 10_000);
    }
}
