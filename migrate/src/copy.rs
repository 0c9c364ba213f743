//! `copy`: a RocksDB database into AlexDB.

use std::path::PathBuf;
use std::sync::Arc;

use alexdb_engine::io::FileSystem;

use crate::error::Result;
use crate::kind::{self, Kind};
use crate::marker::Plan;
use crate::progress::Observer;
use crate::sink::AlexSink;
use crate::source::{RocksFileSource, select_families};
use crate::transfer::{Settings, TransferReport, transfer};

/// What to copy and how.
#[derive(Clone, Debug, Default)]
pub struct CopyConfig {
    /// The RocksDB source directory.
    pub from: PathBuf,
    /// The AlexDB target directory (created if missing).
    pub to: PathBuf,
    /// Column families to copy; empty means all.
    pub families: Vec<String>,
    /// Map 8-byte big-endian `i64` keys to the compat `Storage` encoding.
    pub i64_keys: bool,
    /// Batching and `--resume`.
    pub settings: Settings,
    /// Replaces the target engine's file system seam (for fault-injection
    /// tests); `None` uses the real file system.
    pub target_file_system: Option<Arc<dyn FileSystem>>,
}

/// Copies, verifies and reports. The source is opened read-only.
pub fn copy(config: &CopyConfig, observer: &mut dyn Observer) -> Result<TransferReport> {
    let hint = "to go from AlexDB to RocksDB, use `export`";
    kind::require_kind(&config.from, Kind::RocksDb, hint)?;
    let source = RocksFileSource::open(&config.from)?;
    let families = select_families(&source, &config.families)?;
    let mut sink = AlexSink::open(&config.to, config.target_file_system.clone())?;
    let plan = Plan {
        operation: "copy".into(),
        families,
        i64_keys: config.i64_keys,
    };
    transfer(&source, &mut sink, plan, &config.settings, observer)
}
