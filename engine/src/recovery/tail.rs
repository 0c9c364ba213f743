//! The end of the active log segment: a torn or holed tail that was never
//! synced is cut off (zeroed through the descriptor, never truncated, so no
//! map can fault); damage to bytes that had been synced is corruption.
//! A read-only reader applies the same rules but zeroes nothing: what
//! follows the last complete valid frame is, for it, not yet written.

use crate::error::{Error, Result};
use crate::segment::Segment;
use crate::segment::file_scan::{frames_after_in_file, zero_after};
use crate::segment::scan::ScanOutcome;

use super::Mode;

/// How recovery tells a torn tail from damage.
#[derive(Clone, Copy, Debug)]
pub(super) enum TailRule {
    /// Format version 1, no watermarks: damage with a valid frame anywhere
    /// after it is corruption, else a torn tail.
    ValidFrameAfter,
    /// Bytes below the largest watermark (the MANIFEST's, given here, or
    /// one in a watermark frame) were synced: damage or a clean end below it
    /// is corruption. Damage above it is a torn or holed tail, cut off with
    /// everything after it (writes never synced, so dropping them leaves a
    /// prefix of the history).
    Watermark(u64),
}

/// Checks the active segment's tail and, in [`Mode::Primary`], zeroes it if
/// it is torn. Returns the end of the data recovery keeps.
pub(super) fn settle_active(
    s: &Segment,
    scan: &ScanOutcome,
    rule: TailRule,
    mode: Mode,
) -> Result<u64> {
    let Some(d) = &scan.damage else {
        if let TailRule::Watermark(durable) = rule
            && scan.seal.is_none()
            && scan.end < durable
        {
            return Err(Error::corruption(
                s.path(),
                scan.end,
                format!("the segment ends before {durable}, the offset it was synced up to"),
            ));
        }
        return Ok(scan.end);
    };
    let after = frames_after_in_file(s, d.offset + 8)?;
    match rule {
        TailRule::ValidFrameAfter if after.first_valid.is_some() => {
            return Err(Error::corruption(s.path(), d.offset, d.reason.clone()));
        }
        TailRule::Watermark(durable) => {
            let durable = durable.max(scan.watermark).max(after.watermark);
            if d.offset < durable {
                return Err(Error::corruption(
                    s.path(),
                    d.offset,
                    format!(
                        "{}, below {durable}, the offset it was synced up to",
                        d.reason
                    ),
                ));
            }
        }
        TailRule::ValidFrameAfter => {}
    }
    if mode == Mode::Primary {
        zero_after(s, scan.end)?;
    }
    Ok(scan.end)
}
