//! The command line.

use std::path::PathBuf;

use clap::Parser;

use crate::engines::EngineKind;
use crate::keys::{Keyset, ValueKind};
use crate::ltm::Phase;
use crate::workloads::Workload;

/// Compares AlexDB with RocksDB, SQLite and LMDB side by side: each engine
/// in its own process, on the same generated data, in the same durability
/// class (no fsync per write; acknowledged writes survive a process crash).
#[derive(Parser, Debug, Clone)]
#[command(name = "alexdb-bench", version)]
pub struct Cli {
    /// Scales to run: numbers of keys, comma-separated (10000000 on request).
    #[arg(long, value_delimiter = ',', default_values_t = [100_000usize, 1_000_000])]
    pub keys: Vec<usize>,

    /// Value sizes in bytes, comma-separated (e.g. 64,256,1024).
    #[arg(long = "value-size", value_delimiter = ',', default_values_t = [100usize])]
    pub value_sizes: Vec<usize>,

    /// What the values hold: `random` bytes (incompressible) or JSON-like
    /// `text` (compressible; `disk-bytes` then shows what compression
    /// saves).
    #[arg(long, value_enum, default_value = "random")]
    pub values: ValueKind,

    /// Key sets, comma-separated (`skewed` on request: long shared prefixes
    /// and trailing zero bytes). Zipfian access runs on every key set as
    /// the `get-zipf` workload.
    #[arg(long, value_enum, value_delimiter = ',', default_values = ["uniform", "sequential", "strings"])]
    pub keysets: Vec<Keyset>,

    /// Engines, comma-separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub engines: Vec<EngineKind>,

    /// Workloads, comma-separated (default: all; `load` always runs).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub workloads: Vec<Workload>,

    /// Repetitions of every run (each in a fresh process and directory).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,

    /// Operations per point workload (at most the number of keys); seek
    /// workloads run a quarter as many.
    #[arg(long, default_value_t = 200_000)]
    pub ops: usize,

    /// Small and fast: 20K keys, 1 repetition, 5K operations, every engine
    /// and workload once (what `make test` runs so the runner cannot rot).
    #[arg(long)]
    pub quick: bool,

    /// After the run, fail unless the report names every engine and
    /// workload that was asked for and no run failed.
    #[arg(long)]
    pub check: bool,

    /// Where to write report.md, results.json and latency.svg.
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,

    /// Where the engines' temporary directories go (default: the system's
    /// temporary directory; use a disk, not a tmpfs).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,

    /// Render report.md and latency.svg (into `--out`) from an earlier
    /// run's results.json instead of running anything.
    #[arg(long, value_name = "RESULTS_JSON")]
    pub render: Option<PathBuf>,

    /// Larger than memory: per engine and repetition, one process loads the
    /// store and closes it; the page cache is dropped; a second process,
    /// in a memory cgroup limited to a quarter of the store's disk, opens
    /// it and runs `ltm-get-cold`, `ltm-get`, `ltm-seek10` and `ltm-scan`.
    /// Needs root and a cgroup memory controller (v1 or v2), else it is
    /// skipped with the reason. Alone it runs only this mode; add
    /// `--workloads` to run those as well.
    #[arg(long)]
    pub larger_than_memory: bool,

    /// Internal: run one engine on one scenario and print JSON.
    #[arg(long, hide = true)]
    pub child: bool,

    /// Internal (child): the engine to run.
    #[arg(long, value_enum, hide = true)]
    pub engine: Option<EngineKind>,

    /// Internal (child): the key set.
    #[arg(long, value_enum, hide = true)]
    pub keyset: Option<Keyset>,

    /// Internal (child): the larger-than-memory step to run.
    #[arg(long, value_enum, hide = true, requires = "ltm_dir")]
    pub ltm_phase: Option<Phase>,

    /// Internal (child): the store of the larger-than-memory mode.
    #[arg(long, hide = true)]
    pub ltm_dir: Option<PathBuf>,
}

impl Cli {
    /// Applies `--quick` and fills the defaults that depend on others.
    pub fn resolved(mut self) -> Self {
        if self.quick {
            self.keys = vec![20_000];
            self.reps = 1;
            self.ops = 5_000;
        }
        if self.engines.is_empty() {
            self.engines = EngineKind::ALL.to_vec();
        }
        if self.workloads.is_empty() && !self.larger_than_memory {
            self.workloads = Workload::ALL.to_vec();
        }
        let asked = self.workloads.clone();
        self.workloads = Workload::ALL
            .into_iter()
            .filter(|w| !w.is_larger_than_memory())
            .filter(|w| asked.contains(w) || asked.contains(&w.produced_by()))
            .collect();
        if self.larger_than_memory {
            self.workloads.extend(Workload::LARGER_THAN_MEMORY);
        }
        self
    }

    /// Drops the larger-than-memory mode (when this machine cannot run it).
    pub fn without_larger_than_memory(mut self) -> Self {
        self.larger_than_memory = false;
        self.workloads.retain(|w| !w.is_larger_than_memory());
        self
    }
}
