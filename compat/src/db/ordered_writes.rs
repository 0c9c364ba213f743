//! What writes do for column families with a custom comparator: hold the
//! write gate while they add their keys to the family's [`OrderedKeys`]
//! and make the write visible, count the keys range deletes cover (the
//! engine applies them in the comparator's order), and sweep deleted keys
//! once enough have piled up.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use alexdb_engine::{Db, KeyspaceId, WriteBatch};

use super::core::FamilyInfo;
use crate::Error;
use crate::db::key_classes::BatchClasses;
use crate::ordered_keys::OrderedKeys;
use crate::write_batch::BatchOp;

/// A writer's hold of the write gate.
pub(crate) enum GateHold<'a> {
    /// Held by a write that adds keys or deletes a range: writes proceed
    /// side by side.
    Shared(#[expect(dead_code, reason = "held for its drop")] RwLockReadGuard<'a, ()>),
    /// Held by a write that meets another form of its key's class (and by
    /// a sweep): nothing else writes to such a column family meanwhile.
    Exclusive(#[expect(dead_code, reason = "held for its drop")] RwLockWriteGuard<'a, ()>),
}

/// How much of the write gate a batch needs, weakest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GateNeed {
    /// It writes no column family with a comparator.
    None,
    /// It adds keys to such column families, or deletes ranges of them.
    Shared,
    /// It writes a key whose class holds other forms (see [`translate`]).
    Exclusive,
}

/// What of the gate `ops` need. Decided under the column families' lock,
/// which must be let go before the gate is taken (writers take the gate
/// first, then that lock).
pub(crate) fn need_of(ops: &[BatchOp<'_>], families: &BTreeMap<u32, FamilyInfo>) -> GateNeed {
    let ordered = |op: &&BatchOp<'_>| {
        op.cf()
            .and_then(|cf| families.get(&cf))
            .is_some_and(|f| f.ordered.is_some())
    };
    match ops.iter().any(|op| ordered(&op)) {
        true => GateNeed::Shared,
        false => GateNeed::None,
    }
}

/// Takes `gate` as `need` says.
pub(crate) fn hold(gate: &RwLock<()>, need: GateNeed) -> Option<GateHold<'_>> {
    match need {
        GateNeed::None => None,
        GateNeed::Shared => Some(GateHold::Shared(
            gate.read().unwrap_or_else(PoisonError::into_inner),
        )),
        GateNeed::Exclusive => Some(GateHold::Exclusive(
            gate.write().unwrap_or_else(PoisonError::into_inner),
        )),
    }
}

/// What [`translate`] made of an op.
pub(crate) enum Translated<'a> {
    /// Written in full.
    Done,
    /// To be written by the bytewise translation (after the batch's
    /// pending ops, see [`BatchClasses`]).
    Bytewise(BatchOp<'a>),
    /// It meets another form of its key's class, which needs the write
    /// gate held exclusively: nothing of the batch may be written.
    NeedsExclusive,
}

/// Translates `op` of a column family with a comparator (`keys`) into
/// `out`, holding `held` of the write gate. A put, merge or delete adds its
/// key to the set first; if the set holds other forms of the key's class
/// (keys the comparator calls equal), the write deletes them, so that one
/// form stays visible (`key_classes.rs`), which needs the gate held
/// exclusively. A range delete is the engine's, in the keyspace's order
/// (the comparator's); it counts the keys it covers for the sweep.
pub(crate) fn translate<'a>(
    op: BatchOp<'a>,
    keys: &Arc<OrderedKeys>,
    engine: &Db,
    held: GateNeed,
    classes: &mut BatchClasses<'a>,
    out: &mut WriteBatch,
) -> Result<Translated<'a>, Error> {
    let ks: KeyspaceId = keys.keyspace();
    let key = match op {
        BatchOp::Put { key, .. } | BatchOp::Merge { key, .. } => key,
        BatchOp::Delete { key, .. } | BatchOp::SingleDelete { key, .. } => {
            keys.count_deletes(1);
            key
        }
        BatchOp::DeleteRange { begin, end, .. } => {
            keys.count_deletes(keys.count_in(begin, end)?);
            out.delete_range(ks, begin, end);
            classes.log(ks, &op);
            return Ok(Translated::Done);
        }
        BatchOp::LogData(_) | BatchOp::Noop => return Ok(Translated::Bytewise(op)),
    };
    let aliases = keys.add(key);
    if aliases.is_empty() {
        classes.log(ks, &op);
        return Ok(Translated::Bytewise(op));
    }
    if held != GateNeed::Exclusive {
        return Ok(Translated::NeedsExclusive);
    }
    if let BatchOp::Merge { cf, key, .. } = op {
        classes.rebuild_for_merge(keys, engine, cf, key, &aliases, out)?;
    }
    for alias in &aliases {
        out.delete(ks, alias);
    }
    keys.count_deletes(aliases.len() as u64);
    classes.log(ks, &op);
    classes.retire(keys, aliases);
    Ok(Translated::Bytewise(op))
}

/// The sets of the column families `ops` deleted from whose sweep is due.
pub(crate) fn due_sweeps(
    engine: &Db,
    ops: &[BatchOp<'_>],
    families: &BTreeMap<u32, FamilyInfo>,
) -> Vec<Arc<OrderedKeys>> {
    let mut due: Vec<Arc<OrderedKeys>> = Vec::new();
    for op in ops {
        let deletes = matches!(
            op,
            BatchOp::Delete { .. } | BatchOp::SingleDelete { .. } | BatchOp::DeleteRange { .. }
        );
        let keys = op
            .cf()
            .and_then(|cf| families.get(&cf))
            .and_then(|f| f.ordered.as_ref());
        if let (true, Some(keys)) = (deletes, keys)
            && !due.iter().any(|k| Arc::ptr_eq(k, keys))
            && keys.sweep_due(engine)
        {
            due.push(Arc::clone(keys));
        }
    }
    due
}

/// Sweeps `due`, without the column families' lock (a sweep takes the
/// gate). A failed sweep leaves the keys for the next one.
pub(crate) fn sweep(engine: &Db, gate: &RwLock<()>, due: Vec<Arc<OrderedKeys>>) {
    for keys in due {
        let _ = keys.sweep(engine, gate);
    }
}
