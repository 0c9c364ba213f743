//! Records: one key's put, delete or merge, with its sequence number and a
//! pointer to the key's previous version (the MVCC version chain).
//!
//! ```text
//! record header, 40 bytes, 8-aligned:
//! offset size field
//!   0     4   CRC-32C of bytes 4..(40 + key length + value length)
//!   4     1   kind: 1 = put, 2 = delete, 3 = merge, 4 = range delete
//!             (key = first key deleted, value = first key kept),
//!             5 = log data (keyspace 0, no key, value = the blob; the
//!             sequence number is the batch position, not consumed)
//!   5     1   merge state (merge only, else 0): 0 = resolved,
//!             1 = the merge function failed, 2 = no merge function set,
//!             3 = an operand over the version below it, 4 = an operand
//!             over no value (3 and 4: version 6)
//!   6     2   stack depth (states 3 and 4, else 0): operand records of
//!             the key's stack from this one down, this one included
//!   8     4   keyspace id
//!  12     4   key length
//!  16     4   value length (0 for a delete; operand + result for a
//!             merge; the operand alone for states 3 and 4)
//!  20     4   operand length (merge only, else 0)
//!  24     8   sequence number
//!  32     8   location of the previous version of this key, or u64::MAX
//!  40     -   key bytes, then value bytes (a merge: operand, then the
//!             resolved value), then zero padding to 8 bytes
//!
//! short record header (version 4; puts and deletes in compaction output
//! whose previous version no reader can need), 24 bytes, 8-aligned:
//!   0     4   CRC-32C of bytes 4..(24 + key length + value length)
//!   4     1   0x80 | kind (0x81 = put, 0x82 = delete)
//!   5     1   value encoding (version 5; zero before): 0 = as written,
//!             1 = compressed with the segment's dictionary (puts only,
//!             see `compressed_value.rs`)
//!   6     2   key length
//!   8     4   keyspace id
//!  12     4   value length
//!  16     8   sequence number
//!  24     -   key bytes, then value bytes, then zero padding to 8 bytes
//!             (the previous version's location is u64::MAX)
//! ```

use super::byte_sink::ByteSink;
use super::{align8, read_u32, read_u64};
use crate::format::location::Location;

/// Size of a record header.
pub const RECORD_HEADER_BYTES: usize = 40;

const KIND_AT: usize = 4;
const MERGE_STATE_AT: usize = 5;
const STACK_DEPTH_AT: usize = 6;
const KEYSPACE_AT: usize = 8;
const KEY_LEN_AT: usize = 12;
const VALUE_LEN_AT: usize = 16;
const OPERAND_LEN_AT: usize = 20;
const SEQ_AT: usize = 24;
const PREV_AT: usize = 32;

/// Size of a short record header (version 4).
pub const SHORT_RECORD_HEADER_BYTES: usize = 24;
/// Set in the kind byte of a short record.
const SHORT_FLAG: u8 = 0x80;
const SHORT_KEY_LEN_AT: usize = 6;
const SHORT_KEYSPACE_AT: usize = 8;
const SHORT_VALUE_LEN_AT: usize = 12;
const SHORT_SEQ_AT: usize = 16;

/// How a record's value field holds the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueEncoding {
    /// The value as written.
    Plain,
    /// Compressed with the segment's value dictionary (short puts of
    /// compaction outputs only; see `compressed_value.rs`): read it
    /// through [`crate::segment::Segment::value_of`].
    Compressed,
}

impl ValueEncoding {
    fn code(self) -> u8 {
        match self {
            ValueEncoding::Plain => 0,
            ValueEncoding::Compressed => 1,
        }
    }
}

/// Whether a record sets, deletes or merges into its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// The key is set to the value.
    Put,
    /// The key is deleted (a tombstone).
    Delete,
    /// A merge operand, stored with the value it resolved to when written,
    /// or alone, to be folded over the versions below it on read (see
    /// [`MergeState`]).
    Merge,
    /// Deletes `[key, value)`: the key is the first key deleted, the value
    /// the first key kept.
    RangeDelete,
    /// A blob kept in the log for readers of the write history
    /// ([`crate::Db::batches_since`]); it has no key, consumes no sequence
    /// number, is never indexed and is dropped by compaction.
    LogData,
}

impl RecordKind {
    fn code(self) -> u8 {
        match self {
            RecordKind::Put => 1,
            RecordKind::Delete => 2,
            RecordKind::Merge => 3,
            RecordKind::RangeDelete => 4,
            RecordKind::LogData => 5,
        }
    }
}

/// How a merge record's operand was resolved when it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeState {
    /// An operand record (version 6): the record holds the operand alone;
    /// its value is the fold of the key's stack of operand records, from
    /// the bottom one up to this one, over the stack's base (see FORMAT.md,
    /// "merge" under Records).
    Operand(Stack),
    /// The record holds the resolved value (also the state of non-merge
    /// records, which have nothing to resolve).
    Resolved,
    /// The keyspace's merge function refused the operands: reads of this
    /// version fail until the key is put or deleted again.
    Failed,
    /// The keyspace had no merge function: reads of this version fail until
    /// the key is put or deleted again.
    NoFunction,
}

/// Where an operand record sits in its key's stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack {
    /// Operand records from this one down to the stack's bottom, this one
    /// included (1 for the bottom).
    pub depth: u16,
    /// Whether the stack folds over a base value: the version below the
    /// bottom record (its `prev`). Always true above the bottom.
    pub over_base: bool,
}

impl MergeState {
    fn code(self) -> u8 {
        match self {
            MergeState::Resolved => 0,
            MergeState::Failed => 1,
            MergeState::NoFunction => 2,
            MergeState::Operand(Stack {
                over_base: true, ..
            }) => 3,
            MergeState::Operand(Stack {
                over_base: false, ..
            }) => 4,
        }
    }

    /// The stack-depth field's value (0 unless an operand record).
    fn depth(self) -> u16 {
        match self {
            MergeState::Operand(stack) => stack.depth,
            _ => 0,
        }
    }

    /// Whether this is an operand record's state.
    #[inline]
    pub fn is_operand(self) -> bool {
        matches!(self, MergeState::Operand(_))
    }

    #[inline]
    fn from_code(code: u8, depth: u16) -> Result<Self, RecordDamage> {
        let state = match code {
            0 => MergeState::Resolved,
            1 => MergeState::Failed,
            2 => MergeState::NoFunction,
            3 | 4 => MergeState::Operand(Stack {
                depth,
                over_base: code == 3,
            }),
            other => return Err(RecordDamage::UnknownMergeState(other)),
        };
        let depth_ok = match state {
            MergeState::Operand(Stack { over_base, depth }) => {
                depth > 0 && (over_base || depth == 1)
            }
            _ => depth == 0,
        };
        match depth_ok {
            true => Ok(state),
            false => Err(RecordDamage::BadStackDepth { state: code, depth }),
        }
    }
}

/// What is wrong with a record that does not parse. Small and `Copy`, so
/// that a parse result costs no more to pass around than the record view;
/// its text (`Display`) goes into the corruption error that names the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordDamage {
    /// The header runs past the end of the frame.
    HeaderPastFrame,
    /// A kind byte no version writes.
    UnknownKind(u8),
    /// A short record's kind byte that no version writes.
    UnknownShortKind(u8),
    /// A short record's value encoding that no version writes, or a
    /// compressed delete.
    UnknownValueEncoding(u8),
    /// A merge state byte no version writes.
    UnknownMergeState(u8),
    /// A log-data record with a key or a keyspace.
    LogDataWithKey,
    /// A merge operand longer than the value, or one on a record that is not
    /// a merge.
    OperandDoesNotFit {
        /// The operand's length.
        operand: usize,
        /// The value's length.
        value: usize,
    },
    /// A merge state on a record that is not a merge.
    MergeStateOnNonMerge,
    /// A stack depth that does not go with the merge state: 0 for an
    /// operand record, not 1 for a bottom without a base, or set on a
    /// record that is not an operand record.
    BadStackDepth {
        /// The merge state byte.
        state: u8,
        /// The stack depth.
        depth: u16,
    },
    /// An operand record whose value is not exactly its operand.
    OperandRecordWithValue,
    /// The key and value run past the end of the frame.
    LengthsPastFrame {
        /// The key's length.
        key: usize,
        /// The value's length.
        value: usize,
    },
}

impl std::fmt::Display for RecordDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            RecordDamage::HeaderPastFrame => {
                f.write_str("record header runs past the end of its frame")
            }
            RecordDamage::UnknownKind(k) => write!(f, "unknown record kind {k}"),
            RecordDamage::UnknownShortKind(k) => write!(f, "unknown short record kind {k}"),
            RecordDamage::UnknownValueEncoding(e) => {
                write!(f, "unknown value encoding {e} of a short record")
            }
            RecordDamage::UnknownMergeState(m) => write!(f, "unknown merge state {m}"),
            RecordDamage::LogDataWithKey => {
                f.write_str("a log-data record with a key or a keyspace")
            }
            RecordDamage::OperandDoesNotFit { operand, value } => write!(
                f,
                "record operand length {operand} does not fit its value length {value}"
            ),
            RecordDamage::MergeStateOnNonMerge => {
                f.write_str("a merge state on a record that is not a merge")
            }
            RecordDamage::BadStackDepth { state, depth } => {
                write!(f, "stack depth {depth} does not fit merge state {state}")
            }
            RecordDamage::OperandRecordWithValue => {
                f.write_str("an operand record holds more than its operand")
            }
            RecordDamage::LengthsPastFrame { key, value } => {
                write!(f, "record lengths ({key}, {value}) run past its frame")
            }
        }
    }
}

/// The fields of a record to encode.
#[derive(Clone, Copy, Debug)]
pub struct RecordFields<'a> {
    /// Put, delete or merge.
    pub kind: RecordKind,
    /// How a merge was resolved ([`MergeState::Resolved`] for the others).
    pub merge_state: MergeState,
    /// Keyspace the key belongs to.
    pub keyspace: u32,
    /// Sequence number of the write.
    pub seq: u64,
    /// The key's previous version.
    pub prev: Location,
    /// The key.
    pub key: &'a [u8],
    /// The merge operand (empty for a put or delete).
    pub operand: &'a [u8],
    /// The value (empty for a delete; a merge's resolved value).
    pub value: &'a [u8],
}

/// Encoded size of a record with these key and value lengths (a merge's
/// value length counts its operand and its resolved value).
pub fn encoded_len(key_len: usize, value_len: usize) -> usize {
    align8(RECORD_HEADER_BYTES + key_len + value_len)
}

/// Appends the encoded record to `out`.
pub fn encode_into(r: &RecordFields<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    out.push(r.kind.code());
    out.push(r.merge_state.code());
    out.extend_from_slice(&r.merge_state.depth().to_le_bytes());
    out.extend_from_slice(&r.keyspace.to_le_bytes());
    out.extend_from_slice(&len_u32(r.key.len()).to_le_bytes());
    out.extend_from_slice(&len_u32(r.operand.len() + r.value.len()).to_le_bytes());
    out.extend_from_slice(&len_u32(r.operand.len()).to_le_bytes());
    out.extend_from_slice(&r.seq.to_le_bytes());
    out.extend_from_slice(&r.prev.0.to_le_bytes());
    out.extend_from_slice(r.key);
    out.extend_from_slice(r.operand);
    out.extend_from_slice(r.value);
    let crc = super::crc::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
    out.resize(start + align8(out.len() - start), 0);
}

/// Appends `raw`, one whole record in the long form, to `out` with its
/// previous-version location set to `prev` and its checksum made anew:
/// compaction relinks a merge stack it copies as it is (see
/// `compaction::kept_stacks`).
pub fn append_relinked(raw: &[u8], prev: Location, out: &mut impl ByteSink) {
    let start = out.len();
    out.extend_from_slice(raw);
    let record = &mut out[start..];
    record[PREV_AT..PREV_AT + 8].copy_from_slice(&prev.0.to_le_bytes());
    let key_len = read_u32(record, KEY_LEN_AT) as usize;
    let value_len = read_u32(record, VALUE_LEN_AT) as usize;
    let crc = super::crc::crc32c(&record[4..RECORD_HEADER_BYTES + key_len + value_len]);
    record[..4].copy_from_slice(&crc.to_le_bytes());
}

/// The record `r` in the short form (see the module comment), if it fits
/// one and is not short already: a put or a delete with a key under 64 KiB. The caller decides that
/// no reader can need the versions before it: the short form has no
/// previous-version location.
pub fn shortened(r: &RecordView<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(shortened_len(r)?);
    append_shortened(r, &mut out);
    Some(out)
}

/// The encoded length of `r` in the short form, if [`shortened`] gives one.
pub fn shortened_len(r: &RecordView<'_>) -> Option<usize> {
    u16::try_from(r.key.len()).ok()?;
    if r.short || !matches!(r.kind, RecordKind::Put | RecordKind::Delete) {
        return None;
    }
    Some(align8(
        SHORT_RECORD_HEADER_BYTES + r.key.len() + r.value.len(),
    ))
}

/// Appends `r` in the short form to `out`, its value as it is stored in
/// `r`; `r` must be one that [`shortened_len`] accepts.
pub fn append_shortened(r: &RecordView<'_>, out: &mut impl ByteSink) {
    append_short(r, r.value_encoding, r.value, out);
}

/// Appends `r` in the short form to `out` with its value field holding
/// `stored`, encoded as `encoding` says (the caller compressed it, or
/// decoded a value `r` stores compressed). `r` must be a put or a delete
/// with a key under 64 KiB, and a delete's value is empty and plain.
pub fn append_short(
    r: &RecordView<'_>,
    encoding: ValueEncoding,
    stored: &[u8],
    out: &mut impl ByteSink,
) {
    let start = out.len();
    let key_len = r.key.len() as u16;
    out.extend_from_slice(&[0u8; 4]);
    out.push(SHORT_FLAG | r.kind.code());
    out.push(encoding.code());
    out.extend_from_slice(&key_len.to_le_bytes());
    out.extend_from_slice(&r.keyspace.to_le_bytes());
    out.extend_from_slice(&len_u32(stored.len()).to_le_bytes());
    out.extend_from_slice(&r.seq.to_le_bytes());
    out.extend_from_slice(r.key);
    out.extend_from_slice(stored);
    let crc = super::crc::crc32c(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&crc.to_le_bytes());
    out.resize(start + align8(out.len() - start), 0);
}

/// The encoded length of a short record with these key and stored value
/// lengths.
pub fn short_len(key_len: usize, stored_len: usize) -> usize {
    align8(SHORT_RECORD_HEADER_BYTES + key_len + stored_len)
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("key and value lengths are checked against their maximums")
}

/// A record read in place from a mapped segment.
#[derive(Clone, Copy, Debug)]
pub struct RecordView<'a> {
    /// Put, delete or merge.
    pub kind: RecordKind,
    /// How a merge was resolved ([`MergeState::Resolved`] for the others).
    pub merge_state: MergeState,
    /// Keyspace id.
    pub keyspace: u32,
    /// Sequence number.
    pub seq: u64,
    /// Previous version's location.
    pub prev: Location,
    /// The key, borrowed from the map.
    pub key: &'a [u8],
    /// A merge's operand, borrowed from the map (empty for the others).
    pub operand: &'a [u8],
    /// The value field, borrowed from the map (a merge's resolved value):
    /// the value itself when `value_encoding` is plain, else its stored
    /// form (see [`crate::segment::Segment::value_of`]).
    pub value: &'a [u8],
    /// How `value` holds the value (compressed only in short puts).
    pub value_encoding: ValueEncoding,
    /// Encoded length including padding.
    pub encoded_len: usize,
    /// Whether it is in the short form (version 4).
    pub short: bool,
    /// The stored checksum.
    crc: u32,
    /// The bytes the checksum covers.
    covered: &'a [u8],
}

impl<'a> RecordView<'a> {
    /// Parses the record at the start of `bytes` without verifying its
    /// checksum. Never reads out of bounds; a bad length is an error.
    #[inline(always)]
    pub fn parse(bytes: &'a [u8]) -> Result<Self, RecordDamage> {
        if bytes.len() > KIND_AT && bytes[KIND_AT] & SHORT_FLAG != 0 {
            return Self::parse_short(bytes);
        }
        if bytes.len() < RECORD_HEADER_BYTES {
            return Err(RecordDamage::HeaderPastFrame);
        }
        let kind = match bytes[KIND_AT] {
            1 => RecordKind::Put,
            2 => RecordKind::Delete,
            3 => RecordKind::Merge,
            4 => RecordKind::RangeDelete,
            5 => RecordKind::LogData,
            other => return Err(RecordDamage::UnknownKind(other)),
        };
        let depth = u16::from_le_bytes([bytes[STACK_DEPTH_AT], bytes[STACK_DEPTH_AT + 1]]);
        let merge_state = MergeState::from_code(bytes[MERGE_STATE_AT], depth)?;
        let key_len = read_u32(bytes, KEY_LEN_AT) as usize;
        if kind == RecordKind::LogData && (key_len != 0 || read_u32(bytes, KEYSPACE_AT) != 0) {
            return Err(RecordDamage::LogDataWithKey);
        }
        let value_len = read_u32(bytes, VALUE_LEN_AT) as usize;
        let operand_len = read_u32(bytes, OPERAND_LEN_AT) as usize;
        if operand_len > value_len || (kind != RecordKind::Merge && operand_len != 0) {
            return Err(RecordDamage::OperandDoesNotFit {
                operand: operand_len,
                value: value_len,
            });
        }
        if kind != RecordKind::Merge && merge_state != MergeState::Resolved {
            return Err(RecordDamage::MergeStateOnNonMerge);
        }
        if merge_state.is_operand() && operand_len != value_len {
            return Err(RecordDamage::OperandRecordWithValue);
        }
        let end = RECORD_HEADER_BYTES
            .checked_add(key_len)
            .and_then(|n| n.checked_add(value_len))
            .filter(|&n| n <= bytes.len())
            .ok_or(RecordDamage::LengthsPastFrame {
                key: key_len,
                value: value_len,
            })?;
        let key_end = RECORD_HEADER_BYTES + key_len;
        let operand_end = key_end + operand_len;
        Ok(RecordView {
            kind,
            merge_state,
            keyspace: read_u32(bytes, KEYSPACE_AT),
            seq: read_u64(bytes, SEQ_AT),
            prev: Location(read_u64(bytes, PREV_AT)),
            key: &bytes[RECORD_HEADER_BYTES..key_end],
            operand: &bytes[key_end..operand_end],
            value: &bytes[operand_end..end],
            value_encoding: ValueEncoding::Plain,
            encoded_len: align8(end).min(bytes.len()),
            short: false,
            crc: read_u32(bytes, 0),
            covered: &bytes[4..end],
        })
    }

    /// Parses a short record (version 4).
    #[inline]
    fn parse_short(bytes: &'a [u8]) -> Result<Self, RecordDamage> {
        if bytes.len() < SHORT_RECORD_HEADER_BYTES {
            return Err(RecordDamage::HeaderPastFrame);
        }
        let kind = match bytes[KIND_AT] & !SHORT_FLAG {
            1 => RecordKind::Put,
            2 => RecordKind::Delete,
            other => return Err(RecordDamage::UnknownShortKind(other)),
        };
        let value_encoding = match (bytes[KIND_AT + 1], kind) {
            (0, _) => ValueEncoding::Plain,
            (1, RecordKind::Put) => ValueEncoding::Compressed,
            (other, _) => return Err(RecordDamage::UnknownValueEncoding(other)),
        };
        let key_len = usize::from(u16::from_le_bytes([
            bytes[SHORT_KEY_LEN_AT],
            bytes[SHORT_KEY_LEN_AT + 1],
        ]));
        let value_len = read_u32(bytes, SHORT_VALUE_LEN_AT) as usize;
        let key_end = SHORT_RECORD_HEADER_BYTES + key_len;
        let end = key_end
            .checked_add(value_len)
            .filter(|&n| n <= bytes.len())
            .ok_or(RecordDamage::LengthsPastFrame {
                key: key_len,
                value: value_len,
            })?;
        Ok(RecordView {
            kind,
            merge_state: MergeState::Resolved,
            keyspace: read_u32(bytes, SHORT_KEYSPACE_AT),
            seq: read_u64(bytes, SHORT_SEQ_AT),
            prev: Location::NONE,
            key: &bytes[SHORT_RECORD_HEADER_BYTES..key_end],
            operand: &[],
            value: &bytes[key_end..end],
            value_encoding,
            encoded_len: align8(end).min(bytes.len()),
            short: true,
            crc: read_u32(bytes, 0),
            covered: &bytes[4..end],
        })
    }

    /// The key of the record at the start of `bytes`, reading only its
    /// length and bounds (what an index needs to compare keys; `parse`
    /// checks the rest when the record itself is read). `None` if the
    /// header or the key runs past `bytes`.
    #[inline]
    pub fn key_of(bytes: &'a [u8]) -> Option<&'a [u8]> {
        let short = *bytes.get(KIND_AT)? & SHORT_FLAG != 0;
        let (start, len) = match short {
            true => {
                let len = bytes.get(SHORT_KEY_LEN_AT..SHORT_KEY_LEN_AT + 2)?;
                (
                    SHORT_RECORD_HEADER_BYTES,
                    u16::from_le_bytes([len[0], len[1]]) as usize,
                )
            }
            false => {
                let len = bytes.get(KEY_LEN_AT..KEY_LEN_AT + 4)?;
                let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]);
                (RECORD_HEADER_BYTES, len as usize)
            }
        };
        bytes.get(start..start.checked_add(len)?)
    }

    /// Whether a reader that sees this record reads a value from it: a put,
    /// or a merge resolved to a value (not a delete, nor a merge left
    /// unresolved).
    #[inline]
    pub fn holds_value(&self) -> bool {
        !matches!(self.kind, RecordKind::Delete | RecordKind::RangeDelete)
            && self.merge_state == MergeState::Resolved
    }

    /// Whether the stored checksum matches the record's bytes.
    #[inline]
    pub fn checksum_ok(&self) -> bool {
        super::crc::crc32c(self.covered) == self.crc
    }

    /// The whole encoded record (for verbatim copies by compaction).
    pub fn raw(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[..self.encoded_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(out: &mut Vec<u8>) {
        encode_into(
            &RecordFields {
                kind: RecordKind::Put,
                merge_state: MergeState::Resolved,
                keyspace: 3,
                seq: 77,
                prev: Location::new(1, 64, false),
                key: b"key",
                operand: b"",
                value: b"value!",
            },
            out,
        );
    }

    #[test]
    fn round_trip() {
        let mut out = Vec::new();
        sample(&mut out);
        assert_eq!(out.len(), encoded_len(3, 6));
        let r = RecordView::parse(&out).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.key, r.value, r.seq, r.keyspace),
            (&b"key"[..], &b"value!"[..], 77, 3)
        );
        assert_eq!(r.prev, Location::new(1, 64, false));
        assert_eq!(r.kind, RecordKind::Put);
    }

    /// A relinked record is the same record with another `prev`, its
    /// checksum good, its padding kept.
    #[test]
    fn a_relinked_record_names_its_new_prev() {
        let mut out = vec![9u8; 8];
        let mut raw = Vec::new();
        sample(&mut raw);
        append_relinked(&raw, Location::new(5, 4096, false), &mut out);
        assert_eq!(out.len(), 8 + raw.len());
        let r = RecordView::parse(&out[8..]).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(r.prev, Location::new(5, 4096, false));
        assert_eq!((r.key, r.value, r.seq), (&b"key"[..], &b"value!"[..], 77));
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let mut out = Vec::new();
        sample(&mut out);
        for i in 0..RECORD_HEADER_BYTES + 9 {
            let mut bad = out.clone();
            bad[i] ^= 0x40;
            if let Ok(r) = RecordView::parse(&bad) {
                assert!(!r.checksum_ok(), "flip at {i} went unnoticed");
            }
        }
    }

    #[test]
    fn a_merge_keeps_its_operand_apart_from_its_value() {
        let mut out = Vec::new();
        encode_into(
            &RecordFields {
                kind: RecordKind::Merge,
                merge_state: MergeState::Failed,
                keyspace: 1,
                seq: 9,
                prev: Location::NONE,
                key: b"k",
                operand: b"op",
                value: b"resolved",
            },
            &mut out,
        );
        let r = RecordView::parse(&out).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.kind, r.merge_state),
            (RecordKind::Merge, MergeState::Failed)
        );
        assert_eq!((r.operand, r.value), (&b"op"[..], &b"resolved"[..]));
    }

    #[test]
    fn an_operand_longer_than_its_value_is_an_error() {
        let mut out = Vec::new();
        sample(&mut out);
        out[20..24].copy_from_slice(&100u32.to_le_bytes());
        assert!(RecordView::parse(&out).is_err());
    }

    fn log_data(out: &mut Vec<u8>) {
        encode_into(
            &RecordFields {
                kind: RecordKind::LogData,
                merge_state: MergeState::Resolved,
                keyspace: 0,
                seq: 5,
                prev: Location::NONE,
                key: b"",
                operand: b"",
                value: b"blob",
            },
            out,
        );
    }

    #[test]
    fn a_log_data_record_round_trips() {
        let mut out = Vec::new();
        log_data(&mut out);
        let r = RecordView::parse(&out).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.kind, r.key, r.value),
            (RecordKind::LogData, &b""[..], &b"blob"[..])
        );
    }

    #[test]
    fn a_log_data_record_with_a_key_is_an_error() {
        let mut out = Vec::new();
        log_data(&mut out);
        out[KEY_LEN_AT..KEY_LEN_AT + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(RecordView::parse(&out).is_err());
    }

    #[test]
    fn a_short_record_reads_as_the_record_it_shortens() {
        let mut out = Vec::new();
        sample(&mut out);
        let long = RecordView::parse(&out).unwrap();
        let short = shortened(&long).unwrap();
        assert_eq!(short.len(), align8(SHORT_RECORD_HEADER_BYTES + 3 + 6));
        let r = RecordView::parse(&short).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.kind, r.key, r.value, r.seq, r.keyspace, r.prev),
            (
                RecordKind::Put,
                &b"key"[..],
                &b"value!"[..],
                77,
                3,
                Location::NONE
            )
        );
        assert_eq!(r.encoded_len, short.len());
        assert!(r.short && !long.short);
        assert!(shortened(&r).is_none(), "a short record is copied as it is");
        for i in 0..SHORT_RECORD_HEADER_BYTES + 9 {
            let mut bad = short.clone();
            bad[i] ^= 0x40;
            if let Ok(r) = RecordView::parse(&bad) {
                assert!(!r.checksum_ok(), "flip at {i} went unnoticed");
            }
        }
    }

    #[test]
    fn a_short_put_may_hold_its_value_compressed_and_a_short_delete_may_not() {
        let mut out = Vec::new();
        sample(&mut out);
        let long = RecordView::parse(&out).unwrap();
        let mut short = Vec::new();
        append_short(&long, ValueEncoding::Compressed, b"stored", &mut short);
        let r = RecordView::parse(&short).unwrap();
        assert!(r.checksum_ok());
        assert_eq!(
            (r.value_encoding, r.value, r.key),
            (ValueEncoding::Compressed, &b"stored"[..], &b"key"[..])
        );
        assert_eq!(short.len(), short_len(3, 6));
        let mut delete = short.clone();
        delete[KIND_AT] = SHORT_FLAG | RecordKind::Delete.code();
        assert_eq!(
            RecordView::parse(&delete).unwrap_err(),
            RecordDamage::UnknownValueEncoding(1)
        );
        let mut unknown = short.clone();
        unknown[KIND_AT + 1] = 2;
        assert_eq!(
            RecordView::parse(&unknown).unwrap_err(),
            RecordDamage::UnknownValueEncoding(2)
        );
    }

    #[test]
    fn merges_and_long_keys_keep_the_long_form() {
        let mut out = Vec::new();
        encode_into(
            &RecordFields {
                kind: RecordKind::Merge,
                merge_state: MergeState::Resolved,
                keyspace: 1,
                seq: 9,
                prev: Location::NONE,
                key: b"k",
                operand: b"op",
                value: b"v",
            },
            &mut out,
        );
        assert!(shortened(&RecordView::parse(&out).unwrap()).is_none());
        let key = vec![7u8; 70_000];
        let mut out = Vec::new();
        encode_into(
            &RecordFields {
                kind: RecordKind::Put,
                merge_state: MergeState::Resolved,
                keyspace: 1,
                seq: 9,
                prev: Location::NONE,
                key: &key,
                operand: b"",
                value: b"v",
            },
            &mut out,
        );
        assert!(shortened(&RecordView::parse(&out).unwrap()).is_none());
    }

    #[test]
    fn huge_lengths_are_errors_not_panics() {
        let mut out = Vec::new();
        sample(&mut out);
        out[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(RecordView::parse(&out).is_err());
    }
}
