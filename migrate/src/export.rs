//! `export`: an AlexDB database back into RocksDB.

use std::path::PathBuf;

use crate::error::Result;
use crate::kind::{self, Kind};
use crate::marker::Plan;
use crate::progress::Observer;
use crate::sink::RocksSink;
use crate::source::{AlexSource, select_families};
use crate::transfer::{Settings, TransferReport, transfer};

/// What to export and how.
#[derive(Clone, Debug, Default)]
pub struct ExportConfig {
    /// The AlexDB source directory.
    pub from: PathBuf,
    /// The RocksDB target directory (created if missing).
    pub to: PathBuf,
    /// Column families to export; empty means all.
    pub families: Vec<String>,
    /// Batching and `--resume`.
    pub settings: Settings,
}

/// Exports, verifies and reports. The target gets the source's column
/// families, created with RocksDB's default options.
pub fn export(config: &ExportConfig, observer: &mut dyn Observer) -> Result<TransferReport> {
    let hint = "to go from RocksDB to AlexDB, use `copy`";
    kind::require_kind(&config.from, Kind::AlexDb, hint)?;
    let source = AlexSource::open(&config.from)?;
    let families = select_families(&source, &config.families)?;
    let mut sink = RocksSink::open(&config.to)?;
    let plan = Plan {
        operation: "export".into(),
        families,
        i64_keys: false,
    };
    transfer(&source, &mut sink, plan, &config.settings, observer)
}
