//! The live-segment section of the `MANIFEST`: which segment files the
//! database needs, and how much of the active log segment is known to be on
//! stable storage (its durable watermark). Present when bit 0 of the
//! manifest's flags is set; a manifest written before this section existed
//! has no flags, and recovery then follows the older rules (see `FORMAT.md`).
//!
//! ```text
//! offset size field
//!   0     4   watermark segment id (0: none; segment ids start at 1)
//!   4     4   number n of live segments
//!   8     8   watermark offset: bytes of that segment known durable
//!  16   4*n   live segment ids, ascending
//! ```

use super::{read_u32, read_u64};

const WATERMARK_OFFSET_AT: usize = 8;
const IDS_AT: usize = 16;

/// A point below which a log segment's bytes are known to be on stable
/// storage: damage or truncation below it is corruption, never a torn tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermark {
    /// The log segment it applies to.
    pub segment: u32,
    /// Bytes `0..offset` of that segment were synced.
    pub offset: u64,
}

/// The segments a database needs and its active segment's watermark.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveSegments {
    /// Ids of every segment file the database needs, ascending. A listed file
    /// that is missing or damaged is corruption; a file not listed is a
    /// leftover of an operation that never committed (or a replaced one).
    pub ids: Vec<u32>,
    /// How much of the active log segment is known durable.
    pub watermark: Option<Watermark>,
}

impl LiveSegments {
    /// Appends the encoded section to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let (segment, offset) = self.watermark.map_or((0, 0), |w| (w.segment, w.offset));
        out.extend_from_slice(&segment.to_le_bytes());
        let n = u32::try_from(self.ids.len()).expect("segment count fits in u32");
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        for id in &self.ids {
            out.extend_from_slice(&id.to_le_bytes());
        }
    }

    /// Decodes the section, which must fill `b` exactly.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() < IDS_AT {
            return Err("manifest live-segment section is too short".into());
        }
        let segment = read_u32(b, 0);
        let n = read_u32(b, 4) as usize;
        let offset = read_u64(b, WATERMARK_OFFSET_AT);
        if n.checked_mul(4).and_then(|x| x.checked_add(IDS_AT)) != Some(b.len()) {
            return Err("manifest live-segment count does not match its length".into());
        }
        let ids: Vec<u32> = (0..n).map(|i| read_u32(b, IDS_AT + 4 * i)).collect();
        if ids.windows(2).any(|w| w[0] >= w[1]) || ids.contains(&0) {
            return Err("manifest live-segment ids are not ascending".into());
        }
        let watermark = (segment != 0).then_some(Watermark { segment, offset });
        Ok(LiveSegments { ids, watermark })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_lengths() {
        let live = LiveSegments {
            ids: vec![1, 4, 9],
            watermark: Some(Watermark {
                segment: 9,
                offset: 4096,
            }),
        };
        let mut b = Vec::new();
        live.encode_into(&mut b);
        assert_eq!(LiveSegments::decode(&b), Ok(live));
        assert!(LiveSegments::decode(&b[..b.len() - 1]).is_err());
        b[IDS_AT..IDS_AT + 4].copy_from_slice(&9u32.to_le_bytes());
        assert!(LiveSegments::decode(&b).is_err(), "ids must ascend");
    }
}
