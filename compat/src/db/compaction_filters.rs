//! Running the column families' compaction filters: on `compact_range`,
//! and in the background (`background_filters.rs`).
//!
//! RocksDB calls a compaction filter on each entry that compaction rewrites.
//! AlexDB's compaction rewrites whole segments below the compat layer, so
//! `compact_range` first passes every live entry of each column family that
//! has a filter through it, reading at one snapshot, and applies the
//! decisions (`Remove`: a delete, `Change`: a put of the new value) in
//! batches of up to [`CHUNK_ENTRIES`] keys, each written only if none of its
//! keys was written since the snapshot. A key written meanwhile keeps its
//! newer value, as a RocksDB compaction never touches the newer versions
//! above it: the batch is then applied key by key, skipping that key. The
//! filter sees level 0. Unlike RocksDB, those changes take sequence numbers
//! (as writes do) and show in `get_updates_since`.
//!
//! A column family with a compaction filter factory and no filter gets a
//! fresh filter from the factory for each pass; the pass covers all its
//! data, so the factory is told a full compaction, manual when
//! `compact_range` asked for it.
//!
//! In a database opened with a TTL (see `ttl.rs`), the same pass drops the
//! entries of each column family with a TTL that expired; the filter sees
//! values without their write time, and a changed value gets a new one.

use std::sync::PoisonError;
use std::time::Duration;

use alexdb_engine::{KeyRange, KeyspaceId, WatchedKey};

use super::core::Core;
use super::errors::{IntoRocks, from_engine_ref};
use super::ttl;
use crate::compaction_filter::Decision;
use crate::compaction_filter_factory::{CompactionFilterContext, EntryFilter};
use crate::options::{SharedCompactionFilter, SharedFilterFactory};
use crate::{Error, ErrorKind, WriteBatch, WriteOptions};

/// What the pass does to one column family.
struct FamilyPass {
    cf: u32,
    filter: Option<SharedCompactionFilter>,
    factory: Option<SharedFilterFactory>,
    ttl: Option<Duration>,
    context: CompactionFilterContext,
}

/// Which pass runs: `compact_range`'s, or one the background thread
/// starts after enough writes (see `background_filters.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassKind {
    /// Asked for by `compact_range`: every filtered column family.
    Manual,
    /// Started in the background: column families whose automatic
    /// compactions are enabled.
    Automatic,
}

impl PassKind {
    /// What a factory is told: the pass covers all data; the client asked
    /// for it or not.
    fn context(self) -> CompactionFilterContext {
        CompactionFilterContext {
            is_full_compaction: true,
            is_manual_compaction: self == PassKind::Manual,
        }
    }
}

impl Core {
    /// Passes every live entry of each filtered column family through its
    /// filter (and its TTL) and applies the decisions; stops early, with
    /// what it applied so far kept, once `stopped` says so.
    pub(crate) fn run_compaction_filters(
        &self,
        kind: PassKind,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(), Error> {
        let passes: Vec<FamilyPass> = self
            .families()
            .iter()
            .filter(|(_, f)| f.is_filtered() || f.ttl.is_some())
            .filter(|(_, f)| kind == PassKind::Manual || !f.auto_compactions_disabled)
            .map(|(id, f)| FamilyPass {
                cf: *id,
                filter: f.compaction_filter.clone(),
                factory: f.compaction_filter_factory.clone(),
                ttl: f.ttl,
                context: kind.context(),
            })
            .collect();
        for pass in passes {
            self.filter_family(&pass, stopped)?;
        }
        Ok(())
    }

    /// Whether a column family has a compaction filter, a factory or a TTL
    /// (whose passes the background thread runs).
    pub(crate) fn has_filtered_families(&self) -> bool {
        self.families()
            .values()
            .any(|f| f.is_filtered() || f.ttl.is_some())
    }

    /// Applies the decisions on column family `pass.cf`: those of its
    /// filter, else those of a filter its factory makes for the pass.
    fn filter_family(&self, pass: &FamilyPass, stopped: &dyn Fn() -> bool) -> Result<(), Error> {
        if let Some(filter) = &pass.filter {
            let mut filter = filter.lock().unwrap_or_else(PoisonError::into_inner);
            return self.decide_family(pass, Some(&mut **filter), stopped);
        }
        let Some(factory) = &pass.factory else {
            return self.decide_family(pass, None, stopped);
        };
        let mut factory = factory.lock().unwrap_or_else(PoisonError::into_inner);
        let mut outcome = Ok(());
        factory.with_filter(pass.context, &mut |filter| {
            outcome = self.decide_family(pass, Some(filter), stopped);
        });
        outcome
    }

    /// Applies what expiry (with a TTL) and `filter` decide for each live
    /// entry of column family `pass.cf`, read at one snapshot.
    fn decide_family(
        &self,
        pass: &FamilyPass,
        mut filter: Option<&mut EntryFilter<'_>>,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(), Error> {
        let (trim, now) = (self.value_trim(), ttl::now_seconds());
        let mut cursor = self
            .engine
            .cursor(KeyspaceId(pass.cf), KeyRange::default())
            .rocks()?;
        let mut decisions = Decisions::new(pass.cf, cursor.seq());
        cursor.seek_to_first();
        let mut seen = 0usize;
        while let Some(entry) = cursor.entry() {
            seen += 1;
            if seen.is_multiple_of(CHUNK_ENTRIES) && stopped() {
                return decisions.apply(self);
            }
            let (key, stored) = (entry.key(), entry.value());
            if pass.ttl.is_some_and(|t| ttl::expired(stored, t, now)) {
                decisions.push(key, None);
            } else if let Some(filter) = filter.as_mut() {
                let value = &stored[..stored.len().saturating_sub(trim)];
                match filter(0, key, value) {
                    Decision::Keep => {}
                    Decision::Remove => decisions.push(key, None),
                    Decision::Change(value) => decisions.push(key, Some(value.to_vec())),
                }
            }
            if decisions.is_full() {
                decisions.apply(self)?;
            }
            cursor.forward();
        }
        cursor.status().map_err(from_engine_ref)?;
        decisions.apply(self)
    }
}

/// Keys whose decisions are applied together (a batch of at most this
/// many keys, so a pass over any number of entries holds little at once);
/// also how many entries a pass reads between two looks at whether it
/// must stop.
const CHUNK_ENTRIES: usize = 1024;

/// The pending decisions of one column family's pass: each key with its new
/// value (`None`: removed), decided on what the pass's snapshot read.
struct Decisions {
    cf: u32,
    /// The sequence number the pass reads at.
    since_seq: u64,
    entries: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Decisions {
    fn new(cf: u32, since_seq: u64) -> Self {
        Self {
            cf,
            since_seq,
            entries: Vec::new(),
        }
    }

    fn push(&mut self, key: &[u8], value: Option<Vec<u8>>) {
        self.entries.push((key.to_vec(), value));
    }

    fn is_full(&self) -> bool {
        self.entries.len() >= CHUNK_ENTRIES
    }

    /// Writes the pending decisions as one batch unless one of their keys
    /// was written since the snapshot; then key by key, skipping each such
    /// key (its newer value stays).
    fn apply(&mut self, core: &Core) -> Result<(), Error> {
        let all = std::mem::take(&mut self.entries);
        if all.is_empty() {
            return Ok(());
        }
        match self.write(core, &all) {
            Err(e) if e.kind() == ErrorKind::Busy => {}
            other => return other,
        }
        for one in all.chunks(1) {
            match self.write(core, one) {
                Err(e) if e.kind() == ErrorKind::Busy => {}
                other => other?,
            }
        }
        Ok(())
    }

    /// Writes `entries` in one batch if none of their keys changed.
    fn write(&self, core: &Core, entries: &[(Vec<u8>, Option<Vec<u8>>)]) -> Result<(), Error> {
        let mut batch = WriteBatch::default();
        for (key, value) in entries {
            match value {
                Some(value) => batch.put_in(self.cf, key, value),
                None => batch.delete_in(self.cf, key),
            }
        }
        let watched: Vec<WatchedKey<'_>> = entries
            .iter()
            .map(|(key, _)| WatchedKey {
                keyspace: KeyspaceId(self.cf),
                key,
                since_seq: self.since_seq,
            })
            .collect();
        core.write_unless_changed(&batch, &WriteOptions::default(), &watched)
    }
}
