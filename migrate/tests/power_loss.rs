//! Simulated power loss at every I/O operation of a `copy`'s target. The
//! copy of a small RocksDB database (three families, small batches) runs on
//! `PowerLossFileSystem` until operation `k` fails as if the power went out,
//! for every `k`. For each, several crash images (every synced byte, an
//! arbitrary subset of the unsynced writes torn at sector boundaries,
//! unsynced directory changes kept or lost) must hold a resumable target:
//! every family holds exactly the source's keys up to the position its
//! progress record names (batches whole, nothing beyond it), and the same
//! command with `--resume` must finish with the source's exact content.
//!
//! The same run is also a fault at every I/O call of the target: after
//! operation `k` fails, the copy reports an error, and `--resume` on the
//! files as the page cache holds them finishes the copy.

mod common;

use std::path::Path;
use std::sync::Arc;

use alexdb_engine::io::power_loss::PowerLossFileSystem;
use alexdb_migrate::copy::{CopyConfig, copy};
use alexdb_migrate::marker::{self, Position};
use alexdb_migrate::progress::Silent;
use alexdb_migrate::source::MARKER_FAMILY;
use alexdb_migrate::transfer::Settings;
use common::{Model, Spec, assert_same, generate, read_alex};

/// Crash images written and resumed per crash point.
const IMAGES: u64 = 6;

fn config(from: &Path, to: &Path, fs: Option<&PowerLossFileSystem>, resume: bool) -> CopyConfig {
    CopyConfig {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        settings: Settings {
            resume,
            batch_keys: 40,
            ..Settings::default()
        },
        target_file_system: fs.map(|fs| Arc::new(fs.clone()) as _),
        ..CopyConfig::default()
    }
}

/// The source's entries of `family` a target at `position` must hold.
fn expected_at(source: &Model, family: &str, position: &Position) -> Model {
    let entries = source[family]
        .iter()
        .filter(|(k, _)| match position {
            Position::Start => false,
            Position::After(last) => k.as_slice() <= last.as_slice(),
            Position::Done => true,
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Model::from([(family.to_string(), entries)])
}

/// Checks that the target at `image` is a resumable prefix of `source`:
/// with a plan recorded, each family holds exactly the keys up to its
/// recorded position; without one, the copy is either not begun (no keys)
/// or finished (the whole source).
fn check_resumable(image: &Path, source: &Model, what: &str) {
    let mut got = match image.read_dir().map(|mut d| d.next().is_some()) {
        Ok(true) => read_alex(image),
        _ => Model::new(),
    };
    let records: Vec<_> = got
        .remove(MARKER_FAMILY)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let state = marker::decode(&records).unwrap_or_else(|e| panic!("{what}: marker: {e}"));
    let Some(state) = state else {
        let keys: usize = got.values().map(|f| f.len()).sum();
        if keys > 0 {
            assert_same(source, &got);
        }
        return;
    };
    for family in &state.plan.families {
        let want = expected_at(source, family, &state.position(family));
        let have = Model::from([(family.clone(), got.get(family).cloned().unwrap_or_default())]);
        assert!(
            want == have,
            "{what}: family {family} at {:?}: holds {} keys, the position names {}",
            state.position(family),
            have[family].len(),
            want[family].len()
        );
    }
}

/// Resumes the copy into `target` with the real file system and checks the
/// result is the source.
fn resume(from: &Path, target: &Path, source: &Model, what: &str) {
    let report = copy(&config(from, target, None, true), &mut Silent)
        .unwrap_or_else(|e| panic!("{what}: resume: {e}"));
    assert!(report.verification.identical, "{what}: not identical");
    assert_same(source, &read_alex(target));
}

#[test]
fn a_copy_cut_by_power_loss_at_every_io_resumes_to_the_source() {
    let base = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    let from = base.path().join("rocks");
    let source = generate(
        &from,
        &Spec {
            keys: 600,
            max_value: 300,
            huge_values: 0,
            seed: 7,
        },
    );
    let total = {
        let fs = PowerLossFileSystem::new();
        let full = base.path().join("full");
        let report = copy(&config(&from, &full, Some(&fs), false), &mut Silent).unwrap();
        assert!(report.verification.identical);
        fs.ops()
    };
    let mut recoveries = 0;
    for k in 0..total {
        let target = base.path().join(format!("run{k}"));
        let fs = PowerLossFileSystem::new();
        fs.crash_at(k);
        // Fails, or (for an I/O of the close that follows a finished,
        // synced copy) succeeds: the images below tell.
        let _ = copy(&config(&from, &target, Some(&fs), false), &mut Silent);
        for seed in 0..IMAGES {
            let image = base.path().join(format!("image{k}-{seed}"));
            std::fs::create_dir(&image).unwrap();
            fs.write_crash_image(&image, seed * 7919 + k).unwrap();
            let what = format!("crash at I/O {k}, image {seed}");
            check_resumable(&image, &source, &what);
            resume(&from, &image, &source, &what);
            std::fs::remove_dir_all(&image).unwrap();
            recoveries += 1;
        }
        if target.exists() {
            resume(&from, &target, &source, &format!("I/O {k} failed"));
            std::fs::remove_dir_all(&target).unwrap();
        }
    }
    eprintln!("{recoveries} resumed copies over {total} crash points");
    assert!(total >= 50, "the copy did only {total} I/O operations");
}
