//! The command line: arguments (clap) and dispatch to the library.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::copy::{CopyConfig, copy};
use crate::error::Result;
#[cfg(feature = "librocksdb")]
use crate::export::{ExportConfig, export};
use crate::inspect::inspect;
use crate::keymap::KeyMap;
use crate::progress::{Bar, Observer};
use crate::report::Output;
use crate::source;
use crate::transfer::{DEFAULT_BATCH_BYTES, DEFAULT_BATCH_KEYS, Settings};
use crate::verify::{self, Side};

/// Exit status: success, and (for `verify`) no difference.
pub const EXIT_OK: i32 = 0;
/// Exit status: the databases differ (`verify`, or a copy that failed its
/// final verification).
pub const EXIT_DIFFERENT: i32 = 1;
/// Exit status: an error stopped the command.
pub const EXIT_ERROR: i32 = 2;

/// Moves data from RocksDB to AlexDB and back, resumably and verified.
///
/// Exit status: 0 on success, 1 when databases differ, 2 on any other error.
#[derive(Debug, Parser)]
#[command(
    name = "alexdb-migrate",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 on success, 1 when the databases differ, 2 on any other error."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Copy a RocksDB database into AlexDB (source opened read-only), then
    /// verify the copy.
    Copy(CopyArgs),
    /// Export an AlexDB database back into RocksDB, then verify it.
    Export(ExportArgs),
    /// Compare two databases (either kind on either side) family by family.
    Verify(VerifyArgs),
    /// Show a database's kind, column families, key counts, sizes and checksums.
    Inspect(InspectArgs),
}

/// Options shared by `copy` and `export`.
#[derive(Debug, Args)]
pub struct TransferArgs {
    /// Only this column family (repeat for several); default: all of them.
    #[arg(long = "cf", value_name = "NAME")]
    pub families: Vec<String>,
    /// Continue an interrupted run into the same target (or accept a
    /// target that already holds a verified copy). Without it, a non-empty
    /// target is refused.
    #[arg(long)]
    pub resume: bool,
    /// Print a JSON report on standard output instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Keys per atomic batch (each batch also records the progress marker).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH_KEYS)]
    pub batch_keys: usize,
    /// Key and value bytes per atomic batch.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_BATCH_BYTES)]
    pub batch_bytes: usize,
}

impl TransferArgs {
    fn settings(&self) -> Settings {
        Settings {
            resume: self.resume,
            batch_keys: self.batch_keys.max(1),
            batch_bytes: self.batch_bytes.max(1),
        }
    }
}

/// `copy` arguments.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The RocksDB database to read.
    #[arg(long, value_name = "ROCKSDB_DIR")]
    pub from: PathBuf,
    /// The AlexDB database to write (created if missing; must be empty
    /// unless --resume).
    #[arg(long, value_name = "ALEXDB_DIR")]
    pub to: PathBuf,
    /// Keys are 8-byte big-endian i64 (`i64::to_be_bytes`, as the seeds'
    /// RocksStorage wrote them): rewrite each to the compat crate's
    /// `Storage` encoding (sign bit flipped), so the data reads back through
    /// `AlexStorage` in numeric order. Any other key length is an error.
    #[arg(long)]
    pub i64_keys: bool,
    /// Options shared by `copy` and `export`.
    #[command(flatten)]
    pub common: TransferArgs,
}

/// `export` arguments.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The AlexDB database to read.
    #[arg(long, value_name = "ALEXDB_DIR")]
    pub from: PathBuf,
    /// The RocksDB database to write (created if missing; must be empty
    /// unless --resume).
    #[arg(long, value_name = "ROCKSDB_DIR")]
    pub to: PathBuf,
    /// Options shared by `copy` and `export`.
    #[command(flatten)]
    pub common: TransferArgs,
}

/// `verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The first database.
    pub a: PathBuf,
    /// The second database.
    pub b: PathBuf,
    /// Only this column family (repeat for several); default: all on either side.
    #[arg(long = "cf", value_name = "NAME")]
    pub families: Vec<String>,
    /// A holds 8-byte big-endian i64 keys (as for `copy --i64-keys`):
    /// compare them as B would store them.
    #[arg(long)]
    pub i64_keys: bool,
    /// Print a JSON report on standard output instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// `inspect` arguments.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The database directory.
    pub dir: PathBuf,
    /// Print a JSON report on standard output instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command and returns the process exit status.
pub fn run(cli: Cli) -> i32 {
    match cli.command {
        Command::Copy(args) => run_copy(args),
        Command::Export(args) => run_export(args),
        Command::Verify(args) => run_verify(args),
        Command::Inspect(args) => run_inspect(args),
    }
}

fn run_copy(args: CopyArgs) -> i32 {
    let output = Output::new(args.common.json);
    let config = CopyConfig {
        from: args.from,
        to: args.to,
        families: args.common.families.clone(),
        i64_keys: args.i64_keys,
        settings: args.common.settings(),
        target_file_system: None,
    };
    let mut bar = Bar::new(args.common.json);
    let result = copy(&config, &mut bar);
    bar.finished();
    output.transfer(result)
}

fn run_export(args: ExportArgs) -> i32 {
    let output = Output::new(args.common.json);
    let mut bar = Bar::new(args.common.json);
    let result = export_with(args, &mut bar);
    bar.finished();
    output.transfer(result)
}

#[cfg(feature = "librocksdb")]
fn export_with(args: ExportArgs, bar: &mut Bar) -> Result<crate::transfer::TransferReport> {
    let config = ExportConfig {
        from: args.from,
        to: args.to,
        families: args.common.families.clone(),
        settings: args.common.settings(),
    };
    export(&config, bar)
}

#[cfg(not(feature = "librocksdb"))]
fn export_with(_args: ExportArgs, _bar: &mut Bar) -> Result<crate::transfer::TransferReport> {
    Err(crate::error::MigrateError::NotBuiltIn {
        command: "export",
        feature: "librocksdb",
    })
}

fn run_verify(args: VerifyArgs) -> i32 {
    let output = Output::new(args.json);
    output.verify(verify_paths(&args))
}

/// Opens both sides and compares them.
fn verify_paths(args: &VerifyArgs) -> Result<verify::VerifyReport> {
    let a = source::open_any(&args.a)?;
    let b = source::open_any(&args.b)?;
    let families = if args.families.is_empty() {
        verify::union_of_families(&*a, &*b)
    } else {
        args.families.clone()
    };
    let map = if args.i64_keys {
        KeyMap::I64SignFlip
    } else {
        KeyMap::Identity
    };
    let side_a = Side { source: &*a, map };
    let side_b = Side {
        source: &*b,
        map: KeyMap::Identity,
    };
    let mut bar = Bar::new(args.json);
    let report = verify::verify(side_a, side_b, &families, &mut bar);
    bar.finished();
    report
}

fn run_inspect(args: InspectArgs) -> i32 {
    let output = Output::new(args.json);
    output.inspect(inspect(&args.dir))
}

/// Maps a result to its exit status.
pub fn exit_status<T>(result: &Result<T>) -> i32 {
    match result {
        Ok(_) => EXIT_OK,
        Err(e) if e.kind() == "verification_failed" => EXIT_DIFFERENT,
        Err(_) => EXIT_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
