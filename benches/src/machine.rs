//! The machine a run was measured on: CPU, cores, memory, disk, kernel,
//! load, and the date.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::cpu_stalls::CpuStalls;

/// A description of the machine, recorded with every run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Machine {
    /// CPU model name from /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs available to the process.
    pub cores: usize,
    /// Total memory in GiB (MemTotal).
    pub ram_gib: f64,
    /// The file system holding the engines' data (`df`).
    pub disk: String,
    /// Kernel (`uname -srm`).
    pub kernel: String,
    /// 1/5/15-minute load averages when the run started.
    pub load_at_start: String,
    /// 1/5/15-minute load averages when the run ended.
    pub load_at_end: String,
    /// How long the machine kept a running thread from running (measured
    /// by the runner before its first child; absent in older results).
    #[serde(default)]
    pub cpu_stalls: Option<CpuStalls>,
    /// The allocator of the runner's Rust code (absent in older results).
    #[serde(default)]
    pub allocator: String,
}

/// The allocator the runner was built with (see the `mimalloc` feature).
const ALLOCATOR: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "the system allocator"
};

impl Machine {
    /// Describes this machine; `data_dir` is where the engines write.
    pub fn detect(data_dir: &Path) -> Machine {
        Machine {
            cpu: cpu_model(),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            ram_gib: ram_gib(),
            disk: disk(data_dir),
            kernel: command_line("uname", &["-srm"]),
            load_at_start: load_average(),
            load_at_end: String::new(),
            cpu_stalls: None,
            allocator: ALLOCATOR.into(),
        }
    }

    /// One line for reports.
    pub fn summary(&self) -> String {
        let stalls = self
            .cpu_stalls
            .map(|s| format!("; {}", s.summary()))
            .unwrap_or_default();
        format!(
            "{}, {} logical CPUs, {:.1} GiB RAM, disk: {}, kernel {}, load average {} at start / {} at end{stalls}; Rust allocator: {}",
            self.cpu,
            self.cores,
            self.ram_gib,
            self.disk,
            self.kernel,
            self.load_at_start,
            self.load_at_end,
            self.allocator
        )
    }
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn ram_gib() -> f64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / (1024.0 * 1024.0))
}

/// The `df` line of `dir`: device, type, size, available.
fn disk(dir: &Path) -> String {
    let dir = dir.to_string_lossy();
    let out = command_line("df", &["-h", "--output=source,fstype,size,avail", &dir]);
    let fields: Vec<&str> = out
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    match fields.as_slice() {
        [source, fstype, size, avail] => format!("{source} ({fstype}, {size}, {avail} free)"),
        _ => "unknown".into(),
    }
}

/// The current 1/5/15-minute load averages.
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The current time in UTC as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_147), (2025, 2, 28));
    }

    #[test]
    fn detects_something() {
        let m = Machine::detect(Path::new("."));
        assert!(m.cores >= 1);
        assert!(m.ram_gib > 0.0);
    }
}
