//! The markdown report: settings, machine, goals, one table per scenario,
//! and what each workload and engine is.

use std::fmt::Write as _;

use crate::aims;
use crate::engines::EngineKind;
use crate::keys::Keyset;
use crate::latency::Latency;
use crate::results::{LatencyRow, Row, RunResults, Scenario, thousands};
use crate::workloads::{Unit, Workload};

/// The whole report as markdown (also printed to the terminal).
pub fn markdown(r: &RunResults) -> String {
    let mut s = String::new();
    header(&mut s, r);
    if let Some(scenario) = goal_scenario(r) {
        goals(&mut s, r, &scenario);
        aims::table(&mut s, r, &scenario);
    }
    for scenario in &r.settings.scenarios {
        table(&mut s, r, scenario);
        latency_table(&mut s, r, scenario);
    }
    legend(&mut s, r);
    s
}

fn header(s: &mut String, r: &RunResults) {
    let _ = writeln!(s, "# AlexDB side-by-side benchmark\n");
    let _ = writeln!(
        s,
        "- Run: {}, {:.0} s wall{}.",
        r.started_utc,
        r.wall_seconds,
        if r.settings.quick {
            " (`--quick`: a smoke run, not a measurement)"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "- Machine: {}.", r.machine.summary());
    let _ = writeln!(
        s,
        "- Method: each engine runs in its own process on the same generated data, \
         {} repetition(s) each (a fresh process and directory every time; engines interleaved \
         within a repetition); up to {} operations per point workload, a quarter as many seeks. \
         Warm-up: {}.",
        r.settings.reps,
        thousands(r.settings.ops as u64),
        r.settings.warm_up
    );
    let _ = writeln!(
        s,
        "- Durability: the same class everywhere: no fsync per write; every acknowledged write \
         survives a crash of the process (not necessarily of the machine)."
    );
    let _ = writeln!(
        s,
        "- Cells: median (min–max over repetitions) and, after the `·`, the ratio engine ÷ \
         `{}`: above 1 means AlexDB is faster or smaller by that factor, below 1 means it is \
         slower or larger. Lower figures are better everywhere.\n",
        r.settings.baseline.name()
    );
}

/// The scenario the goals are judged on: uniform keys, 100-byte
/// values, 1M keys if run (else the largest such scale).
pub fn goal_scenario(r: &RunResults) -> Option<Scenario> {
    r.settings
        .scenarios
        .iter()
        .filter(|s| s.keyset == Keyset::Uniform && s.value_size == 100)
        .max_by_key(|s| (s.keys == 1_000_000, s.keys))
        .copied()
}

struct Goal {
    what: &'static str,
    workload: Workload,
    against: EngineKind,
    factor: f64,
}

const GOALS: [Goal; 6] = [
    Goal {
        what: "point get (copying) ≥ 4x faster than rocksdb-tuned",
        workload: Workload::Get,
        against: EngineKind::RocksdbTuned,
        factor: 4.0,
    },
    Goal {
        what: "point get (copying) ≥ 2x faster than sqlite",
        workload: Workload::Get,
        against: EngineKind::Sqlite,
        factor: 2.0,
    },
    Goal {
        what: "point get (copying) faster than lmdb",
        workload: Workload::Get,
        against: EngineKind::Lmdb,
        factor: 1.0,
    },
    Goal {
        what: "mixed 80/20 ≥ 5x faster than rocksdb-tuned",
        workload: Workload::Mixed,
        against: EngineKind::RocksdbTuned,
        factor: 5.0,
    },
    Goal {
        what: "bulk load no slower than rocksdb-tuned",
        workload: Workload::Load,
        against: EngineKind::RocksdbTuned,
        factor: 1.0,
    },
    Goal {
        what: "seek + 10 no slower than rocksdb-tuned",
        workload: Workload::Seek10,
        against: EngineKind::RocksdbTuned,
        factor: 1.0,
    },
];

/// Zero-copy comparisons shown beside the goals (not goals themselves).
const ALSO: [Goal; 2] = [
    Goal {
        what: "(also) zero-copy get vs rocksdb-tuned `get_pinned`",
        workload: Workload::GetPinned,
        against: EngineKind::RocksdbTuned,
        factor: 4.0,
    },
    Goal {
        what: "(also) zero-copy get vs lmdb zero-copy get",
        workload: Workload::GetPinned,
        against: EngineKind::Lmdb,
        factor: 1.0,
    },
];

/// The AlexDB engines of the run, in order: the columns of the goals.
pub fn alexdb_columns(r: &RunResults) -> Vec<EngineKind> {
    r.settings
        .engines
        .iter()
        .copied()
        .filter(|e| e.is_alexdb())
        .collect()
}

fn goals(s: &mut String, r: &RunResults, scenario: &Scenario) {
    let alexes = alexdb_columns(r);
    let _ = writeln!(s, "## Goals ({})\n", scenario.label());
    if scenario.keys != 1_000_000 || r.settings.quick {
        let _ = writeln!(
            s,
            "The goals are set at 1,000,000 keys in a full run; this run's figures are shown \
             for reference only.\n"
        );
    }
    let _ = write!(s, "| goal |");
    for a in &alexes {
        let _ = write!(s, " {} |", a.name());
    }
    let _ = writeln!(s, "\n|---|{}", "---|".repeat(alexes.len()));
    for goal in GOALS.iter().chain(&ALSO) {
        let _ = write!(s, "| {} |", goal.what);
        for &a in &alexes {
            let _ = write!(s, " {} |", goal_cell(r, scenario, a, goal));
        }
        let _ = writeln!(s);
    }
    let _ = write!(s, "| reopen < 1 s |");
    for &a in &alexes {
        let cell = match r.row(scenario, a, Workload::Reopen) {
            Some(row) => {
                let met = if row.summary.median < 1_000.0 {
                    "met"
                } else {
                    "missed"
                };
                format!("{} — {met}", value(row.summary.median, Unit::Millis))
            }
            None => "n/a".into(),
        };
        let _ = write!(s, " {cell} |");
    }
    let _ = writeln!(
        s,
        "\n\nRatios are the other engine's median ÷ AlexDB's (figures: AlexDB vs the other)."
    );
    let _ = writeln!(
        s,
        "A ratio close to 1 is within this machine's noise: compare it with the spreads below.\n"
    );
}

fn goal_cell(r: &RunResults, scenario: &Scenario, alex: EngineKind, goal: &Goal) -> String {
    let (Some(a), Some(o)) = (
        r.row(scenario, alex, goal.workload),
        r.row(scenario, goal.against, goal.workload),
    ) else {
        return "n/a".into();
    };
    let unit = goal.workload.unit();
    let ratio = o.summary.median / a.summary.median;
    let figures = format!(
        "{} vs {}",
        value(a.summary.median, unit),
        value(o.summary.median, unit)
    );
    if goal.what.starts_with("(also)") {
        return format!("{} ({figures})", ratio_text(ratio));
    }
    let verdict = if ratio >= goal.factor {
        "met"
    } else {
        "missed"
    };
    format!("{} — {verdict} ({figures})", ratio_text(ratio))
}

fn table(s: &mut String, r: &RunResults, scenario: &Scenario) {
    let engines: Vec<EngineKind> = r
        .settings
        .engines
        .iter()
        .copied()
        .filter(|&e| {
            r.rows
                .iter()
                .any(|x| x.engine == e && x.scenario == *scenario)
        })
        .collect();
    let _ = writeln!(s, "## {}\n", scenario.label());
    if engines.is_empty() {
        let _ = writeln!(s, "No figures (every run failed).\n");
        return;
    }
    let _ = write!(s, "| workload |");
    for e in &engines {
        let _ = write!(s, " {} |", e.name());
    }
    let _ = writeln!(s, "\n|---|{}", "---|".repeat(engines.len()));
    for &w in Workload::ALL
        .iter()
        .filter(|w| r.settings.workloads.contains(w))
    {
        let _ = write!(s, "| {} |", w.name());
        for &e in &engines {
            let _ = write!(s, " {} |", cell(r.row(scenario, e, w), r.settings.baseline));
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
}

/// Per-operation latency of the workloads timed per operation: one row
/// per workload and kind of operation, p50 / p99 / p99.9 / max per engine
/// (medians over repetitions; max is the longest single operation, the
/// longest stall a caller saw).
fn latency_table(s: &mut String, r: &RunResults, scenario: &Scenario) {
    let rows: Vec<&LatencyRow> = r
        .latency
        .iter()
        .filter(|l| l.scenario == *scenario)
        .collect();
    if rows.is_empty() {
        return;
    }
    let engines: Vec<EngineKind> = r
        .settings
        .engines
        .iter()
        .copied()
        .filter(|&e| rows.iter().any(|l| l.engine == e))
        .collect();
    let _ = writeln!(
        s,
        "Latency per operation, p50 / p99 / p99.9 / max (max: the longest stall), medians \
         over repetitions:\n"
    );
    let _ = write!(s, "| workload · operation |");
    for e in &engines {
        let _ = write!(s, " {} |", e.name());
    }
    let _ = writeln!(s, "\n|---|{}", "---|".repeat(engines.len()));
    let mut kinds: Vec<(Workload, &str)> = Vec::new();
    for w in Workload::ALL {
        for l in rows.iter().filter(|l| l.workload == w) {
            if !kinds.contains(&(w, l.operation.as_str())) {
                kinds.push((w, l.operation.as_str()));
            }
        }
    }
    for (w, op) in kinds {
        let _ = write!(s, "| {} · {op} |", w.name());
        for &e in &engines {
            let found = rows
                .iter()
                .find(|l| l.engine == e && l.workload == w && l.operation == op);
            let _ = write!(
                s,
                " {} |",
                found.map_or("n/a".into(), |l| percentiles(&l.median))
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
}

/// "330 ns / 710 ns / 1.52 µs / 61.2 µs": the four percentiles, each in
/// the unit that reads best.
fn percentiles(l: &Latency) -> String {
    [l.p50, l.p99, l.p999, l.max]
        .map(|v| value(v, Unit::NanosPerOp))
        .join(" / ")
}

fn cell(row: Option<&Row>, baseline: EngineKind) -> String {
    let Some(row) = row else { return "n/a".into() };
    let unit = row.workload.unit();
    let (div, suffix) = scale(row.summary.median, unit);
    let mut out = format!("{}{suffix}", digits(row.summary.median / div));
    let (min, max) = (digits(row.summary.min / div), digits(row.summary.max / div));
    if row.summary.reps > 1 && min != max {
        let _ = write!(out, " ({min}–{max})");
    }
    if let (Some(ratio), false) = (row.ratio_vs_baseline, row.engine == baseline) {
        let _ = write!(out, " · {}", ratio_text(ratio));
    }
    out
}

/// A ratio with enough digits to stay readable when it is tiny.
pub fn ratio_text(ratio: f64) -> String {
    match ratio {
        r if r >= 10.0 => format!("{r:.1}x"),
        r if r >= 0.1 => format!("{r:.2}x"),
        r if r >= 0.001 => format!("{r:.4}x"),
        _ => "<0.001x".into(),
    }
}

/// A value with its unit, scaled to read well.
pub fn value(v: f64, unit: Unit) -> String {
    let (div, suffix) = scale(v, unit);
    format!("{}{suffix}", digits(v / div))
}

/// The divisor and suffix that make `v` readable.
pub fn scale(v: f64, unit: Unit) -> (f64, &'static str) {
    match unit {
        Unit::NanosPerKey | Unit::NanosPerOp | Unit::NanosPerEntry => match v {
            v if v >= 1e6 => (1e6, " ms"),
            v if v >= 1e3 => (1e3, " µs"),
            _ => (1.0, " ns"),
        },
        Unit::Millis if v >= 1e3 => (1e3, " s"),
        Unit::Millis => (1.0, " ms"),
        Unit::MiB if v >= 1024.0 => (1024.0, " GiB"),
        Unit::MiB => (1.0, " MiB"),
        Unit::BytesPerKey => (1.0, " B/key"),
        Unit::BytesPerGet => (1.0, " B/get"),
        Unit::TimesLive => (1.0, "x live"),
    }
}

/// Three significant digits, at most two decimals.
fn digits(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

fn legend(s: &mut String, r: &RunResults) {
    let _ = writeln!(s, "## Workloads\n");
    for w in Workload::ALL
        .iter()
        .filter(|w| r.settings.workloads.contains(w))
    {
        let _ = writeln!(s, "- `{}`: {}.", w.name(), w.description());
    }
    let _ = writeln!(
        s,
        "\n`peak-rss` counts the mapped file pages a process touched, so memory-mapped \
         engines (AlexDB, LMDB) include the part of the data they read; RocksDB's block cache \
         and SQLite's page cache are counted as they fill. `index-bytes`: for AlexDB the ALEX \
         index's heap bytes (`Stats::index_bytes`, through `rocksdb.stats` for `alexdb`); for \
         RocksDB `rocksdb.estimate-table-readers-mem` (index and filter blocks of the open \
         tables); SQLite and LMDB keep their B-tree inner pages in the file, so n/a. `n/a`: the engine's API has no such \
         operation (the i64 API has no zero-copy get, seek or scan) or the run failed.\n"
    );
    let _ = writeln!(s, "## Engines\n");
    for e in &r.settings.engines {
        let _ = writeln!(s, "- `{}`: {}", e.name(), e.configuration());
    }
    if !r.failures.is_empty() {
        let _ = writeln!(s, "\n## Failed runs\n");
        for f in &r.failures {
            let _ = writeln!(
                s,
                "- `{}` on {} (rep {}): {}",
                f.engine.name(),
                f.scenario.label(),
                f.rep,
                f.error
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_well() {
        assert_eq!(value(412.3, Unit::NanosPerOp), "412 ns");
        assert_eq!(value(5_123.0, Unit::NanosPerOp), "5.12 µs");
        assert_eq!(value(13_400.0, Unit::NanosPerOp), "13.4 µs");
        assert_eq!(value(1_500.0, Unit::Millis), "1.50 s");
        assert_eq!(value(21.04, Unit::BytesPerKey), "21.0 B/key");
        assert_eq!(ratio_text(4.123), "4.12x");
        assert_eq!(ratio_text(0.00026), "<0.001x");
        assert_eq!(ratio_text(0.0042), "0.0042x");
    }
}
