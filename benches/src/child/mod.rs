//! The child process: one engine, one scenario, one repetition. It loads
//! the data, reopens, warms up, runs the workloads in a fixed order
//! (mutating ones last) and prints its figures as one JSON line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use alexdb::storage::AlexStorage;

use crate::cli::Cli;
use crate::engines::alexdb_compat::AlexCompat;
use crate::engines::alexdb_engine::AlexEngine;
use crate::engines::floor::Floor;
use crate::engines::i64_api::{I64Engine, RocksStorage};
use crate::engines::lmdb::Lmdb;
use crate::engines::rocksdb::{RocksDefault, RocksTuned};
use crate::engines::sqlite::Sqlite;
use crate::engines::{Engine, EngineKind, Sizing};
use crate::error::{BenchError, Result};
use crate::keys::{DataSet, Keyset, ValueKind, uniform_order};
use crate::ltm::Phase;
use crate::measure::{allocated_bytes, anon_rss_bytes, peak_rss_bytes};
use crate::results::ChildOutput;
use crate::workloads::{self as w, Timed, Workload};

mod compactions;
mod larger_than_memory;
mod lifecycle;
mod merges;
mod reads;
mod steady;
mod writes;

/// The state the steps after the reads share.
struct Steps<'a> {
    job: &'a Job,
    data: &'a DataSet,
    dir: &'a Path,
    sizing: Sizing,
    out: ChildOutput,
    /// Loaded keys deleted so far, by load index.
    gone: Vec<bool>,
    /// New keys `hot-range` added.
    added: usize,
}

/// How the child warms an engine up before the timed reads (for the report).
pub const WARM_UP: &str = "after the load, the timed reopen and the timed wait for its background \
compactions (`settle`), each engine runs an untimed \
full ordered scan (where it has one) and untimed random copying gets of 10% of the operation \
count; nothing else runs in its process. The reads run first, then the workloads that write \
(`get-w`, `mixed`, `optimistic-txn`, `writers-*`, `scan-compacted`, `hot-range`, \
`delete-range`), then `delete-heavy`, each on what the previous ones left";

/// What one child runs.
#[derive(Clone, Debug)]
pub struct Job {
    engine: EngineKind,
    keyset: Keyset,
    keys: usize,
    value_size: usize,
    values: ValueKind,
    ops: usize,
    workloads: Vec<Workload>,
    /// A step of the larger-than-memory mode, and its store's directory.
    ltm: Option<(Phase, PathBuf)>,
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
            values: cli.values,
            ops: cli.ops,
            workloads: cli.workloads.clone(),
            ltm: cli.ltm_phase.zip(cli.ltm_dir.clone()),
        })
    }

    fn wants(&self, workload: Workload) -> bool {
        self.workloads.is_empty()
            || self.workloads.contains(&workload)
            || self.workloads.contains(&workload.produced_by())
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
    let data = DataSet::generate(job.keyset, job.keys, job.value_size, job.values);
    let temp;
    let dir = match &job.ltm {
        Some((_, dir)) => dir.as_path(),
        None => {
            temp = fresh_dir(data_dir)?;
            temp.path()
        }
    };
    match job.engine {
        EngineKind::Alexdb => run_engine::<AlexCompat>(job, &data, dir),
        EngineKind::AlexdbEngine => run_engine::<AlexEngine>(job, &data, dir),
        EngineKind::RocksdbDefault => run_engine::<RocksDefault>(job, &data, dir),
        EngineKind::RocksdbTuned => run_engine::<RocksTuned>(job, &data, dir),
        EngineKind::Sqlite => run_engine::<Sqlite>(job, &data, dir),
        EngineKind::Lmdb => run_engine::<Lmdb>(job, &data, dir),
        EngineKind::AlexdbI64 => run_engine::<I64Engine<AlexStorage>>(job, &data, dir),
        EngineKind::RocksdbI64 => run_engine::<I64Engine<RocksStorage>>(job, &data, dir),
        EngineKind::Floor => run_engine::<Floor>(job, &data, dir),
    }
}

/// A new temporary directory under `data_dir` (else the system's).
fn fresh_dir(data_dir: Option<&Path>) -> Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("alexdb-bench-");
    Ok(match data_dir {
        Some(d) => builder.tempdir_in(d)?,
        None => builder.tempdir()?,
    })
}

/// A new temporary directory beside the store in `dir` (in its parent),
/// named `alexdb-bench-<what>-…`, for a workload that needs a store of
/// its own; removed when the handle is dropped.
fn dir_beside(dir: &Path, what: &str) -> Result<tempfile::TempDir> {
    let beside = dir.parent().unwrap_or(dir);
    Ok(tempfile::Builder::new()
        .prefix(&format!("alexdb-bench-{what}-"))
        .tempdir_in(beside)?)
}

/// Runs the job's larger-than-memory step, or else the whole suite.
fn run_engine<E: Engine>(job: &Job, data: &DataSet, dir: &Path) -> Result<ChildOutput> {
    let sizing = sizing(job, data);
    match job.ltm.as_ref().map(|(phase, _)| phase) {
        Some(Phase::Load) => larger_than_memory::load::<E>(data, dir, &sizing),
        Some(Phase::Read) => larger_than_memory::read::<E>(job, data, dir, &sizing),
        None => run_suite::<E>(job, data, dir),
    }
}

/// The sizes the engines are told of.
fn sizing(job: &Job, data: &DataSet) -> Sizing {
    Sizing {
        keys: data.present.len(),
        key_bytes: data.present.get(0).len(),
        value_bytes: job.value_size,
    }
}

fn run_suite<E: Engine>(job: &Job, data: &DataSet, dir: &Path) -> Result<ChildOutput> {
    let n = data.present.len();
    let sizing = sizing(job, data);
    let mut out = ChildOutput::default();
    let anon_before_open = anon_rss_bytes()?;
    let mut engine = E::open(dir, &sizing)?;
    let load = w::load(&mut engine, data).map_err(|e| e.context("load"))?;
    if E::supports(Workload::Load) {
        out.figures.insert(Workload::Load, load);
    }
    if E::supports(Workload::LoadAnon) {
        record(&mut out, job, Workload::LoadAnon, || {
            std::thread::sleep(LOAD_ANON_WAIT);
            let added = anon_rss_bytes()?.saturating_sub(anon_before_open);
            Ok(added as f64 / n as f64)
        })?;
    }
    check_background(&engine, "the load")?;
    engine.close()?;

    let start = Instant::now();
    let mut engine = E::open(dir, &sizing).map_err(|e| e.context("reopen"))?;
    record(&mut out, job, Workload::Reopen, || Ok(ms(start)))?;
    record(&mut out, job, Workload::DiskBytes, || {
        Ok(allocated_bytes(dir)? as f64 / MIB)
    })?;
    record_index_bytes(&mut out, job, &engine, Workload::IndexBytes, n)?;
    settle(&mut out, job, &mut engine)?;
    record(&mut out, job, Workload::DiskSettled, || {
        Ok(allocated_bytes(dir)? as f64 / MIB)
    })?;
    overwrite_anon(&mut out, job, &mut engine, data, anon_before_open)?;
    warm_up(&mut engine, data, job.ops.min(n))?;
    reads::run(&mut engine, job, data, &mut out)?;
    reads::cmp_seek10::<E>(job, data, dir, &sizing, &mut out)?;
    compactions::run::<E>(job, data, dir, &sizing, &mut out)?;
    merges::run::<E>(job, n, dir, &sizing, &mut out)?;
    let mut steps = Steps {
        job,
        data,
        dir,
        sizing,
        out,
        gone: vec![false; n],
        added: 0,
    };
    let engine = steps.writes(engine)?;
    check_background(&engine, "the reads and writes")?;
    steps.lifecycle(engine)?;
    let mut out = steps.out;
    record(&mut out, job, Workload::PeakRss, || {
        Ok(peak_rss_bytes()? as f64 / MIB)
    })?;
    Ok(out)
}

const MIB: f64 = (1 << 20) as f64;

/// How long after the load `load-anon` is measured: AlexDB acts on a
/// keyspace that has taken no new key for 2 s, within a second after.
const LOAD_ANON_WAIT: Duration = Duration::from_secs(5);

/// Fails the run if the engine counted errors of its background work
/// (a compaction that failed or panicked) during `phase`: its figures
/// would not be those of a working engine, and a background thread's
/// panic is otherwise only on the child's standard error.
fn check_background<E: Engine>(engine: &E, phase: &str) -> Result<()> {
    match engine.background_errors() {
        Some(errors) if errors > 0 => Err(BenchError(format!(
            "{errors} background error(s) (compaction) during {phase}"
        ))),
        _ => Ok(()),
    }
}

impl Steps<'_> {
    /// Whether the job asked for `workload` and `E` runs it; one asked for
    /// that `E` cannot run is listed as unsupported.
    fn runs<E: Engine>(&mut self, workload: Workload) -> bool {
        let wanted = self.job.wants(workload);
        if wanted && !E::supports(workload) {
            self.out.unsupported.push(workload);
            return false;
        }
        wanted
    }
}

/// Waits for the engine's background compactions ([`Engine::settle`]) and
/// records how long that took, where the engine runs any.
fn settle<E: Engine>(out: &mut ChildOutput, job: &Job, engine: &mut E) -> Result<()> {
    let start = Instant::now();
    engine.settle().map_err(|e| e.context("settle"))?;
    check_background(engine, "the wait for compactions")?;
    match E::supports(Workload::Settle) {
        true => record(out, job, Workload::Settle, || Ok(ms(start))),
        false => {
            out.unsupported.push(Workload::Settle);
            Ok(())
        }
    }
}

/// Runs `overwrite-anon` (see [`steady`]) if the job asks for it and the
/// engine can.
fn overwrite_anon<E: Engine>(
    out: &mut ChildOutput,
    job: &Job,
    engine: &mut E,
    data: &DataSet,
    anon_before_open: u64,
) -> Result<()> {
    let workload = Workload::OverwriteAnon;
    if !job.wants(workload) {
        return Ok(());
    }
    if !E::supports(workload) {
        out.unsupported.push(workload);
        return Ok(());
    }
    let per_key = steady::overwrite_anon(engine, data, anon_before_open)
        .map_err(|e| e.context(workload.name()))?;
    out.figures.insert(workload, per_key);
    check_background(engine, workload.name())
}

/// Records the engine's index bytes per key of `keys` as `workload`.
fn record_index_bytes<E: Engine>(
    out: &mut ChildOutput,
    job: &Job,
    engine: &E,
    workload: Workload,
    keys: usize,
) -> Result<()> {
    if !E::supports(workload) {
        out.unsupported.push(workload);
        return Ok(());
    }
    match engine.index_bytes() {
        Some(bytes) => record(out, job, workload, || Ok(bytes as f64 / keys.max(1) as f64)),
        None => Ok(()),
    }
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

/// Runs `measure` if the job asked for `workload` and the engine runs it;
/// records its figure and latencies.
fn record_timed(
    out: &mut ChildOutput,
    job: &Job,
    workload: Workload,
    supported: bool,
    measure: impl FnOnce() -> Result<Timed>,
) -> Result<()> {
    if !job.wants(workload) {
        return Ok(());
    }
    if !supported {
        out.unsupported.push(workload);
        return Ok(());
    }
    let timed = measure().map_err(|e| e.context(workload.name()))?;
    out.figures.insert(workload, timed.per_op);
    if !timed.latency.is_empty() {
        let ops = out.latency.entry(workload).or_default();
        for (label, latency) in timed.latency {
            ops.insert(label.to_string(), latency);
        }
    }
    Ok(())
}

fn warm_up<E: Engine>(engine: &mut E, data: &DataSet, ops: usize) -> Result<()> {
    let n = data.present.len();
    if E::supports(Workload::Scan) {
        engine.scan().map_err(|e| e.context("warm-up scan"))?;
    }
    if E::supports(Workload::Get) {
        w::get_present(
            engine,
            data,
            &uniform_order(n, (ops / 10).max(1), 99),
            false,
        )
        .map_err(|e| e.context("warm-up gets"))?;
    }
    Ok(())
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::check_background;
    use crate::engines::{Engine, Sizing};
    use crate::error::Result;

    /// An engine that stores nothing and reports a count of background errors.
    struct Counting(Option<u64>);

    impl Engine for Counting {
        fn open(_dir: &Path, _sizing: &Sizing) -> Result<Self> {
            Ok(Counting(None))
        }

        fn write_batch(&mut self, _pairs: &[(&[u8], &[u8])]) -> Result<()> {
            Ok(())
        }

        fn put(&mut self, _key: &[u8], _value: &[u8]) -> Result<()> {
            Ok(())
        }

        fn get(&mut self, _key: &[u8]) -> Result<Option<u64>> {
            Ok(None)
        }

        fn background_errors(&self) -> Option<u64> {
            self.0
        }
    }

    #[test]
    fn background_errors_fail_the_run() {
        assert!(check_background(&Counting(None), "the load").is_ok());
        assert!(check_background(&Counting(Some(0)), "the load").is_ok());
        let error = check_background(&Counting(Some(2)), "the load").unwrap_err();
        assert!(error.0.contains("2 background error(s)"), "{}", error.0);
        assert!(error.0.contains("during the load"), "{}", error.0);
    }
}
