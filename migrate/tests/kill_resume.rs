//! A `copy` (and an `export`) SIGKILLed at random moments, then resumed
//! with `--resume`, ends with exactly the source's content, verified.
//! `ALEXDB_MIGRATE_KILLS` sets the kills per test (12 by default; `make
//! soak` runs many more).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Rng, Spec, assert_same, cli, generate, read_alex, run_json, s};

/// Kills that must hit a running child, per test.
fn kills() -> usize {
    std::env::var("ALEXDB_MIGRATE_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12)
}

fn seed() -> u64 {
    std::env::var("ALEXDB_MIGRATE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

/// Runs `args` with `--resume` until killed after `delay`; returns whether
/// the child was still running when killed.
fn run_and_kill(args: &[&str], delay: Duration) -> bool {
    let mut child = cli()
        .args(args)
        .arg("--resume")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + delay;
    while Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let alive = child.try_wait().expect("wait").is_none();
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    alive
}

/// How long an uninterrupted run of `args` takes.
fn timed(args: &[&str]) -> Duration {
    let started = Instant::now();
    let (code, report) = run_json(args);
    assert_eq!(code, 0, "{report}");
    started.elapsed()
}

/// Kills `args` (which write `target`) at random moments until [`kills`]
/// kills have hit a running child. A run that completes is checked against
/// `reference` and the target is wiped, so every kill lands in real work.
/// Finishes with a last `--resume`.
fn kill_loop(args: &[&str], target: &Path, reference: &Path, full_run: Duration, rng: &mut Rng) {
    // Up to a whole run: kills land in open, recovery, copying and
    // verifying; a run that completes first starts over on a fresh target.
    let span = (full_run.as_micros() as u64).max(1);
    let kills = kills();
    let (mut hits, mut attempts, mut completed) = (0, 0, 0);
    while hits < kills {
        attempts += 1;
        assert!(attempts < 20 * kills, "too few kills hit a running child");
        let delay = Duration::from_micros(rng.below(span));
        let alive = run_and_kill(args, delay);
        hits += usize::from(alive);
        if is_complete(target) {
            let (code, report) = run_json(&["verify", s(reference), s(target)]);
            assert_eq!(code, 0, "a completed run differs: {report}");
            std::fs::remove_dir_all(target).expect("wipe the target");
            completed += 1;
        }
        eprintln!("killed after {delay:?}: running {alive}");
    }
    eprintln!("{hits} kills hit a running child in {attempts} runs; {completed} runs completed");
    let mut finish = args.to_vec();
    finish.push("--resume");
    let (code, report) = run_json(&finish);
    assert_eq!(code, 0, "resume failed: {report}");
    assert_eq!(report["verification"]["identical"], true);
}

/// Whether `target` holds a finished migration: a database with keys and
/// without progress markers.
fn is_complete(target: &Path) -> bool {
    if !target.exists() {
        return false;
    }
    let (code, report) = run_json(&["inspect", s(target)]);
    let families = report["families"].as_array().cloned().unwrap_or_default();
    code == 0
        && report["unfinished_migration"] == false
        && families.iter().any(|f| f["keys"].as_u64() > Some(0))
}

#[test]
fn copy_killed_at_random_points_resumes_to_the_same_result() {
    let seed = seed();
    eprintln!("seed {seed} (set ALEXDB_MIGRATE_SEED to replay)");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let expected = generate(
        &rocks,
        &Spec {
            keys: 150_000,
            max_value: 300,
            huge_values: 1,
            seed,
        },
    );
    let reference = dir.path().join("reference");
    let full = timed(&["copy", "--from", s(&rocks), "--to", s(&reference)]);
    eprintln!("an uninterrupted copy takes {full:?}");

    let alex = dir.path().join("alex");
    let args = [
        "copy",
        "--from",
        s(&rocks),
        "--to",
        s(&alex),
        "--batch-keys",
        "2000",
    ];
    kill_loop(&args, &alex, &reference, full, &mut rng);
    assert_same(&expected, &read_alex(&alex));
    let (code, report) = run_json(&["verify", s(&reference), s(&alex)]);
    assert_eq!(code, 0, "{report}");
}

#[cfg(feature = "librocksdb")]
#[test]
fn export_killed_at_random_points_resumes_to_the_same_result() {
    let seed = seed() ^ 0xe4;
    eprintln!("seed {seed}");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let expected = generate(
        &rocks,
        &Spec {
            keys: 90_000,
            max_value: 300,
            huge_values: 0,
            seed,
        },
    );
    let alex = dir.path().join("alex");
    timed(&["copy", "--from", s(&rocks), "--to", s(&alex)]);
    let reference = dir.path().join("reference");
    let full = timed(&["export", "--from", s(&alex), "--to", s(&reference)]);
    let back = dir.path().join("back");
    let args = [
        "export",
        "--from",
        s(&alex),
        "--to",
        s(&back),
        "--batch-keys",
        "2000",
    ];
    kill_loop(&args, &back, &reference, full, &mut rng);
    assert_same(&expected, &common::read_rocks(&back));
}
