//! The book of deletes that compaction had to keep, and what keeps them.
//!
//! A compaction copies a delete (instead of dropping it) while a segment
//! outside its inputs may hold an older version of the key, or while a
//! snapshot may need it. Those deletes count as dead bytes of the output
//! (as every delete does), yet rewriting the output again drops none of
//! them until what holds them is gone: without this book, a segment made
//! only of such deletes looked the deadest of all and was rewritten on
//! every pass, for nothing, while the segment holding the older versions
//! stayed below the threshold and kept them forever.
//!
//! So the planner counts a held delete as dead in the segment that holds
//! it (rewriting that one frees the versions and then the delete), not in
//! the segment that stores it (rewriting that one frees nothing), until the
//! holder is gone.
//!
//! Bytes alone undercount a delete: each also costs an index entry, and a
//! holder whose dead bytes stay under the threshold could keep a delete in
//! the index for every live key it has. So the book also counts held
//! deletes, and once they outnumber a quarter of the live keys the planner
//! rewrites the segment holding the most of them first (as RocksDB compacts
//! files dense with deletes), after which the deletes it held can go.
//!
//! Either way a holder counts only if its rewrite reclaims something of its
//! own (the older versions): one that holds deletes by a false positive of
//! its key filter, or whose older versions are deletes it must keep too,
//! would copy them to an output that holds the same deletes again.
//!
//! A range delete enters the book as a point delete does: one kept because
//! a segment outside its pass holds a record it covers is held by that
//! segment, bytes and count alike.
//!
//! The records under the top of a merge stack that compaction copied as
//! it is (see [`super::kept_stacks`]) enter the book too, held by their
//! own output for as long as it lives: dead as replaced versions, yet a
//! rewrite would only copy them again.
//!
//! The book lives in memory only: after a reopen the first rewrite of a
//! segment of held deletes fills it again.

use std::collections::HashMap;

use crate::segment::{Segment, SegmentTable};

/// Why a kept delete could not be dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A segment that may hold an older version of the key.
    Segment(u32),
    /// A snapshot older than the delete (or one taken while it was being
    /// decided) may need it.
    SnapshotsBelow(u64),
}

/// The deletes one output keeps, by what holds them: bytes per holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Holds {
    /// Per holding segment: its id, the bytes and the number of deletes.
    by_segment: Vec<(u32, u64, u64)>,
    /// Bytes held for snapshots, and the highest sequence number among
    /// them: they are held while a snapshot older than that one lives.
    for_snapshots: (u64, u64),
    /// Bytes of merge-stack records copied as they are under their tops,
    /// held while the output lives.
    stacked: u64,
}

impl Holds {
    /// Notes `bytes` of a delete kept for `holder`.
    pub(crate) fn add(&mut self, holder: Holder, bytes: u64) {
        match holder {
            Holder::Segment(id) => match self.by_segment.iter_mut().find(|h| h.0 == id) {
                Some((_, b, n)) => {
                    *b += bytes;
                    *n += 1;
                }
                None => self.by_segment.push((id, bytes, 1)),
            },
            Holder::SnapshotsBelow(seq) => {
                self.for_snapshots.0 += bytes;
                self.for_snapshots.1 = self.for_snapshots.1.max(seq);
            }
        }
    }

    /// Notes `bytes` of a merge-stack record copied as it is under its
    /// stack's top.
    pub(crate) fn add_stacked(&mut self, bytes: u64) {
        self.stacked += bytes;
    }

    /// Whether nothing was held.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_segment.is_empty() && self.for_snapshots.0 == 0 && self.stacked == 0
    }

    /// Bytes still held: by segments still in `table`, or by snapshots
    /// while one older than the newest held delete lives.
    fn still_held(&self, table: &SegmentTable, oldest_snapshot: Option<u64>) -> u64 {
        let by_segments: u64 = self
            .by_segment
            .iter()
            .filter(|(id, _, _)| table.get(*id).is_some())
            .map(|(_, b, _)| b)
            .sum();
        let (bytes, newest) = self.for_snapshots;
        let by_snapshots = match oldest_snapshot.is_some_and(|o| o < newest) {
            true => bytes,
            false => 0,
        };
        by_segments + by_snapshots + self.stacked
    }
}

/// The held deletes of every compaction output that has some.
#[derive(Debug, Default)]
pub(crate) struct HeldDeletes {
    by_output: HashMap<u32, Holds>,
}

impl HeldDeletes {
    /// Records what the rewrite that wrote `output` kept, and forgets the
    /// records of its `inputs` (their deletes are decided anew).
    pub(crate) fn record(&mut self, inputs: &[u32], output: Option<u32>, holds: Holds) {
        for id in inputs {
            self.by_output.remove(id);
        }
        if let Some(id) = output.filter(|_| !holds.is_empty()) {
            self.by_output.insert(id, holds);
        }
    }

    /// Forgets segments no longer in `table` (retired some other way).
    pub(crate) fn retain_live(&mut self, table: &SegmentTable) {
        self.by_output.retain(|id, _| table.get(*id).is_some());
    }

    /// The dead bytes a rewrite of `s` would reclaim, as the planner weighs
    /// them: its own (see [`Self::own_reclaimable`]), plus the deletes
    /// stored elsewhere that `s` holds, if it has any of its own.
    ///
    /// Without that condition two segments of deletes could take turns for
    /// ever: a delete is held by a segment whose key filter only may hold
    /// the key (a false positive), or whose older version is itself a kept
    /// delete. Rewriting that holder reclaims nothing and copies the same
    /// keys to a new segment, which holds the delete again, and the
    /// delete's segment, its holder gone, is rewritten next, and so on, a
    /// few times a second. A holder whose dead bytes are all held deletes
    /// waits for its own holder instead; one with a real dead version is
    /// rewritten, which drops it.
    pub(crate) fn reclaimable(
        &self,
        s: &Segment,
        table: &SegmentTable,
        oldest_snapshot: Option<u64>,
    ) -> u64 {
        let held_by_it: u64 = self
            .by_output
            .values()
            .flat_map(|h| h.by_segment.iter())
            .filter(|(holder, _, _)| *holder == s.id())
            .map(|(_, b, _)| b)
            .sum();
        match self.own_reclaimable(s, table, oldest_snapshot) {
            0 => 0,
            own => own + held_by_it,
        }
    }

    /// The dead bytes of `s` a rewrite of it would reclaim itself: its dead
    /// bytes, less the deletes in it that are still held.
    pub(crate) fn own_reclaimable(
        &self,
        s: &Segment,
        table: &SegmentTable,
        oldest_snapshot: Option<u64>,
    ) -> u64 {
        let held_here = self
            .by_output
            .get(&s.id())
            .map_or(0, |h| h.still_held(table, oldest_snapshot));
        s.dead_bytes().saturating_sub(held_here)
    }

    /// The segment of `table` holding the most deletes stored elsewhere,
    /// if the deletes held by segments of `table` outnumber a quarter of
    /// `live_keys` (see the module's notes).
    pub(crate) fn due_holder(&self, table: &SegmentTable, live_keys: u64) -> Option<u32> {
        let mut counts: Vec<(u32, u64)> = Vec::new();
        let held = self.by_output.values().flat_map(|h| h.by_segment.iter());
        for &(holder, _, n) in held.filter(|(id, _, _)| table.get(*id).is_some()) {
            match counts.iter_mut().find(|(id, _)| *id == holder) {
                Some((_, c)) => *c += n,
                None => counts.push((holder, n)),
            }
        }
        let total: u64 = counts.iter().map(|(_, c)| c).sum();
        (total.saturating_mul(4) > live_keys)
            .then(|| counts.iter().max_by_key(|(_, c)| *c).map(|(id, _)| *id))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::{Holder, Holds};
    use crate::compaction::compact_while_needed;
    use crate::compaction::rewrite::tests::seal_active;
    use crate::db::keyspace::KeyspaceId;
    use crate::{Db, Options, WriteOptions};

    const KEYS: u64 = 3_000;

    /// A database compacted only when the test asks, whose `KEYS` keys
    /// sit in key-ordered runs, with the keys below `deleted` deleted since
    /// (the deletes in a sealed log segment).
    fn runs_then_deletes(dir: &std::path::Path, deleted: u64) -> Db {
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            key_order_run_bytes: 1 << 20,
            ..Options::default()
        };
        let db = Db::open(dir, options).unwrap();
        let shared = db.shared();
        let w = WriteOptions::default();
        for i in 0..KEYS {
            db.put(KeyspaceId(0), &i.to_be_bytes(), &[7; 40], &w)
                .unwrap();
        }
        seal_active(&shared);
        compact_while_needed(&shared, 0.5).unwrap();
        for i in 0..deleted {
            db.delete(KeyspaceId(0), &i.to_be_bytes(), &w).unwrap();
        }
        seal_active(&shared);
        db
    }

    /// Regression: a segment made only of deletes that a run of live data
    /// still holds (its older versions, under the dead-ratio threshold)
    /// looked entirely dead, so every background pass rewrote it, kept
    /// every delete, and started again (twice a second, forever).
    #[test]
    fn a_segment_of_held_deletes_is_not_rewritten_while_its_holder_stands() {
        let dir = tempfile::tempdir().unwrap();
        let db = runs_then_deletes(dir.path(), KEYS / 10);
        let shared = db.shared();
        let first = compact_while_needed(&shared, 0.5).unwrap();
        assert!(first >= 1, "the segment of deletes was rewritten once");
        let compactions = db.stats().compactions;
        for _ in 0..3 {
            assert_eq!(compact_while_needed(&shared, 0.5).unwrap(), 0);
        }
        assert_eq!(db.stats().compactions, compactions);
        let stats = db.stats();
        assert_eq!(stats.live_keys, KEYS - KEYS / 10);
        assert_eq!(stats.index_entries, KEYS, "the deletes are still held");
        assert!(
            db.get(KeyspaceId(0), &0u64.to_be_bytes())
                .unwrap()
                .is_none()
        );
    }

    /// Once held deletes outnumber a quarter of the live keys, the run
    /// holding them is rewritten although its dead bytes are under the
    /// threshold, and then the deletes go.
    #[test]
    fn deletes_outnumbering_a_quarter_of_the_live_keys_get_their_holder_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let db = runs_then_deletes(dir.path(), KEYS / 3);
        let shared = db.shared();
        let dead_before: u64 = db.stats().dead_bytes;
        assert!(dead_before > 0);
        compact_while_needed(&shared, 0.5).unwrap();
        let stats = db.stats();
        assert_eq!(stats.live_keys, KEYS - KEYS / 3);
        assert_eq!(stats.index_entries, stats.live_keys, "{stats:?}");
        assert!(
            db.get(KeyspaceId(0), &0u64.to_be_bytes())
                .unwrap()
                .is_none()
        );
        assert!(
            db.get(KeyspaceId(0), &(KEYS - 1).to_be_bytes())
                .unwrap()
                .is_some()
        );
    }

    /// Regression (a fuzz run's database kept 126,170 range deletes for 24
    /// live keys): range deletes between the live keys of a large run, with
    /// compaction at its usual threshold. Once the run is rewritten (half of
    /// it deleted) the range deletes stored elsewhere go too; the run's
    /// output used to span them, and a span was taken for a holder of older
    /// versions, so every one of them stayed for ever.
    #[test]
    fn range_deletes_between_live_keys_go_at_the_usual_threshold() {
        let dir = tempfile::tempdir().unwrap();
        let db = one_run(dir.path(), 8 << 20, KEYS, 1, 40);
        let shared = db.shared();
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        let key = |i: u64| i.to_be_bytes();
        for round in 0..12 {
            for i in 0..KEYS / 200 {
                let from = ((round * KEYS / 200 + i) * 20) % KEYS;
                let mut b = crate::WriteBatch::new();
                b.delete_range(ks, &key(from), &key(from + 10));
                db.write(&b, &w).unwrap();
            }
            seal_active(&shared);
            compact_while_needed(&shared, 0.5).unwrap();
        }
        let stats = db.stats();
        assert_eq!(stats.live_keys, KEYS / 2);
        // At most the last round's may wait for their segment's next pass
        // (180 stayed before the fix).
        assert!(
            stats.range_tombstones <= KEYS / 200,
            "{} range deletes kept for {} live keys",
            stats.range_tombstones,
            stats.live_keys
        );
    }

    /// A range delete whose covered versions still lie in a run outside
    /// its pass is kept (and held by that run): dropped, the next open that
    /// reads every record would bring the covered keys back. Once the run
    /// is rewritten, it goes.
    #[test]
    fn a_range_delete_stays_while_a_run_holds_what_it_covers() {
        let dir = tempfile::tempdir().unwrap();
        let db = runs_then_deletes(dir.path(), 0);
        let shared = db.shared();
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        let mut b = crate::WriteBatch::new();
        b.delete_range(ks, &100u64.to_be_bytes(), &200u64.to_be_bytes());
        db.write(&b, &w).unwrap();
        seal_active(&shared);
        compact_while_needed(&shared, 0.5).unwrap();
        let stats = db.stats();
        assert_eq!(stats.live_keys, KEYS - 100);
        assert_eq!(stats.range_tombstones, 1, "held by the run: {stats:?}");
        drop(shared);
        drop(db);
        let index = dir.path().join(crate::format::index_checkpoint::INDEX_FILE);
        std::fs::remove_file(index).unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in [100u64, 150, 199] {
            assert!(db.get(ks, &i.to_be_bytes()).unwrap().is_none(), "key {i}");
        }
        assert!(db.get(ks, &200u64.to_be_bytes()).unwrap().is_some());
        assert_eq!(db.stats().live_keys, KEYS - 100);
        db.compact().unwrap();
        assert_eq!(db.stats().range_tombstones, 0);
    }

    /// A database compacted only when the test asks, holding `keys` keys
    /// `step` apart (8-byte big-endian numbers from 0) with values of
    /// `value_len` bytes, in key-ordered runs of up to `run_bytes`.
    fn one_run(
        dir: &std::path::Path,
        run_bytes: u64,
        keys: u64,
        step: u64,
        value_len: usize,
    ) -> Db {
        let options = Options {
            background_compaction: false,
            segment_bytes: 64 << 10,
            key_order_run_bytes: run_bytes,
            ..Options::default()
        };
        let db = Db::open(dir, options).unwrap();
        let shared = db.shared();
        for i in 0..keys {
            let key = (i * step).to_be_bytes();
            let value = vec![7; value_len];
            db.put(KeyspaceId(0), &key, &value, &WriteOptions::default())
                .unwrap();
        }
        seal_active(&shared);
        compact_while_needed(&shared, 0.5).unwrap();
        db
    }

    /// [`one_run`] of `keys` keys `step` apart (values of `value_len`
    /// bytes), then ten of them deleted (held by the run, in a segment of
    /// their own), then 20 deletes of free keys (never written) for which
    /// only that segment's key filter gives a false positive, compacted
    /// once: the deletes of free keys are held by the segment of held
    /// deletes. Returns the free keys.
    fn deletes_held_by_a_false_positive(
        dir: &std::path::Path,
        keys: u64,
        step: u64,
        value_len: usize,
    ) -> (Db, Vec<u64>) {
        let db = one_run(dir, 1 << 20, keys, step, value_len);
        let shared = db.shared();
        let (ks, w) = (KeyspaceId(0), WriteOptions::default());
        let key = |i: u64| i.to_be_bytes();
        let before: Vec<u32> = shared.segments.load().iter().map(|s| s.id()).collect();
        for i in 0..10 {
            db.delete(ks, &key(i * (keys - 1) / 9 * step), &w).unwrap();
        }
        seal_active(&shared);
        compact_while_needed(&shared, 0.5).unwrap();
        let active = shared.lock_writer().active.id();
        let table = shared.segments.load_full();
        let (of_deletes, others): (Vec<_>, Vec<_>) = table
            .iter()
            .filter(|s| s.id() != active)
            .partition(|s| !before.contains(&s.id()));
        assert_eq!(of_deletes.len(), 1, "the deletes' own segment");
        // Its deletes, all held, are all its dead bytes: a holder's own
        // reclaimable bytes are exact.
        let held = shared.compaction_lock.lock().unwrap().by_output[&of_deletes[0].id()]
            .still_held(&table, None);
        assert_eq!(held, of_deletes[0].dead_bytes());
        let free_keys: Vec<u64> = (0..keys * step)
            .filter(|k| k % step != 0)
            .filter(|&k| of_deletes[0].sealed_may_hold_key(0, &key(k)))
            .filter(|&k| !others.iter().any(|s| s.sealed_may_hold_key(0, &key(k))))
            .take(20)
            .collect();
        assert_eq!(free_keys.len(), 20);
        for &k in &free_keys {
            db.delete(ks, &key(k), &w).unwrap();
        }
        seal_active(&shared);
        compact_while_needed(&shared, 0.5).unwrap();
        (db, free_keys)
    }

    /// Passes of background compaction find nothing to do, and the
    /// database reads as written: `keys` keys `step` apart, ten deleted,
    /// and `free_keys` absent.
    fn settled(db: &Db, keys: u64, step: u64, free_keys: &[u64]) {
        let shared = db.shared();
        let segs: Vec<_> = shared
            .segments
            .load()
            .iter()
            .map(|s| (s.id(), s.kind(), s.data_bytes(), s.dead_bytes()))
            .collect();
        eprintln!(
            "book {:?} segs {segs:?} live {}",
            shared.compaction_lock.lock().unwrap(),
            db.stats().live_keys
        );
        for pass in 0..4 {
            assert_eq!(
                compact_while_needed(&shared, 0.5).unwrap(),
                0,
                "pass {pass}"
            );
        }
        let ks = KeyspaceId(0);
        assert_eq!(db.stats().live_keys, keys - 10);
        for &k in free_keys {
            assert!(db.get(ks, &k.to_be_bytes()).unwrap().is_none());
        }
        assert!(db.get(ks, &(0u64).to_be_bytes()).unwrap().is_none());
        assert!(db.get(ks, &step.to_be_bytes()).unwrap().is_some());
    }

    /// Regression (a memory-budget test's database compacted eight times
    /// a second for as long as it was open): deletes of keys never written,
    /// held by a small segment of other deletes whose key filter gives a
    /// false positive for them. Rewriting that holder reclaimed nothing and
    /// copied its keys, false positives and all, to a new segment, which
    /// held the deletes again; the two segments took turns for ever.
    #[test]
    fn deletes_held_by_a_false_positive_of_a_segment_of_held_deletes_do_not_loop() {
        let dir = tempfile::tempdir().unwrap();
        let (db, free_keys) = deletes_held_by_a_false_positive(dir.path(), KEYS, 1000, 40);
        settled(&db, KEYS, 1000, &free_keys);
    }

    /// As above, with the held deletes outnumbering a quarter of the live
    /// keys (60 keys with large values, so that the ten deleted leave the
    /// run under the dead-ratio threshold), which makes their holder due for
    /// a rewrite whatever its dead bytes (see the module's notes): a holder
    /// that would reclaim nothing of its own is not.
    #[test]
    fn many_deletes_held_by_a_false_positive_do_not_make_their_holder_due() {
        let dir = tempfile::tempdir().unwrap();
        let (db, free_keys) = deletes_held_by_a_false_positive(dir.path(), 60, 100_000, 4096);
        settled(&db, 60, 100_000, &free_keys);
    }

    #[test]
    fn holds_add_up_per_holder() {
        let mut h = Holds::default();
        assert!(h.is_empty());
        h.add(Holder::Segment(3), 10);
        h.add(Holder::Segment(4), 5);
        h.add(Holder::Segment(3), 7);
        h.add(Holder::SnapshotsBelow(90), 2);
        h.add(Holder::SnapshotsBelow(40), 1);
        assert_eq!(h.by_segment, vec![(3, 17, 2), (4, 5, 1)]);
        assert_eq!(h.for_snapshots, (3, 90));
        assert!(!h.is_empty());
    }
}
