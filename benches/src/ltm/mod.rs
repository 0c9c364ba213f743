//! The runner's side of `--larger-than-memory`: one child loads and
//! closes a store; the runner drops the page cache and creates a memory
//! control group a quarter the size of the store's disk; a second child,
//! moved into the group before it opens the store, runs the timed reads.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use clap::ValueEnum;

use crate::error::{BenchError, Result};
use crate::measure::allocated_bytes;

mod cgroup;

use cgroup::{Group, Hierarchy};

/// The line the reading child waits for on its standard input once it has
/// generated its key set: it has been moved into the group.
pub const GO: &str = "go";

/// The smallest memory limit given, so a tiny store's reader can start.
const MIN_LIMIT: u64 = 16 << 20;

/// What a child of the larger-than-memory mode does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// Load the store, wait for its compactions, close it.
    Load,
    /// Wait for [`GO`], open the store and run the timed reads.
    Read,
}

impl Phase {
    /// The name on the child's command line.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Read => "read",
        }
    }
}

/// The memory limit for a store of `disk_bytes`: a quarter of it, at
/// least [`MIN_LIMIT`].
pub fn limit_for(disk_bytes: u64) -> u64 {
    (disk_bytes / 4).max(MIN_LIMIT)
}

/// The mode, ready to run: a memory hierarchy we may create groups in.
#[derive(Debug)]
pub struct Mode {
    hierarchy: Hierarchy,
}

impl Mode {
    /// Checks that this machine lets us drop the page cache and create a
    /// memory group; the error says why not.
    pub fn prepare() -> Result<Mode> {
        let hierarchy = Hierarchy::detect()?;
        std::fs::OpenOptions::new()
            .write(true)
            .open(DROP_CACHES)
            .map_err(|e| BenchError(format!("cannot drop the page cache ({DROP_CACHES}: {e})")))?;
        let probe = hierarchy.create(&group_name("probe"), MIN_LIMIT)?;
        probe.remove()?;
        Ok(Mode { hierarchy })
    }

    /// Runs one engine's repetition in a fresh directory under `data_dir`:
    /// `child(phase, store_dir)` builds each child's command.
    pub fn run(
        &self,
        data_dir: &Path,
        label: &str,
        child: impl Fn(Phase, &Path) -> Result<Command>,
    ) -> Result<Output> {
        let store = tempfile::Builder::new()
            .prefix("alexdb-bench-ltm-")
            .tempdir_in(data_dir)?;
        let loaded = child(Phase::Load, store.path())?
            .stdin(Stdio::null())
            .output()?;
        if !loaded.status.success() {
            return Ok(loaded);
        }
        let limit = limit_for(allocated_bytes(store.path())?);
        drop_page_cache()?;
        let group = self.hierarchy.create(&group_name(label), limit)?;
        let output = read_in(&group, child(Phase::Read, store.path())?);
        group.remove()?;
        output
    }
}

/// Starts `command`, moves it into `group`, tells it to go, and waits.
fn read_in(group: &Group, mut command: Command) -> Result<Output> {
    let mut reader = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Err(e) = group.add(reader.id()) {
        let _ = reader.kill();
        let _ = reader.wait();
        return Err(e);
    }
    let mut stdin = reader
        .stdin
        .take()
        .ok_or("the reader has no standard input")?;
    writeln!(stdin, "{GO}")?;
    drop(stdin);
    Ok(reader.wait_with_output()?)
}

/// The page-cache knob: writing 3 drops clean cached pages and inodes.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Writes dirty pages out (`sync`) and drops the page cache.
fn drop_page_cache() -> Result<()> {
    let synced = Command::new("sync").status()?;
    if !synced.success() {
        return Err(BenchError(format!("sync exited with {synced}")));
    }
    std::fs::write(DROP_CACHES, "3").map_err(|e| BenchError(format!("{DROP_CACHES}: {e}")))
}

/// A group name unique to this runner.
fn group_name(label: &str) -> String {
    format!("alexdb-bench-{}-{label}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_to_a_quarter_of_the_disk() {
        assert_eq!(limit_for(4 << 30), 1 << 30);
        assert_eq!(limit_for(1_000_000_003 * 4), 1_000_000_003);
    }

    #[test]
    fn never_limits_below_the_floor() {
        assert_eq!(limit_for(0), MIN_LIMIT);
        assert_eq!(limit_for(MIN_LIMIT), MIN_LIMIT);
    }

    #[test]
    fn names_groups_after_the_runner() {
        let name = group_name("alexdb-1");
        assert!(name.starts_with("alexdb-bench-"), "{name}");
        assert!(name.ends_with(&format!("{}-alexdb-1", std::process::id())));
    }
}
