//! [`Env`] (RocksDB's operating-system interface) and [`DBPath`] (an extra
//! data directory).

use std::path::{Path, PathBuf};

use crate::Error;

/// RocksDB's interface to the file system and background threads.
///
/// AlexDB uses the operating system directly and sizes its own background
/// work; an `Env` only records whether an in-memory environment was asked
/// for. Its thread settings are accepted and have no effect.
#[derive(Clone, Debug)]
pub struct Env {
    in_memory: bool,
}

impl Env {
    /// The default environment.
    pub fn new() -> Result<Self, Error> {
        Ok(Self { in_memory: false })
    }

    /// An environment that keeps files in memory.
    pub fn mem_env() -> Result<Self, Error> {
        Ok(Self { in_memory: true })
    }

    /// Whether this environment keeps files in memory.
    #[allow(
        dead_code,
        reason = "read by the DB layer, which is still being written"
    )]
    pub(crate) fn is_in_memory(&self) -> bool {
        self.in_memory
    }

    /// Accepted for compatibility; AlexDB sizes its own background work, so
    /// this has no effect.
    pub fn set_background_threads(&mut self, _num_threads: i32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so
    /// this has no effect.
    pub fn set_high_priority_background_threads(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so
    /// this has no effect.
    pub fn set_low_priority_background_threads(&mut self, _n: i32) {}

    /// Accepted for compatibility; AlexDB sizes its own background work, so
    /// this has no effect.
    pub fn set_bottom_priority_background_threads(&mut self, _n: i32) {}

    /// Accepted for compatibility; an `Env` starts no threads, so there is
    /// nothing to wait for.
    pub fn join_all_threads(&mut self) {}

    /// Accepted for compatibility; AlexDB does not change thread priorities,
    /// so this has no effect.
    pub fn lower_thread_pool_io_priority(&mut self) {}

    /// Accepted for compatibility; AlexDB does not change thread priorities,
    /// so this has no effect.
    pub fn lower_high_priority_thread_pool_io_priority(&mut self) {}

    /// Accepted for compatibility; AlexDB does not change thread priorities,
    /// so this has no effect.
    pub fn lower_thread_pool_cpu_priority(&mut self) {}

    /// Accepted for compatibility; AlexDB does not change thread priorities,
    /// so this has no effect.
    pub fn lower_high_priority_thread_pool_cpu_priority(&mut self) {}
}

/// A directory for table files with a target size, for `Options::set_db_paths`.
///
/// AlexDB keeps all its files under the database path; extra paths are
/// recorded and not used.
#[derive(Clone, Debug)]
pub struct DBPath {
    #[allow(
        dead_code,
        reason = "recorded for the DB layer, which is still being written"
    )]
    pub(crate) path: PathBuf,
    #[allow(
        dead_code,
        reason = "recorded for the DB layer, which is still being written"
    )]
    pub(crate) target_size: u64,
}

impl DBPath {
    /// Describes the directory `path` holding up to `target_size` bytes.
    pub fn new<P: AsRef<Path>>(path: P, target_size: u64) -> Result<Self, Error> {
        Ok(Self {
            path: path.as_ref().to_path_buf(),
            target_size,
        })
    }
}
