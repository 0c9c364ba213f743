//! How much memory this process may fill on Linux: the machine's physical
//! memory, or less if a control group of the process limits it.
//!
//! The limit that applies is the lowest one on the path from the process's
//! own control group up to the root of its hierarchy: a service's slice, a
//! container, a nested group made for one program. `/proc/self/cgroup`
//! names the process's group in each hierarchy (version 2: the line
//! `0::/path`; version 1: the line whose controllers include `memory`), and
//! `/proc/self/mountinfo` says where each hierarchy is mounted and which of
//! its directories the mount shows (a container with its own cgroup
//! namespace sees its group as the mount's root). Reading only the root's
//! limit, as a first guess would, misses every group but a container's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A version 1 limit at or above this is no limit (the kernel reports
/// "unlimited" as the largest page-aligned `i64`).
const V1_UNLIMITED: u64 = 1 << 62;

/// The memory the process may fill, read once: the machine's physical
/// memory (`MemTotal`), or the lowest memory limit of the control groups
/// the process is in, if that is lower (a control group's page cache is
/// charged to it). `None` where `/proc/meminfo` does not say.
pub(super) fn process_memory() -> Option<u64> {
    static MEMORY: OnceLock<Option<u64>> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        let total = mem_total(&std::fs::read_to_string("/proc/meminfo").ok()?)?;
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let read = |path: &Path| std::fs::read_to_string(path).ok();
        Some(
            cgroup_limits(&cgroup, &mounts, read)
                .into_iter()
                .fold(total, u64::min),
        )
    })
}

/// The `MemTotal` line of `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Every memory limit set on the process's control groups and their
/// ancestors, in both hierarchy versions: `cgroup` is `/proc/self/cgroup`,
/// `mounts` is `/proc/self/mountinfo`, `read` reads a control file.
fn cgroup_limits(cgroup: &str, mounts: &str, read: impl Fn(&Path) -> Option<String>) -> Vec<u64> {
    let mut limits = Vec::new();
    for (hierarchy, file) in [
        (Hierarchy::V2, "memory.max"),
        (Hierarchy::V1, "memory.limit_in_bytes"),
    ] {
        let Some(group) = group_of(cgroup, hierarchy) else {
            continue;
        };
        let Some(mount) = mount_of(mounts, hierarchy) else {
            continue;
        };
        for dir in mount.dirs_up_from(group) {
            if let Some(limit) = read(&dir.join(file)).and_then(|t| parse_limit(&t)) {
                limits.push(limit);
            }
        }
    }
    limits
}

/// A control group hierarchy version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hierarchy {
    /// The unified hierarchy (`cgroup2`).
    V2,
    /// The version 1 hierarchy with the `memory` controller.
    V1,
}

/// The process's group in `hierarchy`, from `/proc/self/cgroup` text.
fn group_of(cgroup: &str, hierarchy: Hierarchy) -> Option<&str> {
    cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = match hierarchy {
            Hierarchy::V2 => id == "0" && controllers.is_empty(),
            Hierarchy::V1 => controllers.split(',').any(|c| c == "memory"),
        };
        wanted.then_some(path)
    })
}

/// Where a hierarchy is mounted.
#[derive(Debug, PartialEq, Eq)]
struct Mount {
    /// The hierarchy's directory the mount shows (`/` unless the mount, or
    /// the cgroup namespace, shows only part of it).
    root: String,
    /// Where it is mounted.
    point: PathBuf,
}

impl Mount {
    /// The directories of the mount holding `group`'s control files, from
    /// the group's own up to the mount point. A group outside what the
    /// mount shows has only the mount point's.
    fn dirs_up_from(&self, group: &str) -> Vec<PathBuf> {
        let root = self.root.trim_end_matches('/');
        let inside = group
            .strip_prefix(root)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            .unwrap_or("");
        let mut dir = self.point.join(inside.trim_start_matches('/'));
        let mut dirs = vec![dir.clone()];
        while dir != self.point && dir.pop() {
            dirs.push(dir.clone());
        }
        dirs
    }
}

/// The mount of `hierarchy`, from `/proc/self/mountinfo` text: version 2
/// is file system type `cgroup2`; version 1 is type `cgroup` with the
/// `memory` option.
fn mount_of(mounts: &str, hierarchy: Hierarchy) -> Option<Mount> {
    mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split_whitespace().collect();
        let mut after = after.split_whitespace();
        let (fs_type, _source, options) = (after.next()?, after.next()?, after.next()?);
        let wanted = match hierarchy {
            Hierarchy::V2 => fs_type == "cgroup2",
            Hierarchy::V1 => fs_type == "cgroup" && options.split(',').any(|o| o == "memory"),
        };
        let (root, point) = (fields.get(3)?, fields.get(4)?);
        wanted.then(|| Mount {
            root: unescape(root),
            point: PathBuf::from(unescape(point)),
        })
    })
}

/// A mountinfo path with its octal escapes (`\040` for a space) decoded.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A control group memory limit's text, in bytes; `None` for no limit
/// (`max` in version 2, a huge number in version 1).
fn parse_limit(text: &str) -> Option<u64> {
    text.trim()
        .parse()
        .ok()
        .filter(|&limit| limit < V1_UNLIMITED)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const MOUNTS_V1: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    const MOUNTS_V2: &str = "\
22 1 0:21 / / rw - ext4 /dev/vda rw
30 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
";

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |path: &Path| map.get(path).cloned()
    }

    #[test]
    fn a_nested_version_1_group_is_limited_by_itself_and_its_ancestors() {
        let cgroup = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
        let read = files(&[
            (
                "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
                "1073741824\n",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "4294967296\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
        ]);
        let limits = cgroup_limits(cgroup, MOUNTS_V1, read);
        assert_eq!(limits, vec![1 << 30, 4 << 30]);
    }

    #[test]
    fn a_version_2_service_group_is_found_below_the_root() {
        let cgroup = "0::/system.slice/app.service\n";
        let read = files(&[
            (
                "/sys/fs/cgroup/system.slice/app.service/memory.max",
                "max\n",
            ),
            ("/sys/fs/cgroup/system.slice/memory.max", "2147483648\n"),
        ]);
        assert_eq!(cgroup_limits(cgroup, MOUNTS_V2, read), vec![2 << 30]);
    }

    /// In a container with its own cgroup namespace the group is `/` and
    /// the mount shows it as the root: the root's own file is the limit.
    #[test]
    fn a_container_sees_its_limit_at_the_mount_root() {
        let read = files(&[("/sys/fs/cgroup/memory.max", "536870912\n")]);
        assert_eq!(cgroup_limits("0::/\n", MOUNTS_V2, read), vec![512 << 20]);
    }

    /// A mount that shows only part of the hierarchy (its root is a group)
    /// holds the process's group below that root.
    #[test]
    fn a_mount_of_part_of_the_hierarchy_is_followed_from_its_root() {
        let mounts = "30 22 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let read = files(&[
            ("/sys/fs/cgroup/ctr/memory.max", "268435456\n"),
            ("/sys/fs/cgroup/memory.max", "1073741824\n"),
        ]);
        let limits = cgroup_limits("0::/kubepods/pod1/ctr\n", mounts, read);
        assert_eq!(limits, vec![256 << 20, 1 << 30]);
    }

    #[test]
    fn no_cgroup_files_means_no_limit() {
        assert!(cgroup_limits("", "", |_: &Path| None).is_empty());
        let read = |_: &Path| Some("max".to_string());
        assert!(cgroup_limits("0::/a/b\n", MOUNTS_V2, read).is_empty());
    }

    #[test]
    fn mount_paths_with_escaped_spaces_are_decoded() {
        let mounts = "30 22 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n";
        let mount = mount_of(mounts, Hierarchy::V2).unwrap();
        assert_eq!(mount.point, PathBuf::from("/sys/fs/my cgroup"));
    }

    #[test]
    fn meminfo_total_is_read_in_bytes() {
        let info = "MemTotal:       24576000 kB\nMemFree: 1 kB\n";
        assert_eq!(mem_total(info), Some(24_576_000 * 1024));
    }
}
