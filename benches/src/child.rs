//! The child process: one engine, one scenario, one repetition. It loads
//! the data, reopens, warms up, runs the workloads in a fixed order
//! (mutating ones last) and prints its figures as one JSON line.

use std::path::Path;
use std::time::Instant;

use alexdb::storage::AlexStorage;

use crate::cli::Cli;
use crate::engines::alexdb_compat::AlexCompat;
use crate::engines::alexdb_engine::AlexEngine;
use crate::engines::i64_api::{I64Engine, RocksStorage};
use crate::engines::lmdb::Lmdb;
use crate::engines::rocksdb::{RocksDefault, RocksTuned};
use crate::engines::sqlite::Sqlite;
use crate::engines::{Engine, EngineKind, Sizing};
use crate::error::{BenchError, Result};
use crate::keys::{DataSet, Keyset, uniform_order, zipf_order};
use crate::measure::{allocated_bytes, peak_rss_bytes};
use crate::results::ChildOutput;
use crate::workloads::{self as w, Workload};

/// How the child warms an engine up before the timed reads (for the report).
pub const WARM_UP: &str = "after the load and the timed reopen, each engine runs an untimed \
full ordered scan (where it has one) and untimed random copying gets of 10% of the operation \
count; nothing else runs in its process";

/// What one child runs.
#[derive(Clone, Debug)]
pub struct Job {
    engine: EngineKind,
    keyset: Keyset,
    keys: usize,
    value_size: usize,
    ops: usize,
    workloads: Vec<Workload>,
}

impl Job {
    /// The job described by the child's command line.
    pub fn from_cli(cli: &Cli) -> Result<Job> {
        let missing = |what: &str| BenchError(format!("--child needs {what}"));
        Ok(Job {
            engine: cli.engine.ok_or_else(|| missing("--engine"))?,
            keyset: cli.keyset.ok_or_else(|| missing("--keyset"))?,
            keys: *cli.keys.first().ok_or_else(|| missing("--keys"))?,
            value_size: *cli
                .value_sizes
                .first()
                .ok_or_else(|| missing("--value-size"))?,
            ops: cli.ops,
            workloads: cli.workloads.clone(),
        })
    }

    fn wants(&self, workload: Workload) -> bool {
        self.workloads.is_empty() || self.workloads.contains(&workload)
    }
}

/// Runs `job` in a fresh temporary directory under `data_dir`.
pub fn run(job: &Job, data_dir: Option<&Path>) -> Result<ChildOutput> {
    if job.engine.needs_integer_keys() && !job.keyset.is_integer() {
        return Err(BenchError(format!(
            "{} needs integer keys, not {}",
            job.engine.name(),
            job.keyset.name()
        )));
    }
    let data = DataSet::generate(job.keyset, job.keys, job.value_size);
    let dir = match data_dir {
        Some(d) => tempfile::Builder::new()
            .prefix("alexdb-bench-")
            .tempdir_in(d)?,
        None => tempfile::Builder::new().prefix("alexdb-bench-").tempdir()?,
    };
    match job.engine {
        EngineKind::Alexdb => run_engine::<AlexCompat>(job, &data, dir.path()),
        EngineKind::AlexdbEngine => run_engine::<AlexEngine>(job, &data, dir.path()),
        EngineKind::RocksdbDefault => run_engine::<RocksDefault>(job, &data, dir.path()),
        EngineKind::RocksdbTuned => run_engine::<RocksTuned>(job, &data, dir.path()),
        EngineKind::Sqlite => run_engine::<Sqlite>(job, &data, dir.path()),
        EngineKind::Lmdb => run_engine::<Lmdb>(job, &data, dir.path()),
        EngineKind::AlexdbI64 => run_engine::<I64Engine<AlexStorage>>(job, &data, dir.path()),
        EngineKind::RocksdbI64 => run_engine::<I64Engine<RocksStorage>>(job, &data, dir.path()),
    }
}

fn run_engine<E: Engine>(job: &Job, data: &DataSet, dir: &Path) -> Result<ChildOutput> {
    let n = data.present.len();
    let sizing = Sizing {
        keys: n,
        key_bytes: data.present.get(0).len(),
        value_bytes: job.value_size,
    };
    let mut out = ChildOutput::default();
    let mut engine = E::open(dir, &sizing)?;
    let load = w::load(&mut engine, data).map_err(|e| e.context("load"))?;
    out.figures.insert(Workload::Load, load);
    engine.close()?;

    let start = Instant::now();
    let mut engine = E::open(dir, &sizing).map_err(|e| e.context("reopen"))?;
    record(&mut out, job, Workload::Reopen, || Ok(ms(start)))?;
    record(&mut out, job, Workload::DiskBytes, || {
        Ok(allocated_bytes(dir)? as f64 / MIB)
    })?;

    if E::supports(Workload::IndexBytes) {
        if let Some(bytes) = engine.index_bytes() {
            record(&mut out, job, Workload::IndexBytes, || {
                Ok(bytes as f64 / n as f64)
            })?;
        }
    } else {
        out.unsupported.push(Workload::IndexBytes);
    }
    warm_up(&mut engine, data, job.ops.min(n))?;
    run_reads(&mut engine, job, data, &mut out)?;
    engine.close()?;
    record(&mut out, job, Workload::PeakRss, || {
        Ok(peak_rss_bytes()? as f64 / MIB)
    })?;
    Ok(out)
}

const MIB: f64 = (1 << 20) as f64;

fn run_reads<E: Engine>(
    engine: &mut E,
    job: &Job,
    data: &DataSet,
    out: &mut ChildOutput,
) -> Result<()> {
    let n = data.present.len();
    let ops = job.ops.min(n).max(1);
    let seeks = (ops / 4).max(1);
    let mut run = |workload: Workload, f: &mut dyn FnMut(&mut E) -> Result<f64>| {
        if !E::supports(workload) {
            out.unsupported.push(workload);
            return Ok(());
        }
        record(out, job, workload, || f(engine))
    };
    run(Workload::Get, &mut |e| {
        w::get_present(e, data, &uniform_order(n, ops, 1), false)
    })?;
    run(Workload::GetPinned, &mut |e| {
        w::get_present(e, data, &uniform_order(n, ops, 2), true)
    })?;
    run(Workload::GetAbsent, &mut |e| {
        w::get_absent(e, data, &uniform_order(n, ops, 3))
    })?;
    run(Workload::GetZipf, &mut |e| {
        w::get_present(e, data, &zipf_order(n, ops), false)
    })?;
    run(Workload::Seek10, &mut |e| {
        w::seek10(e, data, &uniform_order(n, seeks, 4))
    })?;
    run(Workload::Scan, &mut |e| w::scan(e, n))?;
    run(Workload::Mixed, &mut |e| {
        w::mixed(e, data, &uniform_order(n, ops, 5))
    })
}

/// Runs `measure` and records its figure if the job asked for `workload`;
/// the error names the workload.
fn record(
    out: &mut ChildOutput,
    job: &Job,
    workload: Workload,
    measure: impl FnOnce() -> Result<f64>,
) -> Result<()> {
    if job.wants(workload) {
        let value = measure().map_err(|e| e.context(workload.name()))?;
        out.figures.insert(workload, value);
    }
    Ok(())
}

fn warm_up<E: Engine>(engine: &mut E, data: &DataSet, ops: usize) -> Result<()> {
    let n = data.present.len();
    if E::supports(Workload::Scan) {
        engine.scan().map_err(|e| e.context("warm-up scan"))?;
    }
    w::get_present(
        engine,
        data,
        &uniform_order(n, (ops / 10).max(1), 99),
        false,
    )
    .map_err(|e| e.context("warm-up gets"))?;
    Ok(())
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
