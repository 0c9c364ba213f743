//! What one compaction decides: the records it copies and why, the
//! tombstones it drops, the version-chain splices it makes.

use std::borrow::Cow;
use std::sync::Arc;

use crate::db::keyspace::Keyspace;
use crate::error::{Error, Result};
use crate::format::compressed_value::declared_len;
use crate::format::location::Location;
use crate::format::record::{
    self, MergeState, RecordFields, RecordKind, RecordView, ValueEncoding, short_len, shortened_len,
};
use crate::io::transient::{TransientVec, transient_vec};
use crate::mvcc::{Relocation, merge_stack};
use crate::segment::Segment;
use crate::write::merge::SharedMergeFunction;

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
    /// It lies under the top of a merge stack copied as it is (see
    /// [`super::kept_stacks`]): readers reach it through that top alone.
    InStack,
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
    /// The record's bytes in its input, or (for the top of a merge stack)
    /// the record of the stack's fold that replaces it (see [`folded`]).
    pub(super) raw: Cow<'a, [u8]>,
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
    /// Whether its `prev` is relinked, as it is written, to the copy
    /// written right after it: a merge-stack record copied as it is (see
    /// [`super::kept_stacks`]).
    pub(super) stacked: bool,
    pub(super) reason: Reason,
    pub(super) new: Location,
}

impl<'a> Copy<'a> {
    /// Makes this copy write `raw` instead, a record a compaction filter
    /// rewrote (same key, sequence number and previous version).
    pub(super) fn rewritten_as(&mut self, raw: &'a [u8]) {
        let record = RecordView::parse(raw).expect("a record just encoded parses");
        self.raw = Cow::Borrowed(raw);
        self.short_len = short_len_u32(&record);
        self.tombstone = record.kind == RecordKind::Delete;
    }

    /// Its length in the output.
    pub(super) fn out_len(&self) -> usize {
        self.len_in_form(self.short)
    }

    /// Its length in the output in the short form (`short`) or the long.
    pub(super) fn len_in_form(&self, short: bool) -> usize {
        match short {
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
pub(super) struct Decisions<'a> {
    /// The records copied (millions in a large pass: in blocks of their
    /// own, see `io::transient`).
    pub(super) copies: TransientVec<Copy<'a>>,
    pub(super) drops: Vec<DroppedTombstone<'a>>,
    /// Range tombstones met in the inputs, decided after the point keys.
    pub(super) ranges: Vec<Copy<'a>>,
    /// Range tombstones dropped: their keyspace and sequence number.
    pub(super) range_drops: Vec<(Arc<Keyspace>, u64)>,
    /// Chain splices: a dropped version's location → the next version a
    /// snapshot may need (or `NONE`).
    pub(super) splices: TransientVec<(Location, Relocation)>,
    /// A range delete kept only for the survivors (see [`Rewritten`]).
    pub(super) held_range_delete: bool,
    /// The point deletes copied, by what keeps them (see [`Rewritten`]).
    pub(super) holds: Holds,
    /// The compaction filters at work, and the records they rewrote.
    pub(super) filtering: Filtering<'a>,
    /// Where the merge-stack records copied as they are for the key being
    /// decided lie in the inputs (see [`super::kept_stacks`]).
    pub(super) stacked: Vec<Location>,
}

impl Default for Decisions<'_> {
    fn default() -> Self {
        Decisions {
            copies: transient_vec(),
            drops: Vec::new(),
            ranges: Vec::new(),
            range_drops: Vec::new(),
            splices: transient_vec(),
            held_range_delete: false,
            holds: Holds::default(),
            filtering: Filtering::default(),
            stacked: Vec::new(),
        }
    }
}

/// [`short_len_of`] as a [`Copy`] keeps it: 0 where there is no short
/// form (or it would not fit 32 bits).
pub(super) fn short_len_u32(record: &RecordView<'_>) -> u32 {
    short_len_of(record)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
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
        raw: Cow::Borrowed(&segment.bytes()[at..at + record.encoded_len]),
        input: segment,
        short_len: short_len_u32(&record),
        first_version: record.prev == Location::NONE,
        tombstone: record.kind == RecordKind::Delete,
        short: false,
        stacked: false,
        reason,
        new: Location::NONE,
    }
}

/// Pushes the copy of `record`, a version of a key that a reader sees
/// (its head, or one a snapshot sees), at `old` in `segment`. A merge
/// stack's top is copied as the record of its fold (see [`folded`]); in a
/// keyspace without a merge function, the stack is copied as it is (see
/// [`super::kept_stacks`]).
pub(super) fn push_seen<'a>(
    ks: &Arc<Keyspace>,
    segment: &'a Segment,
    old: Location,
    record: RecordView<'a>,
    reason: Reason,
    out: &mut Decisions<'a>,
) -> Result<()> {
    if !record.merge_state.is_operand() {
        out.copies.push(copy_of(ks, segment, old, record, reason));
        return Ok(());
    }
    let Some(function) = ks.merge_function() else {
        return super::kept_stacks::push_stack(ks, segment, old, record, reason, out);
    };
    let replacement = folded(&function, segment, &record)?;
    let mut copy = copy_of(ks, segment, old, record, reason);
    let view = RecordView::parse(&replacement)
        .map_err(|damage| Error::corruption(segment.path(), old.offset(), damage.to_string()))?;
    copy.short_len = short_len_u32(&view);
    copy.raw = Cow::Owned(replacement);
    out.copies.push(copy);
    Ok(())
}

/// The record that replaces the operand record `top` in an output: a put
/// of the stack's fold with `function` (same key, sequence number and
/// previous version), or, if the function fails on it, a merge that failed.
fn folded(
    function: &SharedMergeFunction,
    segment: &Segment,
    top: &RecordView<'_>,
) -> Result<Vec<u8>> {
    let (state, value) = merge_stack::fold(segment, top, Some(function), true)?;
    let kind = match state {
        MergeState::Resolved => RecordKind::Put,
        _ => RecordKind::Merge,
    };
    let mut out = Vec::with_capacity(record::encoded_len(top.key.len(), value.len()));
    record::encode_into(
        &RecordFields {
            kind,
            merge_state: state,
            keyspace: top.keyspace,
            seq: top.seq,
            prev: top.prev,
            key: top.key,
            operand: &[],
            value: &value,
        },
        &mut out,
    );
    Ok(out)
}
