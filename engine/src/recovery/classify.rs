//! Deciding, from each segment's walk, which segments are live, and
//! checking that each is whole.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::live_segments::LiveSegments;
use crate::format::segment_header::{SEGMENT_HEADER_BYTES, SegmentKind};
use crate::io::FileSystem;
use crate::segment::Segment;
use crate::segment::file_scan::frames_after_in_file;
use crate::segment::scan::ScanOutcome;

use super::tail::{TailRule, settle_active};
use super::{Found, Mode};

/// Live segments (indexes, in id order) and whether the newest log segment
/// is unsealed.
pub(super) type Live = (Vec<usize>, bool);

/// With a MANIFEST list: every segment given is listed, so every one is
/// needed. All but the newest log segment must be sealed and undamaged.
pub(super) fn classify_listed(
    segments: &[Arc<Segment>],
    scans: &[ScanOutcome],
    live: &LiveSegments,
    mode: Mode,
) -> Result<Live> {
    let keep: Vec<usize> = (0..segments.len()).collect();
    let unsealed = check_all(segments, scans, &keep, mode, |s| {
        let durable = live
            .watermark
            .filter(|w| w.segment == s.id())
            .map_or(0, |w| w.offset);
        TailRule::Watermark(durable)
    })?;
    Ok((keep, unsealed))
}

/// Format version 1 (no list): an unsealed compaction output is a leftover
/// of a crash during compaction only if everything it holds is still in
/// other segments (its inputs are all present); a sealed one makes the
/// segments its seal lists obsolete. In [`Mode::ReadOnly`] such segments
/// are only left out, never marked for removal.
pub(super) fn classify_v1(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    segments: &[Arc<Segment>],
    scans: &[ScanOutcome],
    records: &[Vec<(u32, Found<'_>)>],
    mode: Mode,
) -> Result<Live> {
    let primary = mode == Mode::Primary;
    let mut replaced = BTreeSet::new();
    let mut keep = Vec::new();
    for (i, (s, scan)) in segments.iter().zip(scans).enumerate() {
        if s.kind() == SegmentKind::Compacted {
            match &scan.seal {
                Some(seal) => replaced.extend(seal.replaced.iter().copied()),
                None => {
                    check_leftover_output(s, scan, i, records)?;
                    if primary {
                        s.mark_obsolete();
                    }
                    continue;
                }
            }
        }
        keep.push(i);
    }
    keep.retain(|&i| {
        let gone = replaced.contains(&segments[i].id());
        if gone && primary {
            segments[i].mark_obsolete();
        }
        !gone
    });
    let unsealed = check_all(segments, scans, &keep, mode, |_| TailRule::ValidFrameAfter)?;
    let changed =
        keep.iter().any(|&i| segments[i].kind() == SegmentKind::Log) || !replaced.is_empty();
    if changed && primary {
        fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok((keep, unsealed))
}

/// Checks the kept segments: the newest log segment's tail by `rule`, every
/// other one sealed and undamaged. Sets each one's written length. Returns
/// whether the newest log segment is unsealed.
fn check_all(
    segments: &[Arc<Segment>],
    scans: &[ScanOutcome],
    keep: &[usize],
    mode: Mode,
    rule: impl Fn(&Segment) -> TailRule,
) -> Result<bool> {
    let last_log = keep
        .iter()
        .rposition(|&i| segments[i].kind() == SegmentKind::Log);
    let mut unsealed = false;
    for (k, &i) in keep.iter().enumerate() {
        let (s, scan) = (&segments[i], &scans[i]);
        let end = if Some(k) == last_log {
            unsealed = scan.seal.is_none();
            settle_active(s, scan, rule(s), mode)?
        } else if let Some(d) = &scan.damage {
            return Err(Error::corruption(s.path(), d.offset, d.reason.clone()));
        } else if scan.seal.is_none() {
            return Err(Error::corruption(
                s.path(),
                scan.end,
                "sealed segment has no seal frame",
            ));
        } else {
            scan.end
        };
        s.set_written(end);
    }
    Ok(unsealed)
}

/// Succeeds if the unsealed compaction output `segments[i]` is provably the
/// leftover of a crash during compaction: every record it holds is also in
/// another segment (its inputs are still there), nothing valid follows its
/// damage, and it holds either records or nothing but zeros. Otherwise its
/// inputs may be gone and it is the only copy: corruption, never removed.
fn check_leftover_output(
    s: &Segment,
    scan: &ScanOutcome,
    i: usize,
    records: &[Vec<(u32, Found<'_>)>],
) -> Result<()> {
    let (offset, reason) = match &scan.damage {
        Some(d) => (d.offset, d.reason.clone()),
        None => (scan.end, "compaction output has no seal frame".to_string()),
    };
    let corrupt = || Err(Error::corruption(s.path(), offset, reason.clone()));
    if scan.damage.is_some() && frames_after_in_file(s, offset + 8)?.first_valid.is_some() {
        return corrupt();
    }
    let own = &records[i];
    if own.is_empty() {
        let blank = scan.damage.is_none() && scan.end == SEGMENT_HEADER_BYTES as u64;
        return if blank { Ok(()) } else { corrupt() };
    }
    let elsewhere: HashSet<(u32, &[u8], u64)> = records
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .flat_map(|(_, r)| r.iter().map(|(ks, f)| (*ks, f.key, f.seq)))
        .collect();
    match own
        .iter()
        .all(|(ks, f)| elsewhere.contains(&(*ks, f.key, f.seq)))
    {
        true => Ok(()),
        false => corrupt(),
    }
}
