//! Merge stacks a compaction copies as they are, because their keyspace
//! has no merge function to fold them with.
//!
//! Such a stack is not lost and does not stop the pass: a later open may
//! set the function again (RocksDB, likewise, keeps operands it cannot
//! merge). The rule: the stack is copied whole — its top, the operands
//! under it and its base — into the one output, each record right after
//! the one above it and all in one frame, and the `prev` of every record
//! that names a record of the stack is relinked, as it is written, to the
//! copy written right after it. So the stack lies in one segment, as the
//! format requires (FORMAT.md, "merge" under Records), and folds to the
//! value it had.
//!
//! The layout puts them in that order anyway: one key's copies are sorted
//! newest first, and a stack's records are consecutive versions of its key.
//! [`Decisions::stacked`] keeps a record from being copied twice when a
//! snapshot sees it too.
//!
//! The records under the top count as dead bytes in the output, as the
//! writer and recovery count every version a newer one replaced, and are
//! booked as held by the output itself (see [`super::held`]): rewriting it
//! would copy them again, so the planner does not weigh them as reclaimable.

use std::sync::Arc;

use crate::db::keyspace::Keyspace;
use crate::error::{Error, Result};
use crate::format::location::Location;
use crate::format::record::{MergeState, RecordView};
use crate::mvcc::merge_stack;
use crate::segment::Segment;

use super::decisions::{Decisions, Reason, copy_of};

/// Pushes the copies of the stack whose top is `top`, at `old` in
/// `segment`, kept for `reason`: the top, then the records under it. Their
/// checksums are verified first, as folding them would: a relinked record
/// gets a new one, which must not cover damage.
pub(super) fn push_stack<'a>(
    ks: &Arc<Keyspace>,
    segment: &'a Segment,
    old: Location,
    top: RecordView<'a>,
    reason: Reason,
    out: &mut Decisions<'a>,
) -> Result<()> {
    if !top.checksum_ok() {
        let why = "record checksum mismatch (a merge stack's top)";
        return Err(Error::corruption(segment.path(), old.offset(), why));
    }
    let under = merge_stack::under_top(segment, &top, true)?;
    let mut copy = copy_of(ks, segment, old, top, reason);
    copy.stacked = relinks(&top);
    out.stacked.push(old);
    out.copies.push(copy);
    for (offset, record) in under {
        let at = Location::new(segment.id(), offset, false);
        let mut copy = copy_of(ks, segment, at, record, Reason::InStack);
        copy.stacked = relinks(&record);
        // Written as it is, so that what is booked is what is written.
        copy.short_len = 0;
        out.holds.add_stacked(copy.raw.len() as u64);
        out.stacked.push(at);
        out.copies.push(copy);
    }
    Ok(())
}

/// Whether `record`'s `prev` names a record of its own stack: an operand
/// over a deeper operand or over a base.
fn relinks(record: &RecordView<'_>) -> bool {
    matches!(record.merge_state, MergeState::Operand(s) if s.depth > 1 || s.over_base)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::compaction::compact_while_needed;
    use crate::compaction::rewrite::tests::seal_active;
    use crate::db::keyspace::KeyspaceId;
    use crate::{Db, MergeFunction, Options, WriteOptions};

    fn append() -> Arc<dyn MergeFunction> {
        Arc::new(|_: &[u8], old: Option<&[u8]>, operand: &[u8]| {
            Some([old.unwrap_or_default(), operand].concat())
        })
    }

    /// Keys each with a stack of ten 200-byte operands over a 256-byte
    /// put, in a sealed log segment of a keyspace that has no merge
    /// function now; their values.
    fn stacks_without_function(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        db.set_merge_function(ks, Some(append())).unwrap();
        let mut values = Vec::new();
        for k in 0..40u32 {
            let mut value = vec![b'_'; 256];
            db.put(ks, &k.to_be_bytes(), &value, &w).unwrap();
            for c in 0..10u8 {
                db.merge(ks, &k.to_be_bytes(), &[c; 200], &w).unwrap();
                value.extend_from_slice(&[c; 200]);
            }
            values.push((k.to_be_bytes().to_vec(), value));
        }
        db.set_merge_function(ks, None).unwrap();
        seal_active(&db.shared());
        values
    }

    /// The records under the tops count dead, as replaced versions, yet a
    /// pass rewrites the output that holds them once, not on every pass:
    /// it would only copy them again.
    #[test]
    fn an_output_of_kept_stacks_is_not_rewritten_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let values = stacks_without_function(&db);
        let shared = db.shared();
        assert!(compact_while_needed(&shared, 0.5).unwrap() >= 1);
        let stats = db.stats();
        assert!(stats.dead_bytes * 10 > stats.data_bytes * 8, "{stats:?}");
        for _ in 0..3 {
            assert_eq!(compact_while_needed(&shared, 0.5).unwrap(), 0);
        }
        db.set_merge_function(KeyspaceId(0), Some(append()))
            .unwrap();
        for (key, value) in &values {
            let got = db.get_copied(KeyspaceId(0), key).unwrap();
            assert_eq!(got.as_ref(), Some(value));
        }
        db.verify().unwrap();
    }
}
