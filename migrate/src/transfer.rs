//! The resumable transfer shared by `copy` and `export`: check the target,
//! copy each family in atomic batches that carry their progress marker,
//! verify, and clean up.

use std::time::Instant;

use serde::Serialize;

use crate::error::{MigrateError, Result};
use crate::keymap::KeyMap;
use crate::marker::{Plan, Position, State};
use crate::pipeline::{self, Reader};
use crate::progress::Observer;
use crate::sink::{self, Sink};
use crate::source::{MARKER_FAMILY, Source};
use crate::verify::{self, DbInfo, Side, VerifyReport};

/// Default number of keys per committed batch.
pub const DEFAULT_BATCH_KEYS: usize = 10_000;
/// Default bytes (keys and values) per committed batch.
pub const DEFAULT_BATCH_BYTES: usize = 4 << 20;

/// How a transfer runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Continue an interrupted migration, or accept a target that already
    /// holds a verified copy.
    pub resume: bool,
    /// Keys per batch.
    pub batch_keys: usize,
    /// Bytes per batch; a batch also ends after a larger value.
    pub batch_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            resume: false,
            batch_keys: DEFAULT_BATCH_KEYS,
            batch_bytes: DEFAULT_BATCH_BYTES,
        }
    }
}

/// What one family's transfer did in this run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FamilyCopy {
    /// The family.
    pub name: String,
    /// Keys written in this run.
    pub keys: u64,
    /// Key and value bytes written in this run.
    pub bytes: u64,
    /// Whether this run continued from a recorded position.
    pub resumed: bool,
}

/// The report of a `copy` or `export`.
#[derive(Clone, Debug, Serialize)]
pub struct TransferReport {
    /// `"copy"` or `"export"`.
    pub operation: String,
    /// The source.
    pub source: DbInfo,
    /// The target.
    pub target: DbInfo,
    /// Whether an interrupted migration was continued.
    pub resumed: bool,
    /// Whether the target already held a verified copy, so nothing was written.
    pub already_complete: bool,
    /// Family by family.
    pub families: Vec<FamilyCopy>,
    /// Keys written in this run.
    pub keys: u64,
    /// Key and value bytes written in this run.
    pub bytes: u64,
    /// Seconds spent copying.
    pub copy_seconds: f64,
    /// Keys per second while copying.
    pub keys_per_second: f64,
    /// Bytes per second while copying.
    pub bytes_per_second: f64,
    /// Seconds spent verifying.
    pub verify_seconds: f64,
    /// The final verification.
    pub verification: VerifyReport,
}

/// Moves `plan.families` from `source` to `sink`, resumably, then verifies.
pub fn transfer(
    source: &dyn Source,
    sink: &mut dyn Sink,
    plan: Plan,
    settings: &Settings,
    observer: &mut dyn Observer,
) -> Result<TransferReport> {
    check_source(source)?;
    let keymap = keymap_of(&plan);
    let state = match prepare_target(source, sink, &plan, settings)? {
        Prepared::Complete(report) => return Ok(finish_report(source, sink, plan, report, true)),
        Prepared::Fresh => None,
        Prepared::Resume(state) => Some(state),
    };
    let resumed = state.is_some();
    let estimate = plan.families.iter().map(|f| source.estimate_keys(f)).sum();
    observer.started(estimate);
    let started = Instant::now();
    let mut families = Vec::new();
    for family in &plan.families {
        let position = state
            .as_ref()
            .map_or(Position::Start, |s| s.position(family));
        families.push(copy_family(
            source, sink, family, position, keymap, settings, observer,
        )?);
    }
    let copy_seconds = started.elapsed().as_secs_f64();
    let verified = Instant::now();
    let verification = verify_copy(source, sink, &plan, observer)?.into_error()?;
    let verify_seconds = verified.elapsed().as_secs_f64();
    sink.finish()?;
    observer.finished();
    let mut report = finish_report(source, sink, plan, verification, false);
    report.resumed = resumed;
    report.keys = families.iter().map(|f| f.keys).sum();
    report.bytes = families.iter().map(|f| f.bytes).sum();
    report.families = families;
    report.copy_seconds = copy_seconds;
    report.verify_seconds = verify_seconds;
    let secs = copy_seconds.max(1e-9);
    report.keys_per_second = report.keys as f64 / secs;
    report.bytes_per_second = report.bytes as f64 / secs;
    Ok(report)
}

/// The key mapping a plan asks for.
fn keymap_of(plan: &Plan) -> KeyMap {
    if plan.i64_keys {
        KeyMap::I64SignFlip
    } else {
        KeyMap::Identity
    }
}

/// Refuses a source that is itself the target of an unfinished migration.
fn check_source(source: &dyn Source) -> Result<()> {
    if source.has_marker_family() {
        return Err(MigrateError::NotADatabase {
            path: source.path().to_path_buf(),
            expected: "a complete database",
            reason: format!(
                "it holds an unfinished migration (family {MARKER_FAMILY:?}); finish that \
                 migration with --resume before reading from it"
            ),
        });
    }
    Ok(())
}

enum Prepared {
    Fresh,
    Resume(State),
    Complete(VerifyReport),
}

/// Decides what to do with the target: start, resume, or accept it as a
/// finished copy. Refuses a non-empty target without `--resume`.
fn prepare_target(
    source: &dyn Source,
    sink: &mut dyn Sink,
    plan: &Plan,
    settings: &Settings,
) -> Result<Prepared> {
    let path = sink.source().path().to_path_buf();
    if let Some(state) = sink.load_state()? {
        if !settings.resume {
            return Err(MigrateError::TargetNotEmpty {
                path,
                detail: "it holds an interrupted migration".into(),
                hint: "run the same command with --resume to finish it",
            });
        }
        check_same_plan(&path, &state.plan, plan)?;
        return Ok(Prepared::Resume(state));
    }
    let busy = sink::non_empty_families(sink.source())?;
    if busy.is_empty() {
        sink.begin(plan)?;
        return Ok(Prepared::Fresh);
    }
    if !settings.resume {
        return Err(MigrateError::TargetNotEmpty {
            path,
            detail: format!("column families {busy:?} hold keys"),
            hint: "choose an empty target, or pass --resume if it holds a finished copy",
        });
    }
    let report = verify_copy(source, &*sink, plan, &mut crate::progress::Silent)?;
    match report.first_difference() {
        None => Ok(Prepared::Complete(report)),
        Some((family, d)) => Err(MigrateError::TargetNotEmpty {
            path,
            detail: format!(
                "it holds no migration progress and differs from the source in {family:?} at \
                 key {}: {}",
                d.key_hex, d.reason
            ),
            hint: "choose an empty target",
        }),
    }
}

fn check_same_plan(path: &std::path::Path, recorded: &Plan, asked: &Plan) -> Result<()> {
    if recorded == asked {
        return Ok(());
    }
    Err(MigrateError::ResumeMismatch {
        path: path.to_path_buf(),
        reason: format!(
            "it was started as {} of {:?} (i64 keys: {}), but this run asks for {} of {:?} \
             (i64 keys: {})",
            recorded.operation,
            recorded.families,
            recorded.i64_keys,
            asked.operation,
            asked.families,
            asked.i64_keys
        ),
    })
}

/// Copies one family from `position` on, one atomic batch at a time.
fn copy_family(
    source: &dyn Source,
    sink: &mut dyn Sink,
    family: &str,
    position: Position,
    keymap: KeyMap,
    settings: &Settings,
    observer: &mut dyn Observer,
) -> Result<FamilyCopy> {
    let mut done = FamilyCopy {
        name: family.to_string(),
        resumed: position != Position::Start,
        ..FamilyCopy::default()
    };
    let resume_after = match &position {
        Position::Done => return Ok(done),
        Position::Start => None,
        Position::After(key) => Some(key.as_slice()),
    };
    observer.family_started(family);
    sink.open_family(family)?;
    let reader = Reader {
        source,
        family,
        keymap,
        resume_after,
        batch_keys: settings.batch_keys,
        batch_bytes: settings.batch_bytes,
    };
    pipeline::for_each_batch(reader, |batch| {
        for (key, value) in batch.entries() {
            sink.put(key, value);
        }
        let position = match batch.last_key() {
            Some(key) if !batch.last => Position::After(key.to_vec()),
            _ => Position::Done,
        };
        sink.commit(&position)?;
        let (keys, bytes) = (batch.len() as u64, batch.bytes() as u64);
        done.keys += keys;
        done.bytes += bytes;
        observer.batch_committed(keys, bytes);
        Ok(())
    })?;
    Ok(done)
}

/// Verifies the planned families of the target against the source.
fn verify_copy(
    source: &dyn Source,
    sink: &dyn Sink,
    plan: &Plan,
    observer: &mut dyn Observer,
) -> Result<VerifyReport> {
    let a = Side {
        source,
        map: keymap_of(plan),
    };
    let b = Side {
        source: sink.source(),
        map: KeyMap::Identity,
    };
    verify::verify(a, b, &plan.families, observer)
}

fn finish_report(
    source: &dyn Source,
    sink: &dyn Sink,
    plan: Plan,
    verification: VerifyReport,
    already_complete: bool,
) -> TransferReport {
    TransferReport {
        operation: plan.operation,
        source: DbInfo::of(source),
        target: DbInfo::of(sink.source()),
        resumed: false,
        already_complete,
        families: Vec::new(),
        keys: 0,
        bytes: 0,
        copy_seconds: 0.0,
        keys_per_second: 0.0,
        bytes_per_second: 0.0,
        verify_seconds: 0.0,
        verification,
    }
}
