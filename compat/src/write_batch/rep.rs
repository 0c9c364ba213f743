//! RocksDB's serialized `WriteBatch` representation ("rep"), byte for byte.
//!
//! ```text
//! header:  sequence: u64 LE (8 bytes) | count: u32 LE (4 bytes)
//! record:  tag: u8 | [cf id: varint32, for the column-family tags] | operands
//! operand: length: varint32 | bytes
//! ```
//!
//! The column-family tags are used only for a non-default column family; a
//! default-column-family (`id == 0`) record uses the plain tag. `count`
//! counts puts, deletes, single deletes, merges and range deletes; log data
//! records are not counted.

use crate::Error;

/// Bytes of the header: the sequence number and the record count.
pub(crate) const HEADER_LEN: usize = SEQUENCE_LEN + COUNT_LEN;
const SEQUENCE_LEN: usize = 8;
const COUNT_LEN: usize = 4;
/// Offset of the record count in the header.
const COUNT_OFFSET: usize = SEQUENCE_LEN;

/// Record tags, as RocksDB's `ValueType` numbers them.
pub(crate) mod tag {
    pub(crate) const DELETION: u8 = 0x0;
    pub(crate) const VALUE: u8 = 0x1;
    pub(crate) const MERGE: u8 = 0x2;
    pub(crate) const LOG_DATA: u8 = 0x3;
    pub(crate) const CF_DELETION: u8 = 0x4;
    pub(crate) const CF_VALUE: u8 = 0x5;
    pub(crate) const CF_MERGE: u8 = 0x6;
    pub(crate) const SINGLE_DELETION: u8 = 0x7;
    pub(crate) const CF_SINGLE_DELETION: u8 = 0x8;
    pub(crate) const NOOP: u8 = 0xD;
    pub(crate) const CF_RANGE_DELETION: u8 = 0xE;
    pub(crate) const RANGE_DELETION: u8 = 0xF;
}

/// One decoded record of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        cf: u32,
        key: &'a [u8],
        value: &'a [u8],
    },
    /// Remove `key`.
    Delete { cf: u32, key: &'a [u8] },
    /// Remove `key`, which the writer promises was put at most once.
    SingleDelete { cf: u32, key: &'a [u8] },
    /// Merge `value` into `key` with the column family's merge operator.
    Merge {
        cf: u32,
        key: &'a [u8],
        value: &'a [u8],
    },
    /// Remove every key in `[begin, end)`.
    DeleteRange {
        cf: u32,
        begin: &'a [u8],
        end: &'a [u8],
    },
    /// An opaque blob for the log only; it changes no data.
    LogData(&'a [u8]),
    /// A placeholder record (written by transactions); it changes nothing.
    Noop,
}

impl BatchOp<'_> {
    /// The column family written, if the record writes one.
    pub(crate) fn cf(&self) -> Option<u32> {
        match *self {
            BatchOp::Put { cf, .. }
            | BatchOp::Delete { cf, .. }
            | BatchOp::SingleDelete { cf, .. }
            | BatchOp::Merge { cf, .. }
            | BatchOp::DeleteRange { cf, .. } => Some(cf),
            BatchOp::LogData(_) | BatchOp::Noop => None,
        }
    }
}

/// An empty batch: a zero sequence number and a zero count.
pub(crate) fn empty_rep(capacity: usize) -> Vec<u8> {
    let mut rep = Vec::with_capacity(capacity.max(HEADER_LEN));
    rep.resize(HEADER_LEN, 0);
    rep
}

/// The record count stored in the header (0 if the header is truncated).
pub(crate) fn count(rep: &[u8]) -> u32 {
    rep.get(COUNT_OFFSET..HEADER_LEN)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// Overwrites the record count in the header.
pub(crate) fn set_count(rep: &mut [u8], count: u32) {
    rep[COUNT_OFFSET..HEADER_LEN].copy_from_slice(&count.to_le_bytes());
}

/// The sequence number stored in the header (0 if the header is truncated).
#[allow(
    dead_code,
    reason = "for get_updates_since and transactions, not implemented yet"
)]
pub(crate) fn sequence(rep: &[u8]) -> u64 {
    rep.get(..SEQUENCE_LEN)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Overwrites the sequence number in the header.
#[allow(
    dead_code,
    reason = "for get_updates_since and transactions, not implemented yet"
)]
pub(crate) fn set_sequence(rep: &mut [u8], sequence: u64) {
    rep[..SEQUENCE_LEN].copy_from_slice(&sequence.to_le_bytes());
}

/// Makes sure `rep` has a full header, zero-filling a truncated one.
pub(crate) fn ensure_header(rep: &mut Vec<u8>) {
    if rep.len() < HEADER_LEN {
        rep.resize(HEADER_LEN, 0);
    }
}

/// Appends a record: its tag (plain or column-family), the column family id
/// when not the default one, and its operands. Counted records bump the
/// header count.
pub(crate) fn append(rep: &mut Vec<u8>, tags: (u8, u8), cf: u32, operands: &[&[u8]]) {
    ensure_header(rep);
    let (plain, with_cf) = tags;
    if cf == 0 {
        rep.push(plain);
    } else {
        rep.push(with_cf);
        put_varint32(rep, cf);
    }
    for operand in operands {
        put_length_prefixed(rep, operand);
    }
    if plain != tag::LOG_DATA {
        let next = count(rep).wrapping_add(1);
        set_count(rep, next);
    }
}

/// The bytes a rep holding only the record [`append`] would write for
/// `(cf, operands)` takes: what `size_in_bytes` reports for a one-write batch.
pub(crate) fn single_record_rep_len(cf: u32, operands: &[&[u8]]) -> usize {
    let tag_len = if cf == 0 { 1 } else { 1 + varint32_len(cf) };
    let operand_lens: usize = operands
        .iter()
        .map(|o| varint32_len(o.len() as u32) + o.len())
        .sum();
    HEADER_LEN + tag_len + operand_lens
}

/// Bytes of `value` as a varint32 (as [`put_varint32`] writes it).
fn varint32_len(value: u32) -> usize {
    (32 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `value` as a varint32 length followed by its bytes.
fn put_length_prefixed(rep: &mut Vec<u8>, value: &[u8]) {
    let len = u32::try_from(value.len())
        .unwrap_or_else(|_| panic!("write batch operand of {} bytes exceeds 4 GiB", value.len()));
    put_varint32(rep, len);
    rep.extend_from_slice(value);
}

/// Appends `value` in LEB128 form: 7 bits per byte, low bits first.
fn put_varint32(rep: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        rep.push((value as u8) | 0x80);
        value >>= 7;
    }
    rep.push(value as u8);
}

/// Decodes the records of a rep in order, stopping at the first malformed one.
pub(crate) struct Ops<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> Ops<'a> {
    /// Iterates over the records of `rep`; a rep shorter than its header
    /// yields one error, as RocksDB reports it.
    pub(crate) fn new(rep: &'a [u8]) -> Self {
        match rep.get(HEADER_LEN..) {
            Some(rest) => Self {
                rest,
                failed: false,
            },
            None => Self {
                rest: &[],
                failed: true,
            },
        }
    }

    fn take_u8(&mut self) -> Option<u8> {
        let (&first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(first)
    }

    fn take_varint32(&mut self) -> Option<u32> {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let byte = self.take_u8()?;
            value |= u32::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn take_slice(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.take_varint32()?).ok()?;
        if len > self.rest.len() {
            return None;
        }
        let (slice, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(slice)
    }

    /// Decodes the column family id (if `with_cf`) and the operands of one
    /// record; `None` if the record is cut short.
    fn take_body(&mut self, with_cf: bool, operands: usize) -> Option<(u32, [&'a [u8]; 2])> {
        let cf = if with_cf { self.take_varint32()? } else { 0 };
        let mut out: [&'a [u8]; 2] = [&[], &[]];
        for slot in out.iter_mut().take(operands) {
            *slot = self.take_slice()?;
        }
        Some((cf, out))
    }

    fn decode(&mut self, record_tag: u8) -> Result<BatchOp<'a>, Error> {
        let with_cf = matches!(
            record_tag,
            tag::CF_VALUE
                | tag::CF_DELETION
                | tag::CF_SINGLE_DELETION
                | tag::CF_MERGE
                | tag::CF_RANGE_DELETION
        );
        let bad = |what: &str| Error::corruption(format_args!("bad WriteBatch {what}"));
        match record_tag {
            tag::VALUE | tag::CF_VALUE => {
                let (cf, [key, value]) = self.take_body(with_cf, 2).ok_or_else(|| bad("Put"))?;
                Ok(BatchOp::Put { cf, key, value })
            }
            tag::DELETION | tag::CF_DELETION => {
                let (cf, [key, _]) = self.take_body(with_cf, 1).ok_or_else(|| bad("Delete"))?;
                Ok(BatchOp::Delete { cf, key })
            }
            tag::SINGLE_DELETION | tag::CF_SINGLE_DELETION => {
                let (cf, [key, _]) = self
                    .take_body(with_cf, 1)
                    .ok_or_else(|| bad("SingleDelete"))?;
                Ok(BatchOp::SingleDelete { cf, key })
            }
            tag::MERGE | tag::CF_MERGE => {
                let (cf, [key, value]) = self.take_body(with_cf, 2).ok_or_else(|| bad("Merge"))?;
                Ok(BatchOp::Merge { cf, key, value })
            }
            tag::RANGE_DELETION | tag::CF_RANGE_DELETION => {
                let (cf, [begin, end]) = self
                    .take_body(with_cf, 2)
                    .ok_or_else(|| bad("DeleteRange"))?;
                Ok(BatchOp::DeleteRange { cf, begin, end })
            }
            tag::LOG_DATA => {
                let (_, [blob, _]) = self.take_body(false, 1).ok_or_else(|| bad("Blob"))?;
                Ok(BatchOp::LogData(blob))
            }
            tag::NOOP => Ok(BatchOp::Noop),
            _ => Err(Error::corruption("unknown WriteBatch tag")),
        }
    }
}

impl<'a> Iterator for Ops<'a> {
    type Item = Result<BatchOp<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            self.failed = false;
            self.rest = &[];
            return Some(Err(Error::corruption("malformed WriteBatch (too small)")));
        }
        let record_tag = self.take_u8()?;
        let op = self.decode(record_tag);
        if op.is_err() {
            self.rest = &[];
        }
        Some(op)
    }
}

/// Decodes every record of `rep` and checks the header count against the
/// number of counted records, as RocksDB does before applying a batch.
pub(crate) fn decode_all(rep: &[u8]) -> Result<Vec<BatchOp<'_>>, Error> {
    let ops = Ops::new(rep).collect::<Result<Vec<_>, _>>()?;
    let counted = ops
        .iter()
        .filter(|op| !matches!(op, BatchOp::LogData(_) | BatchOp::Noop))
        .count();
    if usize::try_from(count(rep)).ok() != Some(counted) {
        return Err(Error::corruption("WriteBatch has wrong count"));
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::{BatchOp, Ops, append, empty_rep, put_varint32, single_record_rep_len, tag};

    /// The length a one-write rep is given without encoding it is the
    /// encoded rep's, for every varint width of the family and the lengths.
    #[test]
    fn single_record_rep_len_matches_the_encoding() {
        let long = vec![7u8; 20_000];
        let cases: [&[&[u8]]; 3] = [&[b""], &[b"k", &long[..130]], &[&long[..], b"v"]];
        for cf in [0, 1, 127, 128, 16_384, u32::MAX] {
            for operands in cases {
                let mut rep = empty_rep(0);
                append(&mut rep, (tag::VALUE, tag::CF_VALUE), cf, operands);
                assert_eq!(single_record_rep_len(cf, operands), rep.len(), "cf {cf}");
            }
        }
    }

    #[test]
    fn varint_matches_leb128() {
        let mut out = Vec::new();
        for value in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            out.clear();
            put_varint32(&mut out, value);
            let mut rep = empty_rep(0);
            rep.extend_from_slice(&out);
            let mut ops = Ops::new(&rep);
            assert_eq!(ops.take_varint32(), Some(value));
        }
        out.clear();
        put_varint32(&mut out, 300);
        assert_eq!(out, [0xAC, 0x02]);
    }

    #[test]
    fn truncated_record_is_corruption() {
        let mut rep = empty_rep(0);
        append(&mut rep, (tag::VALUE, tag::CF_VALUE), 0, &[b"k", b"v"]);
        rep.pop();
        let ops: Vec<_> = Ops::new(&rep).collect();
        assert_eq!(ops.len(), 1);
        assert_eq!(
            ops[0].as_ref().unwrap_err().to_string(),
            "Corruption: bad WriteBatch Put"
        );
    }

    #[test]
    fn column_family_id_is_written_only_for_non_default() {
        let mut rep = empty_rep(0);
        append(&mut rep, (tag::DELETION, tag::CF_DELETION), 3, &[b"k"]);
        assert_eq!(&rep[12..], [tag::CF_DELETION, 3, 1, b'k']);
        let op = Ops::new(&rep).next().unwrap().unwrap();
        assert_eq!(op, BatchOp::Delete { cf: 3, key: b"k" });
    }
}
