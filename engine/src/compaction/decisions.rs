//! What one compaction decides: the records it copies and why, the
//! tombstones it drops, the version-chain splices it makes.

use std::sync::Arc;

use crate::db::keyspace::Keyspace;
use crate::format::compressed_value::declared_len;
use crate::format::location::Location;
use crate::format::record::{RecordKind, RecordView, ValueEncoding, short_len, shortened_len};
use crate::mvcc::Relocation;
use crate::segment::Segment;

use super::filtering::Filtering;
use super::held::Holds;

/// Why a record is copied.
#[derive(Clone, Copy)]
pub(super) enum Reason {
    /// It is its key's newest version.
    Head,
    /// A snapshot older than this sequence number can see it.
    Snapshot(u64),
    /// A range tombstone that must stay (see `decide_range_tombstones`).
    RangeTombstone,
}

/// A record to copy. Holds only what deciding, sorting and writing it
/// need (the record's bytes are in its input): a compaction of a 128 MiB
/// run keeps about a million of these in memory at once.
pub(super) struct Copy<'a> {
    pub(super) ks: Arc<Keyspace>,
    pub(super) old: Location,
    pub(super) key: &'a [u8],
    pub(super) seq: u64,
    pub(super) keyspace: u32,
    /// The record's bytes in its input.
    pub(super) raw: &'a [u8],
    /// The input segment it is read from (its values may be compressed
    /// with that segment's dictionary).
    pub(super) input: &'a Segment,
    /// Its length in the short form with its value as written (see
    /// [`shorten`]; compressed, it is no longer); 0 if it has none.
    pub(super) short_len: u32,
    /// Whether it has no previous version.
    pub(super) first_version: bool,
    /// Whether it is a delete (a compaction filter may have made it one).
    pub(super) tombstone: bool,
    /// Whether the output holds it in the short form, encoded as its frame
    /// is written.
    pub(super) short: bool,
    pub(super) reason: Reason,
    pub(super) new: Location,
}

impl<'a> Copy<'a> {
    /// Makes this copy write `raw` instead, a record a compaction filter
    /// rewrote (same key, sequence number and previous version).
    pub(super) fn rewritten_as(&mut self, raw: &'a [u8]) {
        let record = RecordView::parse(raw).expect("a record just encoded parses");
        self.raw = raw;
        self.short_len = short_len_of(&record)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        self.tombstone = record.kind == RecordKind::Delete;
    }

    /// Its length in the output.
    pub(super) fn out_len(&self) -> usize {
        match self.short {
            true => self.short_len as usize,
            false => self.raw.len(),
        }
    }
}

/// A tombstone to drop (or a put a compaction filter removed): nothing
/// older than it survives anywhere.
pub(super) struct DroppedTombstone<'a> {
    pub(super) ks: Arc<Keyspace>,
    pub(super) old: Location,
    pub(super) key: &'a [u8],
}

/// What one compaction keeps, drops and splices.
#[derive(Default)]
pub(super) struct Decisions<'a> {
    pub(super) copies: Vec<Copy<'a>>,
    pub(super) drops: Vec<DroppedTombstone<'a>>,
    /// Range tombstones met in the inputs, decided after the point keys.
    pub(super) ranges: Vec<Copy<'a>>,
    /// Range tombstones dropped: their keyspace and sequence number.
    pub(super) range_drops: Vec<(Arc<Keyspace>, u64)>,
    /// Chain splices: a dropped version's location → the next version a
    /// snapshot may need (or `NONE`).
    pub(super) splices: Vec<(Location, Relocation)>,
    /// A range delete kept only for the survivors (see [`Rewritten`]).
    pub(super) held_range_delete: bool,
    /// The point deletes copied, by what keeps them (see [`Rewritten`]).
    pub(super) holds: Holds,
    /// The compaction filters at work, and the records they rewrote.
    pub(super) filtering: Filtering<'a>,
}

/// The length of `record` in the short form with its value as written: a
/// record in the long form that may be shortened, or one short already
/// (compaction writes it again, to compress its value or to decode it).
fn short_len_of(record: &RecordView<'_>) -> Option<usize> {
    if !record.short {
        return shortened_len(record);
    }
    let value_len = match record.value_encoding {
        ValueEncoding::Plain => record.value.len(),
        // Damage here is reported when the value is decoded.
        ValueEncoding::Compressed => declared_len(record.value).unwrap_or(record.value.len()),
    };
    Some(short_len(record.key.len(), value_len))
}

/// The copy of `record`, at `old` in `segment`, kept for `reason`.
pub(super) fn copy_of<'a>(
    ks: &Arc<Keyspace>,
    segment: &'a Segment,
    old: Location,
    record: RecordView<'a>,
    reason: Reason,
) -> Copy<'a> {
    let at = old.offset() as usize;
    Copy {
        ks: ks.clone(),
        old,
        key: record.key,
        seq: record.seq,
        keyspace: record.keyspace,
        raw: &segment.bytes()[at..at + record.encoded_len],
        input: segment,
        short_len: short_len_of(&record)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        first_version: record.prev == Location::NONE,
        tombstone: record.kind == RecordKind::Delete,
        short: false,
        reason,
        new: Location::NONE,
    }
}
