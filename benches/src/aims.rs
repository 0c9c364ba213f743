//! The performance aims (get, mixed, seek, load, reopen, merges, latency and
//! memory against the peers), judged on the run's own figures (same-run ratios),
//! for each AlexDB column.

use std::fmt::Write as _;

use crate::engines::EngineKind;
use crate::report::{alexdb_columns, value};
use crate::results::{RunResults, Scenario};
use crate::workloads::{Unit, Workload};

/// Which figure of a row an aim reads.
#[derive(Clone, Copy)]
enum Stat {
    /// The median figure.
    Median,
    /// The median over repetitions of the longest operation of this kind.
    Longest(&'static str),
}

/// One side of an aim: a figure of an engine (`None`: the AlexDB column).
#[derive(Clone, Copy)]
struct Figure {
    engine: Option<EngineKind>,
    workload: Workload,
    stat: Stat,
}

/// "AlexDB's `left` ≤ `factor` × `right`" (or ≤ `factor` with no `right`).
struct Aim {
    what: &'static str,
    left: Figure,
    right: Option<Figure>,
    factor: f64,
}

const fn alex(workload: Workload) -> Figure {
    Figure {
        engine: None,
        workload,
        stat: Stat::Median,
    }
}

const fn of(engine: EngineKind, workload: Workload) -> Figure {
    Figure {
        engine: Some(engine),
        workload,
        stat: Stat::Median,
    }
}

const AIMS: [Aim; 19] = [
    aim(
        "disk ≤ 1.5x live after delete-heavy + compaction",
        alex(Workload::DeleteHeavyDisk),
        None,
        1.5,
    ),
    aim(
        "reopen ≤ 2x rocksdb-default's",
        alex(Workload::Reopen),
        Some(of(EngineKind::RocksdbDefault, Workload::Reopen)),
        2.0,
    ),
    aim("reopen < 1 s", alex(Workload::Reopen), None, 1_000.0),
    aim(
        "range delete of 10,000 keys ≤ 2x one of 10 (cost independent of size)",
        alex(Workload::DeleteRange),
        Some(alex(Workload::DeleteRange10)),
        2.0,
    ),
    aim(
        "writers-4 ≥ 1.5x the throughput of writers-1",
        alex(Workload::Writers4),
        Some(alex(Workload::Writers1)),
        1.0 / 1.5,
    ),
    aim(
        "writers-4 at least rocksdb-default's throughput",
        alex(Workload::Writers4),
        Some(of(EngineKind::RocksdbDefault, Workload::Writers4)),
        1.0,
    ),
    aim(
        "scan after compaction at least as fast as rocksdb-tuned's",
        alex(Workload::ScanCompacted),
        Some(of(EngineKind::RocksdbTuned, Workload::ScanCompacted)),
        1.0,
    ),
    aim(
        "longest put in hot-range < 10 ms",
        Figure {
            engine: None,
            workload: Workload::HotRange,
            stat: Stat::Longest("put"),
        },
        None,
        10e6,
    ),
    aim(
        "optimistic-txn at least as fast as rocksdb-default's",
        alex(Workload::OptimisticTxn),
        Some(of(EngineKind::RocksdbDefault, Workload::OptimisticTxn)),
        1.0,
    ),
    aim(
        "merge-append ≤ 2x rocksdb-default's per merge",
        alex(Workload::MergeAppend),
        Some(of(EngineKind::RocksdbDefault, Workload::MergeAppend)),
        2.0,
    ),
    aim(
        "merge-append disk after compaction ≤ 1.2x rocksdb-default's",
        alex(Workload::MergeAppendDisk),
        Some(of(EngineKind::RocksdbDefault, Workload::MergeAppendDisk)),
        1.2,
    ),
    aim(
        "get ≥ 10x faster than rocksdb-default",
        alex(Workload::Get),
        Some(of(EngineKind::RocksdbDefault, Workload::Get)),
        0.1,
    ),
    aim(
        "get ≥ 1.5x faster than lmdb",
        alex(Workload::Get),
        Some(of(EngineKind::Lmdb, Workload::Get)),
        1.0 / 1.5,
    ),
    aim(
        "zero-copy get ≤ 1.3x the floor's",
        alex(Workload::GetPinned),
        Some(of(EngineKind::Floor, Workload::GetPinned)),
        1.3,
    ),
    aim(
        "mixed 80/20 ≥ 10x faster than rocksdb-default",
        alex(Workload::Mixed),
        Some(of(EngineKind::RocksdbDefault, Workload::Mixed)),
        0.1,
    ),
    aim(
        "seek + 10 at least lmdb's speed",
        alex(Workload::Seek10),
        Some(of(EngineKind::Lmdb, Workload::Seek10)),
        1.0,
    ),
    aim(
        "get with a writer running ≤ 1.3x idle get",
        alex(Workload::GetW),
        Some(alex(Workload::Get)),
        1.3,
    ),
    aim(
        "compaction with a filter removing half ≤ 1.5x one without",
        alex(Workload::FilterCompact),
        Some(alex(Workload::CompactPlain)),
        1.5,
    ),
    aim(
        "get with 2 readers: ≥ 1.8x the throughput of one",
        alex(Workload::Get2r),
        Some(alex(Workload::Get)),
        1.0 / 1.8,
    ),
];

const fn aim(what: &'static str, left: Figure, right: Option<Figure>, factor: f64) -> Aim {
    Aim {
        what,
        left,
        right,
        factor,
    }
}

/// Writes the table of aims for `scenario` (nothing if no AlexDB column ran).
pub fn table(s: &mut String, r: &RunResults, scenario: &Scenario) {
    let alexes = alexdb_columns(r);
    if alexes.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Aims ({})\n", scenario.label());
    let _ = write!(s, "| aim |");
    for a in &alexes {
        let _ = write!(s, " {} |", a.name());
    }
    let _ = writeln!(s, "\n|---|{}", "---|".repeat(alexes.len()));
    for aim in &AIMS {
        let _ = write!(s, "| {} |", aim.what);
        for &a in &alexes {
            let _ = write!(s, " {} |", verdict(r, scenario, a, aim));
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "\nEach aim compares figures of this run only; `n/a`: a figure is missing (not run, \
         not supported, or failed).\n"
    );
    if let Some(stalls) = r.machine.cpu_stalls {
        let _ = writeln!(
            s,
            "A longest-put aim cannot be met below the machine's own stalls: a spinning thread \
             lost up to {:.2} ms at a time with every core busy ({:.2} ms alone), and an \
             engine's background work keeps a second core busy.\n",
            stalls.all_busy_ms, stalls.alone_ms
        );
    }
}

fn verdict(r: &RunResults, scenario: &Scenario, alex: EngineKind, aim: &Aim) -> String {
    let Some(left) = figure(r, scenario, alex, aim.left) else {
        return "n/a".into();
    };
    let left_unit = unit(aim.left);
    let (bound, shown) = match aim.right {
        Some(right) => match figure(r, scenario, alex, right) {
            Some(v) => (
                v * aim.factor,
                format!("{} vs {}", value(left, left_unit), value(v, unit(right))),
            ),
            None => return "n/a".into(),
        },
        None => (aim.factor, value(left, left_unit)),
    };
    let met = if left <= bound { "met" } else { "missed" };
    format!("{met} ({shown})")
}

fn unit(f: Figure) -> Unit {
    match f.stat {
        Stat::Median => f.workload.unit(),
        Stat::Longest(_) => Unit::NanosPerOp,
    }
}

fn figure(r: &RunResults, scenario: &Scenario, alex: EngineKind, f: Figure) -> Option<f64> {
    let engine = f.engine.unwrap_or(alex);
    match f.stat {
        Stat::Median => r
            .row(scenario, engine, f.workload)
            .map(|row| row.summary.median),
        Stat::Longest(op) => r
            .latency
            .iter()
            .find(|l| {
                l.scenario == *scenario
                    && l.engine == engine
                    && l.workload == f.workload
                    && l.operation == op
            })
            .map(|l| l.median.max),
    }
}
