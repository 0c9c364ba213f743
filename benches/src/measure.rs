//! Measurements of the process and the disk: peak RSS and allocated bytes.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::Result;

/// Peak resident set size of this process in bytes (`VmHWM` from
/// `/proc/self/status`). It counts mapped file pages that were touched, so
/// for memory-mapped engines it includes the part of the data they read.
pub fn peak_rss_bytes() -> Result<u64> {
    let status = fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib * 1024)
        .ok_or_else(|| "VmHWM not found in /proc/self/status".into())
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
    fn counts_allocated_blocks() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/f"), vec![1u8; 10_000]).unwrap();
        assert!(allocated_bytes(dir.path()).unwrap() >= 10_000);
    }
}
