//! Values in a compaction output (FORMAT.md, "Compressed values"): the
//! output's dictionary, sampled from the values it will hold before any is
//! written, and each short record written with its value compressed with
//! it, decoded, or as it was.

use crate::format::byte_sink::ByteSink;
use crate::io::transient::{TransientVec, transient_vec};
use std::sync::Arc;

use crate::error::Result;
use crate::format::compressed_value::ValueDictionary;
use crate::format::record::{RecordKind, RecordView, ValueEncoding, append_short};
use crate::options::Compression;

use super::decisions::Copy;

/// The size of an output's dictionary: measured on 400-byte JSON values,
/// 4 KiB compresses them 3.7x (16 KiB: 3.9x, at 2.6 times the cost a value).
const DICTIONARY_BYTES: usize = 4 << 10;
/// The most of one value a dictionary takes.
const SAMPLE_BYTES: usize = 1 << 10;
/// Values picked (evenly spaced) to fill the dictionary, at most.
const MAX_SAMPLES: usize = 256;
/// Values compressed to judge whether the output's values compress.
const PROBES: usize = 16;

/// How an output's short records are written.
pub(super) struct ValueEncoder {
    /// `None`: no value is compressed (no keyspace of the output asks for
    /// it, or its values do not compress).
    dictionary: Option<Arc<ValueDictionary>>,
    /// The input whose dictionary the output takes over, if it does: its
    /// compressed values are copied as they are.
    inherited_from: Option<u32>,
}

impl ValueEncoder {
    /// The encoder for an output holding `copies` (decided and in key
    /// order). Its dictionary is that of the input contributing the most
    /// values that may be compressed, if the input has one and it still
    /// pays (so the bulk of a merge of runs, the largest run, is copied
    /// without decoding and encoding again each time runs merge); else one
    /// sampled from those values, if some of them, compressed with it,
    /// shrink by an eighth or more.
    pub(super) fn for_copies(copies: &[Copy<'_>]) -> Result<Self> {
        let mut eligible: TransientVec<&Copy<'_>> = transient_vec();
        eligible.extend(copies.iter().filter(|c| may_compress(c)));
        if eligible.is_empty() {
            return Ok(ValueEncoder::plain());
        }
        if let Some((input, dictionary)) = largest_input_dictionary(&eligible)
            && compresses(&dictionary, &eligible)?
        {
            return Ok(ValueEncoder {
                dictionary: Some(dictionary),
                inherited_from: Some(input),
            });
        }
        let dictionary = ValueDictionary::new(sample(&eligible)?);
        match compresses(&dictionary, &eligible)? {
            true => Ok(ValueEncoder {
                dictionary: Some(Arc::new(dictionary)),
                inherited_from: None,
            }),
            false => Ok(ValueEncoder::plain()),
        }
    }

    /// An encoder that compresses nothing.
    fn plain() -> Self {
        ValueEncoder {
            dictionary: None,
            inherited_from: None,
        }
    }

    /// The dictionary the output holds, if any.
    pub(super) fn dictionary(&self) -> Option<&ValueDictionary> {
        self.dictionary.as_deref()
    }

    /// Appends `c`, whose output form is short, to `out`: its value
    /// compressed with the dictionary where its keyspace asks for it and
    /// that pays, else as written (decoded, if its input stored it
    /// compressed). A short record kept as it was is copied verbatim.
    pub(super) fn append(
        &self,
        c: &Copy<'_>,
        record: &RecordView<'_>,
        out: &mut impl ByteSink,
    ) -> Result<()> {
        let compress = self
            .dictionary
            .as_ref()
            .filter(|_| record.kind == RecordKind::Put && wants_compression(c));
        let unchanged = match record.value_encoding {
            ValueEncoding::Plain => compress.is_none(),
            ValueEncoding::Compressed => {
                compress.is_some() && self.inherited_from == Some(c.input.id())
            }
        };
        if unchanged && record.short {
            out.extend_from_slice(&c.raw);
            return Ok(());
        }
        let value = c.input.value_of(record)?;
        match compress.and_then(|d| d.compress(&value)) {
            Some(stored) => append_short(record, ValueEncoding::Compressed, &stored, out),
            None => append_short(record, ValueEncoding::Plain, &value, out),
        }
        Ok(())
    }
}

/// Whether the keyspace of `c` asks for compressed values.
fn wants_compression(c: &Copy<'_>) -> bool {
    c.ks.compression() != Compression::None
}

/// Whether `c` is written as a short put whose keyspace asks for
/// compression: a value the dictionary is for.
fn may_compress(c: &Copy<'_>) -> bool {
    c.short && !c.tombstone && wants_compression(c) && is_put(c)
}

fn is_put(c: &Copy<'_>) -> bool {
    RecordView::parse(&c.raw).is_ok_and(|r| r.kind == RecordKind::Put)
}

/// The value of `c` as written.
fn value_of(c: &Copy<'_>) -> Result<Vec<u8>> {
    let record = RecordView::parse(&c.raw).map_err(|damage| {
        let input = c.input.path();
        crate::error::Error::corruption(input, c.old.offset(), damage.to_string())
    })?;
    Ok(c.input.value_of(&record)?.into_owned())
}

/// The dictionary of the input that holds the most of `eligible`, if
/// that input has one (a damaged one counts as none: its values are then
/// decoded, and the damage reported, as they are copied).
fn largest_input_dictionary(eligible: &[&Copy<'_>]) -> Option<(u32, Arc<ValueDictionary>)> {
    let mut counts: Vec<(u32, usize)> = Vec::new();
    for c in eligible {
        match counts.iter_mut().find(|(id, _)| *id == c.input.id()) {
            Some((_, n)) => *n += 1,
            None => counts.push((c.input.id(), 1)),
        }
    }
    let (largest, _) = counts.into_iter().max_by_key(|&(_, n)| n)?;
    let input = eligible.iter().find(|c| c.input.id() == largest)?.input;
    Some((largest, input.dictionary().ok()??))
}

/// Up to [`DICTIONARY_BYTES`] of values picked evenly from `eligible`
/// (at most [`SAMPLE_BYTES`] of each).
fn sample(eligible: &[&Copy<'_>]) -> Result<Vec<u8>> {
    let picks = eligible.len().min(MAX_SAMPLES);
    let mut out = Vec::with_capacity(DICTIONARY_BYTES);
    for k in 0..picks {
        let value = value_of(eligible[k * eligible.len() / picks])?;
        let take = value
            .len()
            .min(SAMPLE_BYTES)
            .min(DICTIONARY_BYTES - out.len());
        out.extend_from_slice(&value[..take]);
        if out.len() == DICTIONARY_BYTES {
            break;
        }
    }
    Ok(out)
}

/// Whether values of `eligible` other than the sampled ones (half-way
/// between picks), compressed with `dictionary`, shrink by an eighth.
fn compresses(dictionary: &ValueDictionary, eligible: &[&Copy<'_>]) -> Result<bool> {
    let probes = eligible.len().min(PROBES);
    let (mut raw, mut stored) = (0usize, 0usize);
    for k in 0..probes {
        let at = (2 * k + 1) * eligible.len() / (2 * probes);
        let value = value_of(eligible[at])?;
        raw += value.len();
        stored += dictionary.compress(&value).map_or(value.len(), |s| s.len());
    }
    Ok(stored <= raw - raw / 8)
}
