//! The figures: one child's output, the samples of a run, and their
//! summaries (median and spread over repetitions).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engines::EngineKind;
use crate::keys::{Keyset, ValueKind};
use crate::latency::Latency;
use crate::machine::Machine;
use crate::workloads::Workload;

/// One data set: key set, scale and value size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Scenario {
    /// How keys are drawn.
    pub keyset: Keyset,
    /// Number of keys loaded.
    pub keys: usize,
    /// Bytes per value.
    pub value_size: usize,
    /// What the values hold (results written before this field read as
    /// random).
    #[serde(default)]
    pub values: ValueKind,
}

impl Scenario {
    /// A heading such as "uniform · 1,000,000 keys · 100 B values".
    pub fn label(&self) -> String {
        let text = match self.values {
            ValueKind::Random => "",
            ValueKind::Text => " text",
        };
        format!(
            "{} · {} keys · {} B{text} values",
            self.keyset.name(),
            thousands(self.keys as u64),
            self.value_size
        )
    }
}

/// What a child process prints: its figures and remarks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChildOutput {
    /// Figure per workload run.
    pub figures: BTreeMap<Workload, f64>,
    /// Workloads the engine does not support.
    pub unsupported: Vec<Workload>,
    /// Latency per workload and kind of operation (`"get"`, `"put"`), for
    /// the workloads timed per operation.
    #[serde(default)]
    pub latency: BTreeMap<Workload, BTreeMap<String, Latency>>,
}

/// One repetition of one engine on one scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sample {
    /// The data set.
    pub scenario: Scenario,
    /// The engine.
    pub engine: EngineKind,
    /// Repetition number, from 1.
    pub rep: usize,
    /// What the child measured.
    pub output: ChildOutput,
    /// Wall time of the child process, seconds.
    pub wall_seconds: f64,
}

/// A child that failed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    /// The data set.
    pub scenario: Scenario,
    /// The engine.
    pub engine: EngineKind,
    /// Repetition number, from 1.
    pub rep: usize,
    /// Why.
    pub error: String,
}

/// Median and range of one figure over repetitions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The median (mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// Number of repetitions.
    pub reps: usize,
}

impl Summary {
    /// Summarizes `values` (None if empty).
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => return None,
            _ if !n.is_multiple_of(2) => v[n / 2],
            _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        Some(Summary {
            median,
            min: v[0],
            max: v[n - 1],
            reps: n,
        })
    }
}

/// One summarized figure with its ratio against the AlexDB baseline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The data set.
    pub scenario: Scenario,
    /// The engine.
    pub engine: EngineKind,
    /// The workload.
    pub workload: Workload,
    /// Median and spread.
    pub summary: Summary,
    /// This engine's median ÷ the baseline's (above 1: AlexDB is better).
    pub ratio_vs_baseline: Option<f64>,
}

/// The latency of one kind of operation in one workload: the median over
/// repetitions of each percentile.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatencyRow {
    /// The data set.
    pub scenario: Scenario,
    /// The engine.
    pub engine: EngineKind,
    /// The workload.
    pub workload: Workload,
    /// The kind of operation (`"get"`, `"put"`, `"transaction"`).
    pub operation: String,
    /// Medians over repetitions of each percentile.
    pub median: Latency,
}

/// Summarizes the latencies of `samples`.
pub fn summarize_latency(samples: &[Sample]) -> Vec<LatencyRow> {
    type Key = (Scenario, EngineKind, Workload, String);
    let mut groups: BTreeMap<Key, Vec<Latency>> = BTreeMap::new();
    for s in samples {
        for (w, ops) in &s.output.latency {
            for (op, l) in ops {
                groups
                    .entry((s.scenario, s.engine, *w, op.clone()))
                    .or_default()
                    .push(*l);
            }
        }
    }
    groups
        .into_iter()
        .filter_map(|((scenario, engine, workload, operation), ls)| {
            let median = |f: fn(&Latency) -> f64| {
                Summary::of(&ls.iter().map(f).collect::<Vec<_>>()).map(|s| s.median)
            };
            Some(LatencyRow {
                scenario,
                engine,
                workload,
                operation,
                median: Latency {
                    p50: median(|l| l.p50)?,
                    p99: median(|l| l.p99)?,
                    p999: median(|l| l.p999)?,
                    max: median(|l| l.max)?,
                },
            })
        })
        .collect()
}

/// Settings of a run, recorded with its figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    /// Repetitions per engine and scenario.
    pub reps: usize,
    /// Operations per point workload (before capping at the key count).
    pub ops: usize,
    /// Engines run.
    pub engines: Vec<EngineKind>,
    /// Workloads asked for.
    pub workloads: Vec<Workload>,
    /// Scenarios run.
    pub scenarios: Vec<Scenario>,
    /// The engine ratios are taken against.
    pub baseline: EngineKind,
    /// How the engines were warmed up.
    pub warm_up: String,
    /// Whether this was a `--quick` run.
    pub quick: bool,
}

/// Everything a run produced: written as results.json.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResults {
    /// When the run started (UTC).
    pub started_utc: String,
    /// Wall time of the whole run, seconds.
    pub wall_seconds: f64,
    /// The machine.
    pub machine: Machine,
    /// The settings.
    pub settings: Settings,
    /// Every repetition's figures.
    pub samples: Vec<Sample>,
    /// Children that failed.
    pub failures: Vec<Failure>,
    /// Summaries with ratios.
    pub rows: Vec<Row>,
    /// Latency summaries.
    #[serde(default)]
    pub latency: Vec<LatencyRow>,
}

impl RunResults {
    /// The summary row of `engine` × `workload` in `scenario`.
    pub fn row(&self, scenario: &Scenario, engine: EngineKind, workload: Workload) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.scenario == *scenario && r.engine == engine && r.workload == workload)
    }
}

/// Summarizes samples into rows, with ratios against `baseline`.
pub fn summarize(samples: &[Sample], baseline: EngineKind) -> Vec<Row> {
    let mut groups: BTreeMap<(Scenario, EngineKind, Workload), Vec<f64>> = BTreeMap::new();
    for s in samples {
        for (w, v) in &s.output.figures {
            groups
                .entry((s.scenario, s.engine, *w))
                .or_default()
                .push(*v);
        }
    }
    let summaries: BTreeMap<_, _> = groups
        .into_iter()
        .filter_map(|(k, v)| Summary::of(&v).map(|s| (k, s)))
        .collect();
    summaries
        .iter()
        .map(|(&(scenario, engine, workload), summary)| {
            let base = summaries.get(&(scenario, baseline, workload));
            Row {
                scenario,
                engine,
                workload,
                summary: *summary,
                ratio_vs_baseline: base
                    .filter(|b| b.median > 0.0)
                    .map(|b| summary.median / b.median),
            }
        })
        .collect()
}

/// `1234567` as "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.reps), (2.0, 1.0, 3.0, 3));
        assert_eq!(Summary::of(&[1.0, 2.0]).unwrap().median, 1.5);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(20_000), "20,000");
    }
}
