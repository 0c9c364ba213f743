//! The `LOG` file, RocksDB's informational log, kept for a database opened
//! for writing without an `InfoLogger`: at open the options dump (every
//! database-wide and column-family option, as set or defaulted), then a
//! column family's options at its creation and AlexDB's own messages.
//!
//! Programs and tests read it to check that their tuning reached the
//! database; AlexDB prints each RocksDB option as the program set it,
//! though most change nothing in AlexDB (see `crate::options`).

mod dump;
mod file;
mod template;

use std::path::Path;
use std::sync::Arc;

use crate::column_family::ColumnFamilyDescriptor;
use crate::options::{InfoLogger, Options};

pub(crate) use dump::column_family;
pub(crate) use file::{LogFile, remove_logs};

/// Starts the `LOG` of the database at `path`, writes the options dump for
/// `opts` and the column families `families`, and returns a logger writing
/// to it; `None` if the file cannot be created (the database then opens
/// without one, as RocksDB's does).
pub(crate) fn start(
    path: &Path,
    opts: &Options,
    families: &[ColumnFamilyDescriptor],
) -> Option<InfoLogger> {
    let file = LogFile::create(path, opts.db_log_dir.as_deref(), &opts.info_log).ok()?;
    let mut messages = vec![
        format!(
            "AlexDB version: {} (a drop-in for the rocksdb crate 0.25)",
            env!("CARGO_PKG_VERSION")
        ),
        "DB SUMMARY".to_owned(),
        format!("DB path: {}", path.display()),
    ];
    messages.extend(dump::db_options(opts));
    for family in families {
        messages.extend(dump::column_family(&family.name, &family.options));
    }
    file.write(&messages);
    Some(InfoLogger::to_file(Arc::new(file)))
}
