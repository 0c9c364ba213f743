//! Every error a migration can meet gets a clear message, a stable JSON kind and
//! exit status 2, and leaves the source (and a resumable target) intact.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use alexdb_engine::io::faulty::FaultyFileSystem;
use alexdb_migrate::copy::{CopyConfig, copy};
use alexdb_migrate::progress::{Observer, Silent};
use alexdb_migrate::transfer::Settings;
use common::{Spec, assert_same, generate, read_alex, run_json, s};
use serde_json::Value;

fn small(path: &Path) -> common::Model {
    generate(
        path,
        &Spec {
            keys: 6_000,
            max_value: 100,
            huge_values: 0,
            seed: 42,
        },
    )
}

/// Asserts `args` fails with exit status 2 and error `kind`; returns the message.
fn fails(args: &[&str], kind: &str) -> String {
    let (code, report) = run_json(args);
    assert_eq!(code, 2, "{args:?}: {report}");
    assert_eq!(report["error"]["kind"], kind, "{args:?}: {report}");
    report["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_path_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let msg = fails(
        &[
            "copy",
            "--from",
            s(&missing),
            "--to",
            s(&dir.path().join("t")),
        ],
        "not_a_database",
    );
    assert!(msg.contains("does not exist"), "{msg}");

    let file = dir.path().join("file");
    std::fs::write(&file, b"hello").unwrap();
    let msg = fails(&["inspect", s(&file)], "not_a_database");
    assert!(msg.contains("not a directory"), "{msg}");

    let junk = dir.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("notes.txt"), b"hello").unwrap();
    let msg = fails(&["verify", s(&junk), s(&junk)], "not_a_database");
    assert!(msg.contains("notes.txt"), "{msg}");
    // Not a RocksDB target either, and left as it was.
    let rocks = dir.path().join("rocks");
    small(&rocks);
    fails(
        &["copy", "--from", s(&rocks), "--to", s(&junk)],
        "not_a_database",
    );
    assert_eq!(std::fs::read_dir(&junk).unwrap().count(), 1);

    let alex = dir.path().join("alex");
    let (code, _) = run_json(&["copy", "--from", s(&rocks), "--to", s(&alex)]);
    assert_eq!(code, 0);
    let msg = fails(
        &["copy", "--from", s(&alex), "--to", s(&dir.path().join("x"))],
        "not_a_database",
    );
    assert!(msg.contains("export"), "{msg}");
    if cfg!(feature = "librocksdb") {
        let msg = fails(
            &[
                "export",
                "--from",
                s(&rocks),
                "--to",
                s(&dir.path().join("y")),
            ],
            "not_a_database",
        );
        assert!(msg.contains("copy"), "{msg}");
    }
}

#[cfg(not(feature = "librocksdb"))]
#[test]
fn export_without_librocksdb_says_how_to_get_it() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("alex"), dir.path().join("rocks"));
    let msg = fails(
        &["export", "--from", s(&from), "--to", s(&to)],
        "not_built_in",
    );
    assert!(msg.contains("--features librocksdb"), "{msg}");
    assert!(!to.exists());
}

#[test]
fn missing_column_families() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    small(&rocks);
    let target = dir.path().join("alex");
    let args = [
        "copy",
        "--from",
        s(&rocks),
        "--to",
        s(&target),
        "--cf",
        "users",
        "--cf",
        "nope",
    ];
    let msg = fails(&args, "missing_column_families");
    assert!(
        msg.contains("\"nope\"") && msg.contains("\"events\""),
        "{msg}"
    );
    assert!(!target.exists(), "a refused copy created its target");

    let (code, report) = run_json(&[
        "copy",
        "--from",
        s(&rocks),
        "--to",
        s(&target),
        "--cf",
        "users",
    ]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["families"].as_array().unwrap().len(), 1);
}

#[test]
fn a_source_held_by_a_live_process() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    small(&rocks);
    let target = dir.path().join("alex");
    {
        let _writer = common::open_rocks(&rocks);
        let msg = fails(&["copy", "--from", s(&rocks), "--to", s(&target)], "in_use");
        let pid = format!("pid {}", std::process::id());
        assert!(
            msg.contains("another process") && msg.contains(&pid),
            "{msg}"
        );
        assert!(!target.exists());
    }
    let (code, _) = run_json(&["copy", "--from", s(&rocks), "--to", s(&target)]);
    assert_eq!(code, 0);
    {
        let _held = alexdb_engine::Db::open(&target, alexdb_engine::Options::default()).unwrap();
        let out = dir.path().join("back");
        if cfg!(feature = "librocksdb") {
            fails(&["export", "--from", s(&target), "--to", s(&out)], "in_use");
        }
    }
}

#[test]
fn a_non_empty_target_needs_resume() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let expected = small(&rocks);
    let foreign = dir.path().join("foreign");
    {
        let db = alexdb_engine::Db::open(&foreign, alexdb_engine::Options::default()).unwrap();
        let ks = db.keyspace("default").unwrap();
        db.put(ks, b"mine", b"keep me", &Default::default())
            .unwrap();
    }
    let msg = fails(
        &["copy", "--from", s(&rocks), "--to", s(&foreign)],
        "target_not_empty",
    );
    assert!(msg.contains("default"), "{msg}");
    let msg = fails(
        &["copy", "--from", s(&rocks), "--to", s(&foreign), "--resume"],
        "target_not_empty",
    );
    assert!(msg.contains("differs"), "{msg}");
    let db = alexdb_engine::Db::open(&foreign, alexdb_engine::Options::default()).unwrap();
    assert_eq!(
        db.keyspace_names(),
        ["default"],
        "a refused copy changed the target"
    );
    drop(db);

    let alex = dir.path().join("alex");
    let args = ["copy", "--from", s(&rocks), "--to", s(&alex)];
    assert_eq!(run_json(&args).0, 0);
    fails(&args, "target_not_empty");
    let (code, report) = run_json(&[&args[..], &["--resume"]].concat());
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["already_complete"], true);
    assert_same(&expected, &read_alex(&alex));
}

/// Runs `args` as user `nobody` (root ignores permission bits).
fn run_as_nobody(args: &[&str]) -> Option<(i32, Value)> {
    let mut cmd = common::cli();
    cmd.args(args).arg("--json");
    // SAFETY: `geteuid` has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run the CLI as user nobody: {e}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    match serde_json::from_str(&text) {
        Ok(v) => Some((out.status.code().unwrap_or(-1), v)),
        Err(_) => {
            eprintln!(
                "skipped: the CLI could not run as user nobody: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            None
        }
    }
}

#[test]
fn permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let rocks = dir.path().join("rocks");
    small(&rocks);
    let readonly = dir.path().join("readonly");
    std::fs::create_dir(&readonly).unwrap();
    std::fs::set_permissions(&readonly, std::fs::Permissions::from_mode(0o555)).unwrap();
    let target = readonly.join("alex");
    let Some((code, report)) = run_as_nobody(&["copy", "--from", s(&rocks), "--to", s(&target)])
    else {
        return;
    };
    assert_eq!(code, 2, "{report}");
    assert_eq!(report["error"]["kind"], "permission_denied", "{report}");

    std::fs::set_permissions(&rocks, std::fs::Permissions::from_mode(0o000)).unwrap();
    let open = dir.path().join("alex");
    let result = run_as_nobody(&["copy", "--from", s(&rocks), "--to", s(&open)]);
    std::fs::set_permissions(&rocks, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, report) = result.expect("ran before");
    assert_eq!(code, 2, "{report}");
    assert_eq!(report["error"]["kind"], "permission_denied", "{report}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("permission denied")
    );
}

/// Switches the target's disk to "full" after `after` committed batches.
struct FillDisk {
    fs: FaultyFileSystem,
    after: u64,
    batches: u64,
}

impl Observer for FillDisk {
    fn batch_committed(&mut self, _keys: u64, _bytes: u64) {
        self.batches += 1;
        if self.batches == self.after {
            self.fs.faults.fail_writes.store(true, Ordering::SeqCst);
        }
    }
}

/// The CLI has no fault hook; the library's target file-system seam is
/// what the CLI calls, so the full disk is injected there.
#[test]
fn a_full_disk_leaves_the_target_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let expected = small(&rocks);
    let fs = FaultyFileSystem::new();
    let mut config = CopyConfig {
        from: rocks.clone(),
        to: dir.path().join("alex"),
        settings: Settings {
            batch_keys: 500,
            ..Settings::default()
        },
        target_file_system: Some(Arc::new(fs.clone())),
        ..CopyConfig::default()
    };
    let mut observer = FillDisk {
        fs,
        after: 3,
        batches: 0,
    };
    let err = copy(&config, &mut observer).expect_err("the disk filled up");
    assert_eq!(err.kind(), "disk_full", "{err}");
    assert!(err.to_string().contains("--resume"), "{err}");

    config.target_file_system = None;
    let fresh = copy(&config, &mut Silent).expect_err("not empty without --resume");
    assert_eq!(fresh.kind(), "target_not_empty");
    config.settings.resume = true;
    let report = copy(&config, &mut Silent).expect("resumed");
    assert!(report.resumed && report.verification.identical);
    let total: usize = expected.values().map(|f| f.len()).sum();
    assert_eq!(
        report.keys as usize,
        total - 3 * 500,
        "the resumed run redid committed batches"
    );
    assert_same(&expected, &read_alex(&config.to));
}
