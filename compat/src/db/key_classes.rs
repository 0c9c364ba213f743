//! Keys a column family's comparator calls equal, within one batch.
//!
//! To RocksDB, keys its comparator calls equal are one key: a put of
//! `"user"` overwrites `"User"` under a case-insensitive comparator, and
//! the key then reads back as `"user"`. The engine stores byte keys, so a
//! write to such a family keeps at most one form (byte string) of each
//! class visible: when the family's key set holds other forms of the key
//! written, the write deletes them in the same batch (holding the write
//! gate exclusively, so that no other writer adds a form meanwhile).
//!
//! A merge must also carry the class's value over to its own form, as
//! RocksDB merges into the class's value and reports the merge's key.
//! [`BatchClasses`] logs what the batch wrote so far, so that a merge that
//! meets another form rebuilds the class under its own: the base (a put of
//! the batch, or the value the database held before the batch, read from
//! the engine) and the merge operands the batch added since.

use std::borrow::Cow;
use std::sync::Arc;

use alexdb_engine::{Db, KeyspaceId, WriteBatch};

use crate::Error;
use crate::db::errors::IntoRocks;
use crate::ordered_keys::OrderedKeys;
use crate::write_batch::BatchOp;

/// What an op of a batch did to its key.
#[derive(Clone, Copy)]
enum Written<'a> {
    /// Put this value.
    Put(&'a [u8]),
    /// Deleted it.
    Delete,
    /// Merged this operand into it.
    Merge(&'a [u8]),
    /// Deleted the keys from it (the entry's key) up to this end, in the
    /// comparator's order.
    DeleteRange(&'a [u8]),
}

/// A batch's writes to column families with a comparator, as far as they
/// were translated.
#[derive(Default)]
pub(crate) struct BatchClasses<'a> {
    /// Each write's keyspace, key and what it did, in batch order.
    log: Vec<(KeyspaceId, Cow<'a, [u8]>, Written<'a>)>,
    /// Ops to translate bytewise before the op being translated.
    pending: Vec<BatchOp<'a>>,
    /// The forms deleted because another form of their class was written,
    /// with their sets.
    retired: Vec<(Arc<OrderedKeys>, Vec<Vec<u8>>)>,
}

impl<'a> BatchClasses<'a> {
    /// Logs what `op` (a put, merge, delete or range delete) wrote in `ks`.
    pub(crate) fn log(&mut self, ks: KeyspaceId, op: &BatchOp<'a>) {
        let (key, written) = match *op {
            BatchOp::Put { key, value, .. } => (key, Written::Put(value)),
            BatchOp::Merge { key, value, .. } => (key, Written::Merge(value)),
            BatchOp::Delete { key, .. } | BatchOp::SingleDelete { key, .. } => {
                (key, Written::Delete)
            }
            BatchOp::DeleteRange { begin, end, .. } => (begin, Written::DeleteRange(end)),
            BatchOp::LogData(_) | BatchOp::Noop => return,
        };
        self.log.push((ks, Cow::Borrowed(key), written));
    }

    /// The ops to translate (bytewise) before the current one, taken.
    pub(crate) fn take_pending(&mut self) -> Vec<BatchOp<'a>> {
        std::mem::take(&mut self.pending)
    }

    /// Notes that `aliases` of `keys` were deleted by this batch.
    pub(crate) fn retire(&mut self, keys: &Arc<OrderedKeys>, aliases: Vec<Vec<u8>>) {
        self.retired.push((Arc::clone(keys), aliases));
    }

    /// Drops the retired forms that no view can see from their sets. The
    /// caller holds the write gate exclusively and has written the batch.
    pub(crate) fn drop_retired(&self, engine: &Db) -> Result<(), Error> {
        for (keys, forms) in &self.retired {
            keys.retire_forms(engine, forms)?;
        }
        Ok(())
    }

    /// Before a merge into `key` (of column family `cf`, set `keys`) whose
    /// class holds the other forms `aliases`: rebuilds the class's value
    /// under `key` unless the batch left it there already. A base the
    /// database held before the batch is put into `out` as stored; a put
    /// of the batch and the batch's operands since go to the pending ops.
    /// Scans the batch's log back to the class's last put or delete (a
    /// batch of many such merges pays for each: they are rare).
    pub(crate) fn rebuild_for_merge(
        &mut self,
        keys: &OrderedKeys,
        engine: &Db,
        cf: u32,
        key: &'a [u8],
        aliases: &[Vec<u8>],
        out: &mut WriteBatch,
    ) -> Result<(), Error> {
        let ks = keys.keyspace();
        let order = keys.comparator();
        let touches_class = |k: &[u8], written: &Written<'_>| match *written {
            Written::DeleteRange(end) => {
                order.compare_user_keys(k, key).is_le() && order.compare_user_keys(key, end).is_lt()
            }
            _ => order.compare_user_keys(k, key).is_eq(),
        };
        let mut class = self
            .log
            .iter()
            .rev()
            .filter(|(at, k, written)| *at == ks && touches_class(k, written));
        let mut operands = Vec::new();
        let mut base = None;
        let mut last_form = None;
        for (_, form, written) in class.by_ref() {
            let ends_class = match *written {
                // The class is gone from here down, whatever its form.
                Written::DeleteRange(_) => {
                    base = Some(None);
                    break;
                }
                Written::Merge(operand) => {
                    operands.push(operand);
                    false
                }
                Written::Put(value) => {
                    base = Some(Some(value));
                    true
                }
                Written::Delete => {
                    base = Some(None);
                    true
                }
            };
            last_form.get_or_insert(form);
            if ends_class {
                break;
            }
        }
        if last_form.is_some_and(|form| form.as_ref() == key) {
            return Ok(());
        }
        match base {
            Some(Some(value)) => self.pending.push(BatchOp::Put { cf, key, value }),
            Some(None) => {}
            None => put_value_before(engine, ks, key, aliases, out)?,
        }
        self.pending
            .extend(
                operands
                    .into_iter()
                    .rev()
                    .map(|value| BatchOp::Merge { cf, key, value }),
            );
        Ok(())
    }
}

/// Puts under `key` the value its class held before the batch under one
/// of `aliases` (at most one form holds one), as stored; nothing if `key`
/// held it.
fn put_value_before(
    engine: &Db,
    ks: KeyspaceId,
    key: &[u8],
    aliases: &[Vec<u8>],
    out: &mut WriteBatch,
) -> Result<(), Error> {
    let forms = std::iter::once(key).chain(aliases.iter().map(Vec::as_slice));
    for form in forms {
        if let Some(value) = engine.get(ks, form).rocks()? {
            if form != key {
                out.put(ks, key, &value);
            }
            return Ok(());
        }
    }
    Ok(())
}
