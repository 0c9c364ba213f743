//! Printing results: a human summary, or JSON with `--json`. Reports go to
//! standard output; human-readable errors to standard error.

use indicatif::HumanBytes;
use serde::Serialize;

use crate::cli::{EXIT_DIFFERENT, EXIT_ERROR, EXIT_OK, exit_status};
use crate::error::{MigrateError, Result};
use crate::inspect::InspectReport;
use crate::transfer::TransferReport;
use crate::verify::{FamilyVerdict, VerifyReport};

/// Where and how results are printed.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    json: bool,
}

/// The JSON form of an error.
#[derive(Serialize)]
struct ErrorReport<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    kind: &'a str,
    message: String,
}

impl Output {
    /// JSON when `json`, else human text.
    pub fn new(json: bool) -> Self {
        Output { json }
    }

    /// Prints a `copy` or `export` result; returns the exit status.
    pub fn transfer(&self, result: Result<TransferReport>) -> i32 {
        let status = exit_status(&result);
        match result {
            Ok(report) if self.json => self.print_json(&report),
            Ok(report) => print_transfer(&report),
            Err(e) => self.error(&e),
        }
        status
    }

    /// Prints a `verify` result; returns the exit status.
    pub fn verify(&self, result: Result<VerifyReport>) -> i32 {
        match result {
            Ok(report) => {
                let status = if report.identical {
                    EXIT_OK
                } else {
                    EXIT_DIFFERENT
                };
                if self.json {
                    self.print_json(&report);
                } else {
                    print_verify(&report);
                }
                status
            }
            Err(e) => {
                self.error(&e);
                EXIT_ERROR
            }
        }
    }

    /// Prints an `inspect` result; returns the exit status.
    pub fn inspect(&self, result: Result<InspectReport>) -> i32 {
        let status = exit_status(&result);
        match result {
            Ok(report) if self.json => self.print_json(&report),
            Ok(report) => print_inspect(&report),
            Err(e) => self.error(&e),
        }
        status
    }

    /// Prints an error: JSON on standard output with `--json`, and always a
    /// sentence on standard error.
    pub fn error(&self, e: &MigrateError) {
        if self.json {
            self.print_json(&ErrorReport {
                error: ErrorBody {
                    kind: e.kind(),
                    message: e.to_string(),
                },
            });
        }
        eprintln!("error: {e}");
    }

    fn print_json<T: Serialize>(&self, value: &T) {
        match serde_json::to_string_pretty(value) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("error: cannot encode the report as JSON: {e}"),
        }
    }
}

fn print_transfer(r: &TransferReport) {
    println!(
        "{} {} ({}) -> {} ({})",
        r.operation, r.source.path, r.source.kind, r.target.path, r.target.kind
    );
    if r.already_complete {
        println!("the target already holds a verified copy: nothing to do");
    }
    for f in &r.families {
        let resumed = if f.resumed { " (resumed)" } else { "" };
        println!(
            "  {:<24} {:>12} keys {:>12}{resumed}",
            f.name,
            f.keys,
            HumanBytes(f.bytes).to_string()
        );
    }
    println!(
        "copied {} keys, {} in {:.2} s ({:.0} keys/s, {}/s); verified in {:.2} s",
        r.keys,
        HumanBytes(r.bytes),
        r.copy_seconds,
        r.keys_per_second,
        HumanBytes(r.bytes_per_second as u64),
        r.verify_seconds
    );
    print_verdicts(&r.verification.families);
}

fn print_verify(r: &VerifyReport) {
    println!("A: {} ({})", r.a.path, r.a.kind);
    println!("B: {} ({})", r.b.path, r.b.kind);
    print_verdicts(&r.families);
    match r.first_difference() {
        None => println!("identical"),
        Some((family, d)) => println!(
            "DIFFERENT: first difference in {family:?} at key {}: {}",
            d.key_hex, d.reason
        ),
    }
}

fn print_verdicts(families: &[FamilyVerdict]) {
    for f in families {
        let keys = |d: &Option<crate::checksum::Digest>| {
            d.as_ref().map_or("-".to_string(), |d| d.keys.to_string())
        };
        let checksum = f.a.as_ref().map_or("-", |d| d.checksum.as_str());
        let verdict = if f.difference.is_none() {
            "ok"
        } else {
            "DIFFERENT"
        };
        println!(
            "  verify {:<24} A {:>10} keys, B {:>10} keys, checksum {checksum}, {} point reads: {verdict}",
            f.name,
            keys(&f.a),
            keys(&f.b),
            f.sampled_reads
        );
    }
}

fn print_inspect(r: &InspectReport) {
    println!(
        "{}: {} database, {} on disk",
        r.path,
        r.kind,
        HumanBytes(r.bytes_on_disk)
    );
    if r.unfinished_migration {
        println!("  holds an unfinished migration (finish it with --resume)");
    }
    for f in &r.families {
        println!(
            "  {:<24} {:>12} keys, {:>10} keys + {:>10} values, checksum {}",
            f.name,
            f.digest.keys,
            HumanBytes(f.digest.key_bytes).to_string(),
            HumanBytes(f.digest.value_bytes).to_string(),
            f.digest.checksum
        );
    }
}
