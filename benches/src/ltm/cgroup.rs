//! A memory control group for one child process: the hierarchy that has
//! the memory controller is found in the mount table, a group is created
//! in it, below the runner's own group (so the runner's own limits still
//! hold), with a memory limit; the child joins it by pid, and the group is
//! removed afterwards.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{BenchError, Result};

/// The mount table read to find the memory controller.
const MOUNTS: &str = "/proc/self/mounts";
/// The runner's own groups, one line per hierarchy.
const OWN_GROUPS: &str = "/proc/self/cgroup";

/// Which cgroup interface the memory controller is under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// cgroup v1: a `cgroup` mount with the `memory` option.
    V1,
    /// cgroup v2: the unified `cgroup2` mount.
    V2,
}

impl Version {
    /// The file that holds a group's memory limit in bytes.
    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }
}

/// A cgroup hierarchy with the memory controller: where it is mounted,
/// and the group new groups go under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// The interface.
    pub version: Version,
    /// Its mount point (the root group) at first; the runner's own group
    /// once [`Hierarchy::within`] has been applied.
    pub root: PathBuf,
}

impl Hierarchy {
    /// The memory hierarchy named in a `/proc/self/mounts` text: a v1
    /// `cgroup` mount with the `memory` option if there is one (a hybrid
    /// layout also mounts a `cgroup2` without that controller), else the
    /// `cgroup2` mount.
    pub fn find_in(mounts: &str) -> Option<Hierarchy> {
        let mut v2 = None;
        for line in mounts.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, point, kind, options, ..] = fields[..] else {
                continue;
            };
            let root = PathBuf::from(point);
            match kind {
                "cgroup" if options.split(',').any(|o| o == "memory") => {
                    return Some(Hierarchy {
                        version: Version::V1,
                        root,
                    });
                }
                "cgroup2" if v2.is_none() => v2 = Some(root),
                _ => {}
            }
        }
        v2.map(|root| Hierarchy {
            version: Version::V2,
            root,
        })
    }

    /// The runner's own group in this hierarchy, named in a
    /// `/proc/self/cgroup` text (`4:memory:/a/b` on v1, `0::/a/b` on v2),
    /// relative to the mount point.
    pub fn own_group_in(&self, groups: &str) -> Option<PathBuf> {
        groups.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let ours = match self.version {
                Version::V1 => controllers.split(',').any(|c| c == "memory"),
                Version::V2 => id == "0" && controllers.is_empty(),
            };
            ours.then(|| PathBuf::from(path.trim().trim_start_matches('/')))
        })
    }

    /// The same hierarchy with new groups going under `group` (relative
    /// to the mount point).
    pub fn within(self, group: &Path) -> Hierarchy {
        Hierarchy {
            root: self.root.join(group),
            ..self
        }
    }

    /// The memory hierarchy of this machine, rooted at the runner's own
    /// group, or why there is none.
    pub fn detect() -> Result<Hierarchy> {
        let mounts =
            fs::read_to_string(MOUNTS).map_err(|e| BenchError(format!("{MOUNTS}: {e}")))?;
        let mounted = Hierarchy::find_in(&mounts)
            .ok_or_else(|| BenchError(format!("no cgroup hierarchy is mounted ({MOUNTS})")))?;
        let groups =
            fs::read_to_string(OWN_GROUPS).map_err(|e| BenchError(format!("{OWN_GROUPS}: {e}")))?;
        let own = mounted.own_group_in(&groups).ok_or_else(|| {
            BenchError(format!(
                "{OWN_GROUPS} names no group of the memory hierarchy"
            ))
        })?;
        let found = mounted.within(&own);
        if found.version == Version::V2 {
            let controllers = fs::read_to_string(found.root.join("cgroup.controllers"))?;
            if !has_word(&controllers, "memory") {
                return Err(BenchError(format!(
                    "the cgroup v2 hierarchy at {} has no memory controller",
                    found.root.display()
                )));
            }
        }
        Ok(found)
    }

    /// Creates group `name` under the root limited to `limit` bytes of
    /// memory (page cache included); on v2 first enables the memory
    /// controller for the root's children if it is not.
    pub fn create(&self, name: &str, limit: u64) -> Result<Group> {
        if self.version == Version::V2 {
            enable_memory_controller(&self.root)?;
        }
        let dir = self.root.join(name);
        fs::create_dir(&dir).map_err(|e| context(e, &dir))?;
        let group = Group {
            dir,
            root: self.root.clone(),
            removed: false,
        };
        let limit_path = group.dir.join(self.version.limit_file());
        fs::write(&limit_path, limit.to_string()).map_err(|e| context(e, &limit_path))?;
        Ok(group)
    }
}

/// Adds `+memory` to the root's `cgroup.subtree_control` unless listed.
fn enable_memory_controller(root: &Path) -> Result<()> {
    let control = root.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).map_err(|e| context(e, &control))?;
    if !has_word(&enabled, "memory") {
        fs::write(&control, "+memory").map_err(|e| context(e, &control))?;
    }
    Ok(())
}

/// Whether the whitespace-separated `list` holds `word`.
fn has_word(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

fn context(e: std::io::Error, path: &Path) -> BenchError {
    BenchError(format!("{}: {e}", path.display()))
}

/// A created group; removed by [`Group::remove`] or, failing that, on drop.
#[derive(Debug)]
pub struct Group {
    dir: PathBuf,
    root: PathBuf,
    removed: bool,
}

impl Group {
    /// Moves process `pid` into the group.
    pub fn add(&self, pid: u32) -> Result<()> {
        let procs = self.dir.join("cgroup.procs");
        fs::write(&procs, pid.to_string()).map_err(|e| context(e, &procs))
    }

    /// Moves any process left in the group back to the group it was
    /// created under and removes the group's directory.
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        self.teardown()
    }

    fn teardown(&self) -> Result<()> {
        let procs = self.dir.join("cgroup.procs");
        let left = fs::read_to_string(&procs).unwrap_or_default();
        let root_procs = self.root.join("cgroup.procs");
        for pid in left.split_whitespace() {
            // A process that exited meanwhile cannot be moved: not an error.
            let _ = fs::write(&root_procs, pid);
        }
        fs::remove_dir(&self.dir).map_err(|e| context(e, &self.dir))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.teardown();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "sysfs /sys sysfs rw,nosuid 0 0\n\
        tmpfs /sys/fs/cgroup tmpfs ro,nosuid,mode=755 0 0\n\
        cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,nsdelegate 0 0\n\
        cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n\
        cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,memory 0 0\n";

    const V2: &str = "proc /proc proc rw 0 0\n\
        cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,nsdelegate 0 0\n";

    #[test]
    fn prefers_the_v1_memory_mount() {
        let found = Hierarchy::find_in(V1).unwrap();
        assert_eq!(found.version, Version::V1);
        assert_eq!(found.root, Path::new("/sys/fs/cgroup/memory"));
    }

    #[test]
    fn falls_back_to_the_unified_mount() {
        let found = Hierarchy::find_in(V2).unwrap();
        assert_eq!(found.version, Version::V2);
        assert_eq!(found.root, Path::new("/sys/fs/cgroup"));
    }

    #[test]
    fn finds_nothing_without_cgroups() {
        assert_eq!(Hierarchy::find_in("proc /proc proc rw 0 0\n"), None);
        let no_memory = "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n";
        assert_eq!(Hierarchy::find_in(no_memory), None);
    }

    const OWN_V1: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/cd0b\n0::/\n";

    #[test]
    fn finds_the_runners_own_v1_group() {
        let v1 = Hierarchy::find_in(V1).unwrap();
        let own = v1.own_group_in(OWN_V1).unwrap();
        assert_eq!(own, Path::new("process_api/cd0b"));
        let within = v1.within(&own);
        assert_eq!(
            within.root,
            Path::new("/sys/fs/cgroup/memory/process_api/cd0b")
        );
        assert_eq!(within.version, Version::V1);
    }

    #[test]
    fn finds_the_runners_own_v2_group() {
        let v2 = Hierarchy::find_in(V2).unwrap();
        let own = v2.own_group_in("0::/user.slice/session-2.scope\n").unwrap();
        assert_eq!(own, Path::new("user.slice/session-2.scope"));
        assert_eq!(v2.own_group_in("0::/\n").unwrap(), Path::new(""));
        assert_eq!(v2.own_group_in("4:memory:/a\n"), None);
    }

    #[test]
    fn names_the_limit_file_of_each_version() {
        assert_eq!(Version::V1.limit_file(), "memory.limit_in_bytes");
        assert_eq!(Version::V2.limit_file(), "memory.max");
    }

    #[test]
    fn matches_whole_controller_names() {
        assert!(has_word("cpuset cpu io memory pids\n", "memory"));
        assert!(!has_word("cpuset cpu io memory_recursiveprot", "memory"));
    }

    #[test]
    fn creates_limits_and_removes_a_group_in_a_fake_v2_tree() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join("cgroup.subtree_control"), "cpu\n").unwrap();
        let hierarchy = Hierarchy {
            version: Version::V2,
            root: root.path().to_path_buf(),
        };
        let group = hierarchy.create("g", 4096).unwrap();
        let control = fs::read_to_string(root.path().join("cgroup.subtree_control")).unwrap();
        assert_eq!(control, "+memory");
        let limit = fs::read_to_string(root.path().join("g/memory.max")).unwrap();
        assert_eq!(limit, "4096");
        fs::remove_file(root.path().join("g/memory.max")).unwrap();
        group.remove().unwrap();
        assert!(!root.path().join("g").exists());
    }
}
