//! Comparing two databases family by family: key count, an order-sensitive
//! checksum of each side, a lockstep walk that finds the first differing
//! key, and sampled point reads on both sides.
//!
//! Each side is read on its own thread into chunks; the calling thread
//! compares them as they arrive, so both sides are read once, in parallel.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use serde::Serialize;

use crate::checksum::{Checksum, Digest};
use crate::error::{MigrateError, Result};
use crate::keymap::{KeyMap, hex};
use crate::kind::Kind;
use crate::progress::Observer;
use crate::source::Source;

/// Entries per chunk handed from a reading thread to the comparison.
const CHUNK_ENTRIES: usize = 4096;
/// Bytes per chunk (a chunk also ends after a large value).
const CHUNK_BYTES: usize = 4 << 20;
/// Chunks buffered per side.
const CHUNKS_IN_FLIGHT: usize = 4;
/// One key in `SAMPLE_EVERY` (by key hash) is also read by point lookup.
const SAMPLE_EVERY: u64 = 512;
/// At most this many point reads per family and side.
const MAX_SAMPLES: u64 = 10_000;

/// One side of a comparison: a database and how its keys map onto the
/// other side's (`--i64-keys` applies to side A).
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// The database.
    pub source: &'a dyn Source,
    /// How its keys map to the compared keys.
    pub map: KeyMap,
}

/// Where and how two families first differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The first differing key (compared form), in hex.
    pub key_hex: String,
    /// What differs.
    pub reason: String,
}

/// The comparison of one family.
#[derive(Clone, Debug, Serialize)]
pub struct FamilyVerdict {
    /// The family.
    pub name: String,
    /// Side A's digest (`None` if A lacks the family).
    pub a: Option<Digest>,
    /// Side B's digest (`None` if B lacks the family).
    pub b: Option<Digest>,
    /// Number of keys also checked by point reads on both sides.
    pub sampled_reads: u64,
    /// The first difference, if any.
    pub difference: Option<Difference>,
}

/// A database named in a report.
#[derive(Clone, Debug, Serialize)]
pub struct DbInfo {
    /// Its directory.
    pub path: String,
    /// Its kind.
    pub kind: Kind,
}

impl DbInfo {
    /// Describes `source`.
    pub fn of(source: &dyn Source) -> Self {
        DbInfo {
            path: source.path().display().to_string(),
            kind: source.kind(),
        }
    }
}

/// The result of comparing two databases.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// Side A.
    pub a: DbInfo,
    /// Side B.
    pub b: DbInfo,
    /// Whether every family compared equal.
    pub identical: bool,
    /// Family by family.
    pub families: Vec<FamilyVerdict>,
}

impl VerifyReport {
    /// The first family that differs, with its difference.
    pub fn first_difference(&self) -> Option<(&str, &Difference)> {
        self.families
            .iter()
            .find_map(|f| f.difference.as_ref().map(|d| (f.name.as_str(), d)))
    }

    /// Turns a failed verification into [`MigrateError::VerificationFailed`].
    pub fn into_error(self) -> Result<VerifyReport> {
        match self.first_difference() {
            None => Ok(self),
            Some((family, d)) => Err(MigrateError::VerificationFailed {
                family: family.to_string(),
                key_hex: d.key_hex.clone(),
                reason: d.reason.clone(),
            }),
        }
    }
}

/// The families of both sides: A's, then those only B has.
pub fn union_of_families(a: &dyn Source, b: &dyn Source) -> Vec<String> {
    let mut names = a.families();
    for name in b.families() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Compares `families` of `a` and `b`.
pub fn verify(
    a: Side<'_>,
    b: Side<'_>,
    families: &[String],
    observer: &mut dyn Observer,
) -> Result<VerifyReport> {
    let mut verdicts = Vec::new();
    for family in families {
        observer.verifying(family);
        verdicts.push(verify_family(a, b, family)?);
    }
    Ok(VerifyReport {
        a: DbInfo::of(a.source),
        b: DbInfo::of(b.source),
        identical: verdicts.iter().all(|v| v.difference.is_none()),
        families: verdicts,
    })
}

/// Compares one family, reading both sides at once.
fn verify_family(a: Side<'_>, b: Side<'_>, family: &str) -> Result<FamilyVerdict> {
    let has_a = a.source.families().iter().any(|f| f == family);
    let has_b = b.source.families().iter().any(|f| f == family);
    if !has_a || !has_b {
        return Ok(missing_family(family, has_a, has_b));
    }
    thread::scope(|scope| {
        let (tx_a, rx_a) = sync_channel(CHUNKS_IN_FLIGHT);
        let (tx_b, rx_b) = sync_channel(CHUNKS_IN_FLIGHT);
        let reader_a = scope.spawn(move || read_side(a, family, tx_a));
        let reader_b = scope.spawn(move || read_side(b, family, tx_b));
        let compared = compare(a, b, family, rx_a, rx_b);
        let digest_a = join(reader_a)?;
        let digest_b = join(reader_b)?;
        let (sampled_reads, mut difference) = compared?;
        if difference.is_none() && digest_a != digest_b {
            difference = Some(Difference {
                key_hex: String::new(),
                reason: "the checksums differ".into(),
            });
        }
        Ok(FamilyVerdict {
            name: family.to_string(),
            a: Some(digest_a),
            b: Some(digest_b),
            sampled_reads,
            difference,
        })
    })
}

fn missing_family(family: &str, has_a: bool, has_b: bool) -> FamilyVerdict {
    let side = if has_a { "B" } else { "A" };
    let reason = match (has_a, has_b) {
        (false, false) => "neither side has this column family".to_string(),
        _ => format!("side {side} has no column family {family:?}"),
    };
    FamilyVerdict {
        name: family.to_string(),
        a: None,
        b: None,
        sampled_reads: 0,
        difference: Some(Difference {
            key_hex: String::new(),
            reason,
        }),
    }
}

fn join(handle: thread::ScopedJoinHandle<'_, Result<Digest>>) -> Result<Digest> {
    match handle.join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

type Chunk = Vec<(Vec<u8>, Vec<u8>)>;

/// Reads every entry of `family` on one side (in compared-key order),
/// checksums it and sends it on in chunks. Stops sending, but keeps
/// checksumming, if the receiver has gone.
fn read_side(side: Side<'_>, family: &str, tx: SyncSender<Chunk>) -> Result<Digest> {
    let mut sum = Checksum::new();
    let mut chunk = Chunk::with_capacity(CHUNK_ENTRIES);
    let mut bytes = 0;
    let mut connected = true;
    for run in side.map.source_runs(family, None)? {
        side.source.scan(family, &run, &mut |key, value| {
            let key = side.map.map(family, key)?;
            sum.add(&key, value);
            if connected {
                bytes += key.len() + value.len();
                chunk.push((key.into_owned(), value.to_vec()));
                if chunk.len() >= CHUNK_ENTRIES || bytes >= CHUNK_BYTES {
                    bytes = 0;
                    connected = tx.send(std::mem::take(&mut chunk)).is_ok();
                }
            }
            Ok(true)
        })?;
    }
    if connected && !chunk.is_empty() {
        let _ = tx.send(chunk);
    }
    Ok(sum.digest())
}

/// Pulls entries from a side's chunks one by one.
struct Stream {
    rx: Receiver<Chunk>,
    chunk: std::vec::IntoIter<(Vec<u8>, Vec<u8>)>,
}

impl Stream {
    fn new(rx: Receiver<Chunk>) -> Self {
        Stream {
            rx,
            chunk: Vec::new().into_iter(),
        }
    }

    fn next(&mut self) -> Option<(Vec<u8>, Vec<u8>)> {
        loop {
            if let Some(entry) = self.chunk.next() {
                return Some(entry);
            }
            self.chunk = self.rx.recv().ok()?.into_iter();
        }
    }
}

/// Walks both sides in lockstep up to the first difference; returns the
/// number of sampled point reads and the difference. Dropping the
/// receivers afterwards lets the readers finish their checksums.
fn compare(
    a: Side<'_>,
    b: Side<'_>,
    family: &str,
    rx_a: Receiver<Chunk>,
    rx_b: Receiver<Chunk>,
) -> Result<(u64, Option<Difference>)> {
    let (mut sa, mut sb) = (Stream::new(rx_a), Stream::new(rx_b));
    let mut samples = 0;
    loop {
        let diff = match (sa.next(), sb.next()) {
            (None, None) => return Ok((samples, None)),
            (Some((k, _)), None) => only_on("A", &k),
            (None, Some((k, _))) => only_on("B", &k),
            (Some((ka, va)), Some((kb, vb))) => {
                if ka != kb {
                    let (key, side) = if ka < kb { (ka, "A") } else { (kb, "B") };
                    only_on(side, &key)
                } else if va != vb {
                    values_differ(&ka, &va, &vb)
                } else {
                    if samples < MAX_SAMPLES && sampled(&ka, samples) {
                        samples += 1;
                        if let Some(d) = point_reads(a, b, family, &ka, &va)? {
                            return Ok((samples, Some(d)));
                        }
                    }
                    continue;
                }
            }
        };
        return Ok((samples, Some(diff)));
    }
}

fn only_on(side: &str, key: &[u8]) -> Difference {
    Difference {
        key_hex: hex(key),
        reason: format!("the key exists only on side {side}"),
    }
}

fn values_differ(key: &[u8], a: &[u8], b: &[u8]) -> Difference {
    Difference {
        key_hex: hex(key),
        reason: format!(
            "the values differ ({} bytes on side A, {} bytes on side B)",
            a.len(),
            b.len()
        ),
    }
}

/// Whether `key` is one of the keys checked by point reads: the first key,
/// then about one in [`SAMPLE_EVERY`] by hash.
fn sampled(key: &[u8], taken: u64) -> bool {
    taken == 0 || xxhash_rust::xxh3::xxh3_64(key).is_multiple_of(SAMPLE_EVERY)
}

/// Reads `key` by point lookup on both sides and checks it against the
/// value the scans agreed on.
fn point_reads(
    a: Side<'_>,
    b: Side<'_>,
    family: &str,
    key: &[u8],
    expected: &[u8],
) -> Result<Option<Difference>> {
    for (name, side) in [("A", a), ("B", b)] {
        let source_key = side.map.unmap(family, key)?;
        let got = side.source.get(family, &source_key)?;
        if got.as_deref() != Some(expected) {
            return Ok(Some(Difference {
                key_hex: hex(key),
                reason: format!("a point read on side {name} disagrees with its scan"),
            }));
        }
    }
    Ok(None)
}
