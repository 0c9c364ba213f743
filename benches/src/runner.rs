//! The parent process: plans the runs, starts one child per engine,
//! scenario and repetition, collects their JSON, and writes the outputs.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::child::WARM_UP;
use crate::cli::Cli;
use crate::cpu_stalls::CpuStalls;
use crate::engines::EngineKind;
use crate::error::{BenchError, Result};
use crate::ltm::{self, Phase};
use crate::machine::{self, Machine};
use crate::results::{
    ChildOutput, Failure, RunResults, Sample, Scenario, Settings, summarize, summarize_latency,
};
use crate::{chart, report};

/// How long each half of the machine's stall probe spins (see
/// [`CpuStalls`]): before the children, so nothing else of ours runs.
const STALL_PROBE: Duration = Duration::from_secs(5);

/// One child to start (two in the larger-than-memory mode).
#[derive(Clone, Copy, Debug)]
struct Run {
    scenario: Scenario,
    engine: EngineKind,
    rep: usize,
    /// Whether this is a run of the larger-than-memory mode.
    ltm: bool,
}

/// Runs the whole comparison described by `cli` and writes the outputs;
/// `ltm`, when given, runs the larger-than-memory mode after the rest.
pub fn run(cli: &Cli, ltm: Option<&ltm::Mode>) -> Result<RunResults> {
    let started = Instant::now();
    let data_dir = cli.data_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut machine = Machine::detect(&data_dir);
    machine.cpu_stalls = Some(CpuStalls::measure(STALL_PROBE));
    let started_utc = machine::utc_now();
    let runs = plan(cli, ltm.is_some());
    let bar = progress(runs.len() as u64);
    let mut samples = Vec::new();
    let mut failures = Vec::new();
    for run in &runs {
        bar.set_message(format!(
            "{} · {} · rep {}{}",
            run.engine.name(),
            run.scenario.label(),
            run.rep,
            if run.ltm {
                " · larger than memory"
            } else {
                ""
            }
        ));
        let t = Instant::now();
        let output = match ltm.filter(|_| run.ltm) {
            Some(mode) => run_ltm(mode, cli, run, &data_dir),
            None => run_child(cli, run, &data_dir),
        };
        match output {
            Ok(output) => samples.push(Sample {
                scenario: run.scenario,
                engine: run.engine,
                rep: run.rep,
                output,
                wall_seconds: t.elapsed().as_secs_f64(),
            }),
            Err(e) => {
                bar.println(format!("{} failed: {e}", run.engine.name()));
                failures.push(Failure {
                    scenario: run.scenario,
                    engine: run.engine,
                    rep: run.rep,
                    error: e.0,
                });
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    machine.load_at_end = machine::load_average();
    let baseline = baseline(&cli.engines);
    let results = RunResults {
        started_utc,
        wall_seconds: started.elapsed().as_secs_f64(),
        machine,
        settings: settings(cli, baseline),
        rows: summarize(&samples, baseline),
        latency: summarize_latency(&samples),
        samples,
        failures,
    };
    write_outputs(&cli.out, &results)?;
    Ok(results)
}

/// The usual runs (if any workload outside the larger-than-memory mode
/// is asked for), then those of the larger-than-memory mode (with `ltm`).
fn plan(cli: &Cli, ltm: bool) -> Vec<Run> {
    let suite = cli.workloads.iter().any(|w| !w.is_larger_than_memory());
    let mut runs = Vec::new();
    for (wanted, ltm) in [(suite, false), (ltm, true)] {
        if wanted {
            runs.extend(plan_one(cli, ltm));
        }
    }
    runs
}

/// Scenarios outermost, then repetitions, then engines: the engines of
/// one repetition run back to back, so drift in the machine's state hits
/// them alike.
fn plan_one(cli: &Cli, ltm: bool) -> Vec<Run> {
    let mut runs = Vec::new();
    for scenario in scenarios(cli) {
        for rep in 1..=cli.reps {
            for &engine in &cli.engines {
                if engine.needs_integer_keys() && !scenario.keyset.is_integer() {
                    continue;
                }
                runs.push(Run {
                    scenario,
                    engine,
                    rep,
                    ltm,
                });
            }
        }
    }
    runs
}

fn scenarios(cli: &Cli) -> Vec<Scenario> {
    let mut out = Vec::new();
    for &keys in &cli.keys {
        for &value_size in &cli.value_sizes {
            for &keyset in &cli.keysets {
                out.push(Scenario {
                    keyset,
                    keys,
                    value_size,
                    values: cli.values,
                });
            }
        }
    }
    out
}

/// Ratios are taken against the drop-in `alexdb` when it runs, else the
/// engine.
fn baseline(engines: &[EngineKind]) -> EngineKind {
    if engines.contains(&EngineKind::Alexdb) {
        EngineKind::Alexdb
    } else {
        EngineKind::AlexdbEngine
    }
}

fn settings(cli: &Cli, baseline: EngineKind) -> Settings {
    Settings {
        reps: cli.reps,
        ops: cli.ops,
        engines: cli.engines.clone(),
        workloads: cli.workloads.clone(),
        scenarios: scenarios(cli),
        baseline,
        warm_up: WARM_UP.to_string(),
        quick: cli.quick,
    }
}

fn progress(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// Re-executes this binary as `--child` for `run` and parses its JSON.
fn run_child(cli: &Cli, run: &Run, data_dir: &Path) -> Result<ChildOutput> {
    let workloads: Vec<&str> = cli
        .workloads
        .iter()
        .filter(|w| w.produced_by() == **w && !w.is_larger_than_memory())
        .map(|w| w.name())
        .collect();
    let mut command = child_command(cli, run, data_dir)?;
    command
        .args(["--workloads", &workloads.join(",")])
        .stdin(Stdio::null());
    parse_child(command.output()?)
}

/// Runs `run` in the larger-than-memory mode: a loading child, then a
/// reading child in a memory group; parses the reader's JSON.
fn run_ltm(mode: &ltm::Mode, cli: &Cli, run: &Run, data_dir: &Path) -> Result<ChildOutput> {
    let label = format!("{}-{}", run.engine.name(), run.rep);
    let output = mode.run(data_dir, &label, |phase: Phase, store: &Path| {
        let mut command = child_command(cli, run, data_dir)?;
        command
            .args(["--ltm-phase", phase.name()])
            .arg("--ltm-dir")
            .arg(store);
        Ok(command)
    })?;
    parse_child(output)
}

/// This binary as `--child` for `run`'s engine and scenario.
fn child_command(cli: &Cli, run: &Run, data_dir: &Path) -> Result<Command> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .arg("--child")
        .args(["--engine", run.engine.name()])
        .args(["--keyset", run.scenario.keyset.name()])
        .args(["--keys", &run.scenario.keys.to_string()])
        .args(["--value-size", &run.scenario.value_size.to_string()])
        .args(["--values", run.scenario.values.name()])
        .args(["--ops", &cli.ops.to_string()])
        .arg("--data-dir")
        .arg(data_dir);
    Ok(command)
}

/// The figures a child printed as its last line, or why it failed.
fn parse_child(output: Output) -> Result<ChildOutput> {
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(BenchError(format!(
            "child exited with {}: {}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line).map_err(|e| BenchError(format!("child printed no result: {e}")))
}

/// Writes results.json, report.md and latency.svg into `out`.
pub fn write_outputs(out: &Path, results: &RunResults) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let json = serde_json::to_string_pretty(results)?;
    std::fs::write(out.join("results.json"), json)?;
    std::fs::write(out.join("report.md"), report::markdown(results))?;
    chart::write_svg(&out.join("latency.svg"), results)?;
    Ok(())
}

/// Fails unless every engine and workload asked for has a figure and is
/// named in the report, the other outputs exist, and no child failed.
pub fn check(cli: &Cli, out: &Path, results: &RunResults) -> Result<()> {
    let report_path = out.join("report.md");
    let report = std::fs::read_to_string(&report_path)?;
    let mut missing: Vec<String> = Vec::new();
    for engine in &cli.engines {
        let measured = results.rows.iter().any(|r| r.engine == *engine);
        if !measured || !report.contains(&format!(" {} |", engine.name())) {
            missing.push(format!("engine {}", engine.name()));
        }
    }
    for workload in &cli.workloads {
        let measured = results.rows.iter().any(|r| r.workload == *workload);
        if !measured || !report.contains(&format!("| {} |", workload.name())) {
            missing.push(format!("workload {}", workload.name()));
        }
    }
    for file in ["results.json", "latency.svg"] {
        if !out.join(file).exists() {
            missing.push(file.to_string());
        }
    }
    if let Some(f) = results.failures.first() {
        return Err(BenchError(format!(
            "{} run(s) failed, first {} on {}: {}",
            results.failures.len(),
            f.engine.name(),
            f.scenario.label(),
            f.error
        )));
    }
    if !missing.is_empty() {
        return Err(BenchError(format!(
            "{} lacks figures for: {}",
            report_path.display(),
            missing.join(", ")
        )));
    }
    Ok(())
}
