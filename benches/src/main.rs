//! `alexdb-bench`: compares AlexDB with RocksDB, SQLite and LMDB side by
//! side. Run `alexdb-bench --help`, or `make bench`.
//!
//! The runner re-executes itself once per engine, scenario and repetition
//! (`--child`, hidden), so no engine's memory or caches help or hurt
//! another; it reads each child's figures as JSON and writes a markdown
//! report, the raw figures and an SVG chart.

/// With the `mimalloc` feature, Rust code allocates through mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod aims;
mod chart;
mod child;
mod cli;
mod cpu_stalls;
mod engines;
mod error;
mod keys;
mod latency;
mod ltm;
mod machine;
mod measure;
mod report;
mod results;
mod rng;
mod runner;
mod workloads;
mod zipf;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::Cli;
use crate::error::Result;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = if cli.child {
        run_child(&cli)
    } else if let Some(json) = &cli.render {
        render(json, &cli.out)
    } else {
        run_parent(cli.resolved())
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("alexdb-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_child(cli: &Cli) -> Result<()> {
    let job = child::Job::from_cli(cli)?;
    let output = child::run(&job, cli.data_dir.as_deref())?;
    println!("{}", serde_json::to_string(&output)?);
    Ok(())
}

/// Prepares `--larger-than-memory` if asked; where this machine cannot run
/// it, says why and drops it from the run.
fn larger_than_memory(cli: Cli) -> (Cli, Option<ltm::Mode>) {
    if !cli.larger_than_memory {
        return (cli, None);
    }
    match ltm::Mode::prepare() {
        Ok(mode) => (cli, Some(mode)),
        Err(e) => {
            eprintln!("alexdb-bench: --larger-than-memory skipped: {e}");
            (cli.without_larger_than_memory(), None)
        }
    }
}

fn render(json: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(json)
        .map_err(|e| error::BenchError::from(e).context(&json.display().to_string()))?;
    let results: results::RunResults = serde_json::from_str(&text)?;
    runner::write_outputs(out, &results)?;
    println!("{}", report::markdown(&results));
    Ok(())
}

fn run_parent(cli: Cli) -> Result<()> {
    let (cli, ltm) = larger_than_memory(cli);
    if cli.workloads.is_empty() {
        eprintln!("alexdb-bench: nothing left to run");
        return Ok(());
    }
    let results = runner::run(&cli, ltm.as_ref())?;
    println!("{}", report::markdown(&results));
    eprintln!(
        "alexdb-bench: wrote {}/report.md, results.json and latency.svg",
        cli.out.display()
    );
    if cli.check {
        runner::check(&cli, &cli.out, &results)?;
        eprintln!("alexdb-bench: check passed: every engine and workload is in the report");
    }
    Ok(())
}
