//! The keyspaces' compaction filters inside one rewrite (see
//! [`super::filter`] for the rules): which keyspaces have one, the run under
//! way, what it decides about each head the rewrite copies, and the records
//! its decisions rewrite (a put with a changed value, or a delete in place
//! of a removed version), written beside the copies of the inputs' bytes.

use std::ops::Range;
use std::sync::Arc;

use crate::db::keyspace::KeyspaceId;
use crate::db::shared::Shared;
use crate::error::{Error, Result};
use crate::format::record::{MergeState, RecordFields, RecordKind, RecordView, encode_into};
use crate::options::MAX_VALUE_BYTES;
use crate::segment::Segment;

use super::decisions::Copy;
use super::filter::{CompactionFilter, Decision, FilterContext, FilterRun};

/// The filters one rewrite runs, taken when it starts.
pub(super) struct Filters {
    by_keyspace: Vec<(u32, Arc<dyn CompactionFilter>)>,
    /// What the rewrite is (its keyspace is set per run).
    context: FilterContext,
}

impl Filters {
    /// The filters of every keyspace that has one, for a rewrite that is
    /// `full`, `bottommost` and `manual` as [`FilterContext`] says.
    pub(super) fn of(shared: &Shared, full: bool, bottommost: bool, manual: bool) -> Self {
        let by_keyspace = shared
            .keyspaces
            .load()
            .iter()
            .filter_map(|ks| Some((ks.id().0, ks.compaction_filter()?)))
            .collect();
        Filters {
            by_keyspace,
            context: FilterContext {
                keyspace: KeyspaceId(0),
                full,
                bottommost,
                manual,
            },
        }
    }

    /// Runs over the rewrite's keys, started as their keyspaces come.
    pub(super) fn runs(&self) -> Filtering<'_> {
        Filtering {
            filters: Some(self),
            ..Filtering::default()
        }
    }

    /// Starts the run of `keyspace`'s filter, if it has one.
    fn start(&self, keyspace: u32) -> Option<Box<dyn FilterRun + '_>> {
        let (_, filter) = self.by_keyspace.iter().find(|(id, _)| *id == keyspace)?;
        let context = FilterContext {
            keyspace: KeyspaceId(keyspace),
            ..self.context
        };
        Some(filter.start(&context))
    }
}

/// What compaction does with a head the filter was asked about.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Copy it as it is.
    Keep,
    /// Replace it with a delete of the same sequence number.
    Remove,
    /// Copy it with this value.
    Change(Vec<u8>),
}

/// One keyspace's run: its filter (none if the keyspace has none) and the
/// bound of a `RemoveAndSkipUntil` under way.
struct Run<'f> {
    keyspace: u32,
    filter: Option<Box<dyn FilterRun + 'f>>,
    skip_until: Option<Vec<u8>>,
}

impl Run<'_> {
    /// Whether `key` lies in the range a `RemoveAndSkipUntil` skips; ends
    /// the range at the first key past it (keys come in order).
    fn skips(&mut self, key: &[u8]) -> bool {
        match &self.skip_until {
            Some(until) if key < until.as_slice() => true,
            Some(_) => {
                self.skip_until = None;
                false
            }
            None => false,
        }
    }
}

/// The filters at work in one rewrite, and the records they rewrote.
/// Without filters (the default) every verdict is [`Verdict::Keep`].
#[derive(Default)]
pub(super) struct Filtering<'f> {
    filters: Option<&'f Filters>,
    run: Option<Run<'f>>,
    /// The rewritten records, one after another (each 8-aligned).
    records: Vec<u8>,
    /// Each rewritten copy: its index among the copies, and its bytes in
    /// `records`.
    placed: Vec<(usize, Range<usize>)>,
}

impl<'f> Filtering<'f> {
    /// What to do with `key`'s head, `record` in `segment` (an input), in
    /// keyspace `keyspace`: the filter decides about a put, a skipped range
    /// removes a put or a merge, and anything else is kept. Keys must come
    /// in order. Fails if the filter changed the value to one longer than
    /// [`MAX_VALUE_BYTES`], or the value cannot be read.
    pub(super) fn verdict(
        &mut self,
        keyspace: u32,
        key: &[u8],
        record: &RecordView<'_>,
        segment: &Segment,
    ) -> Result<Verdict> {
        let Some(run) = self.run_for(keyspace) else {
            return Ok(Verdict::Keep);
        };
        if run.skips(key) {
            return Ok(match record.kind {
                RecordKind::Put | RecordKind::Merge => Verdict::Remove,
                _ => Verdict::Keep,
            });
        }
        let Some(filter) = run
            .filter
            .as_mut()
            .filter(|_| record.kind == RecordKind::Put)
        else {
            return Ok(Verdict::Keep);
        };
        let value = segment.value_of(record)?;
        match filter.decide(key, &value) {
            Decision::Keep => Ok(Verdict::Keep),
            Decision::Remove => Ok(Verdict::Remove),
            Decision::Change(value) if value.len() > MAX_VALUE_BYTES => {
                Err(too_long(keyspace, &value))
            }
            Decision::Change(value) => Ok(Verdict::Change(value)),
            Decision::RemoveAndSkipUntil(until) if until.as_slice() > key => {
                run.skip_until = Some(until);
                Ok(Verdict::Remove)
            }
            Decision::RemoveAndSkipUntil(_) => Ok(Verdict::Keep),
        }
    }

    /// The run of `keyspace`, started (and the previous one ended) when
    /// its first key comes; `None` if it has no filter.
    fn run_for(&mut self, keyspace: u32) -> Option<&mut Run<'f>> {
        let filters = self.filters?;
        if self.run.as_ref().is_none_or(|r| r.keyspace != keyspace) {
            // The previous run ends before the next starts.
            self.run = None;
            self.run = Some(Run {
                keyspace,
                filter: filters.start(keyspace),
                skip_until: None,
            });
        }
        self.run.as_mut().filter(|r| r.filter.is_some())
    }

    /// Notes that the copy about to be pushed at `index` holds `record`
    /// rewritten as `verdict` says, and gives the rewritten record
    /// (nothing to note for [`Verdict::Keep`]).
    pub(super) fn rewrite(
        &mut self,
        index: usize,
        record: &RecordView<'_>,
        verdict: &Verdict,
    ) -> Option<RecordView<'_>> {
        let (kind, value) = match verdict {
            Verdict::Keep => return None,
            Verdict::Remove => (RecordKind::Delete, &[][..]),
            Verdict::Change(value) => (RecordKind::Put, value.as_slice()),
        };
        let fields = RecordFields {
            kind,
            merge_state: MergeState::Resolved,
            keyspace: record.keyspace,
            seq: record.seq,
            prev: record.prev,
            key: record.key,
            operand: &[],
            value,
        };
        let start = self.records.len();
        encode_into(&fields, &mut self.records);
        self.placed.push((index, start..self.records.len()));
        Some(RecordView::parse(&self.records[start..]).expect("a record just encoded parses"))
    }

    /// Ends the last run; gives the rewritten records and where each goes
    /// (see [`Rewrites::place`]).
    pub(super) fn finish(self) -> Rewrites {
        Rewrites {
            records: self.records,
            placed: self.placed,
        }
    }
}

/// The records a rewrite's filters rewrote, and the copies they replace.
pub(super) struct Rewrites {
    records: Vec<u8>,
    placed: Vec<(usize, Range<usize>)>,
}

impl Rewrites {
    /// Points each rewritten copy of `copies` (in the order they were
    /// decided) at its rewritten record.
    pub(super) fn place<'r>(&'r self, copies: &mut [Copy<'r>]) {
        for (index, range) in &self.placed {
            copies[*index].rewritten_as(&self.records[range.clone()]);
        }
    }
}

/// The error of a filter that changed a value to `value`, too long.
fn too_long(keyspace: u32, value: &[u8]) -> Error {
    Error::InvalidArgument(format!(
        "the compaction filter of keyspace {keyspace} changed a value to {} bytes, over the \
         {MAX_VALUE_BYTES}-byte limit",
        value.len()
    ))
}
