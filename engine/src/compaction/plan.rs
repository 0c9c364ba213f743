//! Choosing which sealed segments to compact.

use std::sync::Arc;

use super::held::HeldDeletes;
use crate::db::shared::Shared;
use crate::format::segment_header::SegmentKind;
use crate::segment::Segment;

/// Segments to rewrite together.
pub(crate) struct Plan {
    pub inputs: Vec<Arc<Segment>>,
}

/// Picks sealed segments whose dead fraction exceeds `dead_ratio`, worst
/// first, as many as fit in one output segment. The dead bytes weighed are
/// what a rewrite would reclaim, as `book` tells (see [`super::held`]).
/// When `dead_ratio` is negative (a full compaction) it picks every sealed
/// segment, oldest first: the deletes, usually newer than the versions
/// they hide, then come last, when those versions are gone and the deletes
/// can go too.
/// Considers only segments `eligible` accepts (given each with its
/// weighed dead fraction), and skips those in `exclude`.
pub(crate) fn plan(
    shared: &Shared,
    book: &HeldDeletes,
    dead_ratio: f64,
    exclude: &[u32],
    eligible: impl Fn(&Segment, f64) -> bool,
) -> Option<Plan> {
    let mut candidates: Vec<(f64, Arc<Segment>)> = weighed_sealed(shared, book, dead_ratio)
        .into_iter()
        .filter(|(f, s)| *f > dead_ratio && !exclude.contains(&s.id()) && eligible(s, *f))
        .collect();
    let oldest_first = dead_ratio < 0.0;
    match oldest_first {
        true => candidates.sort_by_key(|(_, s)| s.id()),
        false => candidates.sort_by(|a, b| b.0.total_cmp(&a.0)),
    }
    let budget = shared.options.segment_bytes;
    let mut inputs = Vec::new();
    let mut live = 0;
    for (_, s) in candidates {
        let l = s.data_bytes().saturating_sub(s.dead_bytes());
        if !inputs.is_empty() && live + l > budget {
            // Oldest first stays in order: a newer segment of deletes that
            // would fit must not jump ahead of the versions they hide.
            match oldest_first {
                true => break,
                false => continue,
            }
        }
        live += l;
        inputs.push(s);
    }
    (!inputs.is_empty()).then_some(Plan { inputs })
}

/// Every sealed segment, with the fraction of it a rewrite would reclaim
/// now (see [`plan`]): infinite for the segment holding the most deletes
/// kept for it, once those are due and if it has dead bytes of its own to
/// reclaim (never when `dead_ratio` is negative).
fn weighed_sealed(
    shared: &Shared,
    book: &HeldDeletes,
    dead_ratio: f64,
) -> Vec<(f64, Arc<Segment>)> {
    // Read the active segment and the table together under the writer lock:
    // a rotation in between would make the new active segment look sealed,
    // and compacting a segment the writer still appends to loses the records
    // appended after the scan.
    let (active, table) = {
        let writer = shared.lock_writer();
        (writer.active.id(), shared.segments.load_full())
    };
    let oldest_snapshot = shared.snapshots.oldest_seq();
    let due_holder = match dead_ratio < 0.0 {
        true => None,
        false => book.due_holder(&table, live_keys(shared)),
    };
    // A due holder is rewritten only if that reclaims something of its own
    // (its older versions of the deletes it holds): otherwise its output
    // would hold them again, and be due again (see `held::reclaimable`).
    let weigh = |s: &Segment| {
        let due =
            due_holder == Some(s.id()) && book.own_reclaimable(s, &table, oldest_snapshot) > 0;
        match due {
            true => f64::INFINITY,
            false => fraction_of(book.reclaimable(s, &table, oldest_snapshot), s),
        }
    };
    table
        .iter()
        .filter(|s| s.id() != active)
        .map(|s| (weigh(s), s.clone()))
        .collect()
}

/// Slows writes down while the dead bytes due for reclaiming (in sealed
/// segments past `dead_ratio`, weighed as [`plan`] weighs them) exceed the
/// limit [`crate::write::throttle::slowdown_limit`] sets, and lets them run
/// again once they do not (see `write/throttle.rs`).
pub(crate) fn update_write_throttle(shared: &Shared, book: &HeldDeletes, dead_ratio: f64) {
    let table = shared.segments.load_full();
    let live: u64 = table.iter().map(|s| live_bytes(s)).sum();
    let limit =
        crate::write::throttle::slowdown_limit(shared.options.write_slowdown_debt_bytes, live);
    let slowed = limit.is_some_and(|limit| {
        let due: u64 = weighed_sealed(shared, book, dead_ratio)
            .iter()
            .filter(|(f, _)| *f > dead_ratio)
            .map(|(f, s)| (f.min(1.0) * s.data_bytes() as f64) as u64)
            .sum();
        due > limit
    });
    shared.write_throttle.set(slowed);
}

/// Picks a key-ordering pass (see "Key order of compacted segments" in
/// FORMAT.md): the sealed log segments, oldest first, then the key-ordered
/// runs (compaction outputs) from the smallest up, each only while it is no
/// larger than the live bytes picked so far, all within `run_bytes` of live
/// data (a first segment larger than that goes alone). A plan has a log
/// segment or at least two runs: a log segment is put in key order as soon
/// as it is sealed, and runs merge only with runs of at least their own
/// size, so a record is rewritten at most about log2(`run_bytes` / segment
/// size) times. `run_bytes` grows with the database (see [`run_cap`]).
pub(crate) fn plan_key_order(shared: &Shared, run_bytes: u64) -> Option<Plan> {
    let active = shared.lock_writer().active.id();
    let table = shared.segments.load_full();
    let run_bytes = run_cap(run_bytes, table.iter().map(|s| live_bytes(s)).sum());
    let mut candidates: Vec<(bool, u64, Arc<Segment>)> = table
        .iter()
        .filter(|s| s.id() != active && !diluting(shared, s))
        .map(|s| (s.kind() != SegmentKind::Log, live_bytes(s), s.clone()))
        .collect();
    // Log segments (false) first, oldest first; then runs, smallest first.
    candidates.sort_by_key(|(is_run, live, s)| match is_run {
        false => (false, 0, s.id()),
        true => (true, *live, s.id()),
    });
    let mut inputs = Vec::new();
    let mut picked = 0u64;
    let mut has_log = false;
    for (is_run, live, s) in candidates {
        if !inputs.is_empty() && (picked + live > run_bytes || (is_run && live > picked)) {
            match is_run {
                true => break,
                false => continue,
            }
        }
        has_log |= !is_run;
        picked += live;
        inputs.push(s);
    }
    (has_log || inputs.len() >= 2).then_some(Plan { inputs })
}

/// About how many runs hold a database's live data once its runs reach
/// [`run_cap`]'s size: runs merge in pairs or more up to the cap, so there
/// are between this many and twice as many.
const RUNS_AT_CAP: u64 = 32;

/// The largest run [`run_cap`] grows to on its own: a key-ordering pass
/// lists its inputs' keys in memory (some 40 bytes a record), so a run's
/// size bounds that memory.
const LARGEST_GROWN_RUN: u64 = 512 << 20;

/// The most live bytes a key-ordering pass merges into one run, for a
/// database of `live` live bytes: `run_bytes`, or a [`RUNS_AT_CAP`]th of
/// the database if that is larger (up to [`LARGEST_GROWN_RUN`]). A run
/// never grows past its cap, so without this a database of `n` times
/// `run_bytes` would keep some `n` runs: a seek reads a record in each,
/// and a packed index leaf names each in its group table, up to 128 (see
/// `index::packed_leaf`), past which its keys stay in dense leaves of
/// some 23 bytes a key. Growing the cap with the database keeps the runs
/// about 32 to 64 up to some 16 GiB of live data (128 at 64 GiB), at the
/// cost of one more rewrite of the data each time it doubles past 4 GiB.
fn run_cap(run_bytes: u64, live: u64) -> u64 {
    (live / RUNS_AT_CAP).min(LARGEST_GROWN_RUN).max(run_bytes)
}

/// Whether key-ordering `s` would hide its dead bytes or waste the pass: a
/// segment more than half-way to the dead-ratio threshold (deletes a run
/// keeps for older versions elsewhere count as dead) is left to dead-ratio
/// compaction, which drops them once they can go; merged into live data its
/// dead fraction would fall below the threshold and they would stay. A log
/// segment that is overwritten that fast is likely to be overwritten more:
/// ordering it would copy data that dies soon after (under a writer that
/// keeps overwriting, ordering such segments doubled the space held).
fn diluting(shared: &Shared, s: &Segment) -> bool {
    dead_fraction(s) > shared.options.compaction_dead_ratio / 2.0
}

/// Live keys of every keyspace.
fn live_keys(shared: &Shared) -> u64 {
    shared.keyspaces.load().iter().map(|k| k.live_keys()).sum()
}

/// Data bytes no reader can do without.
fn live_bytes(s: &Segment) -> u64 {
    s.data_bytes().saturating_sub(s.dead_bytes())
}

/// Dead bytes over data bytes (1 for a segment without data).
fn dead_fraction(s: &Segment) -> f64 {
    fraction_of(s.dead_bytes(), s)
}

/// `bytes` over the data bytes of `s` (1 for a segment without data).
fn fraction_of(bytes: u64, s: &Segment) -> f64 {
    let data = s.data_bytes();
    if data == 0 {
        return 1.0;
    }
    bytes as f64 / data as f64
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{LARGEST_GROWN_RUN, live_bytes, run_cap};
    use crate::compaction::compact_while_needed;
    use crate::compaction::rewrite::tests::compacted_layout;
    use crate::db::keyspace::KeyspaceId;
    use crate::db::shared::Shared;
    use crate::format::segment_header::SegmentKind;
    use crate::{Db, Options, WriteOptions};

    /// A database whose compaction runs only when the test calls it, with
    /// 16 KiB segments and key-ordered runs of at most 256 KiB.
    fn open_quiet(dir: &std::path::Path) -> Db {
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            key_order_run_bytes: 256 << 10,
            ..Options::default()
        };
        Db::open(dir, options).unwrap()
    }

    /// The sealed segments of each kind: (log, key-ordered runs).
    fn sealed_kinds(shared: &Shared) -> (usize, usize) {
        let active = shared.lock_writer().active.id();
        let table = shared.segments.load_full();
        let sealed: Vec<_> = table.iter().filter(|s| s.id() != active).collect();
        let logs = sealed
            .iter()
            .filter(|s| s.kind() == SegmentKind::Log)
            .count();
        (logs, sealed.len() - logs)
    }

    /// Whether every compaction output holds its records in key order.
    fn runs_in_key_order(shared: &Shared) -> bool {
        compacted_layout(shared).iter().all(|keys| {
            keys.windows(2)
                .all(|p| (p[0].0, &p[0].1) <= (p[1].0, &p[1].1))
        })
    }

    /// The background pass puts every sealed log segment in key order and
    /// merges runs of like size into few runs, each key-ordered, while
    /// reads (a snapshot's too) still see what they saw.
    #[test]
    fn sealed_log_segments_become_few_key_ordered_runs() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_quiet(dir.path());
        let shared = db.shared();
        let ks = KeyspaceId(0);
        let w = WriteOptions::default();
        let key = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        let mut model = BTreeMap::new();
        let mut snapshot = None;
        for i in 0..12_000u64 {
            let value = format!("value {i:>40}").into_bytes();
            db.put(ks, &key(i % 9_000), &value, &w).unwrap();
            model.insert(key(i % 9_000).to_vec(), value);
            if i == 9_000 {
                snapshot = Some((db.snapshot(), model.clone()));
            }
        }
        let (logs_before, _) = sealed_kinds(&shared);
        assert!(logs_before > 50, "{logs_before} sealed log segments");
        let ratio = shared.options.compaction_dead_ratio;
        compact_while_needed(&shared, ratio).unwrap();
        let (logs, runs) = sealed_kinds(&shared);
        assert_eq!(logs, 0, "every sealed log segment was put in key order");
        // About 700 KB live in runs of at most 256 KiB, merged only with
        // runs of their size: a handful, not one per log segment.
        assert!(runs <= 8, "{runs} runs from {logs_before} log segments");
        assert!(runs_in_key_order(&shared));
        assert!(db.stats().key_order_passes > 0);
        let scanned: BTreeMap<Vec<u8>, Vec<u8>> = model
            .keys()
            .map(|k| (k.clone(), db.get(ks, k).unwrap().unwrap().to_vec()))
            .collect();
        assert_eq!(scanned, model);
        let (snapshot, then) = snapshot.unwrap();
        for (k, v) in &then {
            assert_eq!(snapshot.get(ks, k).unwrap().as_deref(), Some(&v[..]));
        }
        // Nothing more to do: a second call plans no pass.
        let passes = db.stats().key_order_passes;
        compact_while_needed(&shared, ratio).unwrap();
        assert_eq!(db.stats().key_order_passes, passes);
    }

    #[test]
    fn the_run_cap_grows_with_the_database_up_to_512_mib() {
        let mib = 1u64 << 20;
        assert_eq!(run_cap(128 * mib, 0), 128 * mib);
        assert_eq!(run_cap(128 * mib, 4096 * mib), 128 * mib);
        assert_eq!(run_cap(128 * mib, 8192 * mib), 256 * mib);
        assert_eq!(run_cap(128 * mib, 1 << 40), LARGEST_GROWN_RUN);
        assert_eq!(
            run_cap(4096 * mib, 1 << 40),
            4096 * mib,
            "a larger option wins"
        );
    }

    /// A database many times `key_order_run_bytes` keeps few runs: as it
    /// grows, runs merge into larger ones (without this, the 24 MiB written
    /// here in runs of 256 KiB kept 119 runs; with it, 58).
    #[test]
    fn a_growing_database_keeps_few_runs() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            segment_bytes: 256 << 10,
            key_order_run_bytes: 256 << 10,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let shared = db.shared();
        let ratio = shared.options.compaction_dead_ratio;
        let key = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        let value = |i: u64| {
            let mut v = [0u8; 200];
            v.iter_mut()
                .enumerate()
                .for_each(|(j, b)| *b = (i as u8) ^ (j as u8));
            v
        };
        let n = 115_000u64;
        for i in 0..n {
            db.put(KeyspaceId(0), &key(i), &value(i), &WriteOptions::default())
                .unwrap();
            if i % 5_000 == 4_999 {
                compact_while_needed(&shared, ratio).unwrap();
            }
        }
        compact_while_needed(&shared, ratio).unwrap();
        let (logs, runs) = sealed_kinds(&shared);
        assert_eq!(logs, 0);
        let table = shared.segments.load_full();
        let largest = table.iter().map(|s| live_bytes(s)).max().unwrap();
        assert!(runs <= 64, "{runs} runs of at most {largest} live bytes");
        assert!(
            largest > 256 << 10,
            "runs grew: the largest holds {largest}"
        );
        assert!(runs_in_key_order(&shared));
        for i in (0..n).step_by(97) {
            let got = db.get(KeyspaceId(0), &key(i)).unwrap().unwrap();
            assert_eq!(&got[..], &value(i)[..]);
        }
    }

    /// Regression (a writer that kept overwriting 2M keys held 2.5–3.7 GB
    /// for 290 MB of live data, twice what it held with key-ordering off):
    /// a log segment already a third dead is left to dead-ratio compaction,
    /// not copied into a run where its dead bytes would hide; the fresh
    /// segments of the overwrites are still put in key order.
    #[test]
    fn a_log_segment_being_overwritten_is_not_key_ordered() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_quiet(dir.path());
        let mut model = BTreeMap::new();
        let mut put = |i: u64, value: [u8; 40]| {
            let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
            db.put(KeyspaceId(0), &key, &value, &WriteOptions::default())
                .unwrap();
            model.insert(key.to_vec(), value.to_vec());
        };
        (0..3_000u64).for_each(|i| put(i, [1; 40]));
        let shared = db.shared();
        let (first_logs, _) = sealed_kinds(&shared);
        assert!(first_logs >= 8, "{first_logs} sealed log segments");
        (0..3_000u64).step_by(3).for_each(|i| put(i, [2; 40]));
        compact_while_needed(&shared, shared.options.compaction_dead_ratio).unwrap();
        let (logs, runs) = sealed_kinds(&shared);
        assert!(
            logs >= first_logs - 1,
            "{logs} of {first_logs} log segments a third dead are left in log order"
        );
        assert!(runs >= 1, "the overwrites' own segments became a run");
        for (k, v) in &model {
            assert_eq!(db.get(KeyspaceId(0), k).unwrap().as_deref(), Some(&v[..]));
        }
    }

    /// Whether writes are slowed after the throttle weighs the dead bytes.
    fn slowed_after_update(shared: &Shared) -> bool {
        let book = shared.compaction_lock.lock().unwrap();
        super::update_write_throttle(shared, &book, shared.options.compaction_dead_ratio);
        shared.write_throttle.is_slowed()
    }

    /// A database compacted only when the test asks, with 16 KiB segments
    /// and `write_slowdown_debt_bytes` set to `limit`.
    fn open_with_debt_limit(dir: &std::path::Path, limit: u64) -> Db {
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            write_slowdown_debt_bytes: limit,
            ..Options::default()
        };
        Db::open(dir, options).unwrap()
    }

    /// Overwrites 3,000 keys of 40-byte values once more, in batches.
    fn overwrite_all(db: &Db, value: u8) {
        for chunk in (0..3_000u64).collect::<Vec<_>>().chunks(500) {
            let mut batch = crate::WriteBatch::new();
            for &i in chunk {
                let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
                batch.put(KeyspaceId(0), &key, &[value; 40]);
            }
            db.write(&batch, &WriteOptions::default()).unwrap();
        }
    }

    /// Dead bytes due for reclaiming past the limit slow writes down until
    /// compaction has worked them off: versions a snapshot still reads count
    /// until compaction has moved them aside, their copies do not. Nothing
    /// is slowed with a limit of 0.
    #[test]
    fn writes_are_slowed_while_reclaimable_dead_bytes_exceed_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_with_debt_limit(dir.path(), 64 << 10);
        let shared = db.shared();
        overwrite_all(&db, 1);
        let snapshot = db.snapshot();
        overwrite_all(&db, 2);
        assert!(
            !shared.write_throttle.is_slowed(),
            "not before it is weighed"
        );
        assert!(slowed_after_update(&shared));
        let sleeps = db.stats().slowed_write_sleeps;
        overwrite_all(&db, 3);
        assert!(
            db.stats().slowed_write_sleeps > sleeps,
            "a slowed write slept"
        );
        compact_while_needed(&shared, shared.options.compaction_dead_ratio).unwrap();
        assert!(
            !shared.write_throttle.is_slowed(),
            "lifted when compaction ends"
        );
        assert!(!slowed_after_update(&shared), "worked off: no debt left");
        let key = 7u64.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        let held = snapshot.get(KeyspaceId(0), &key).unwrap();
        assert_eq!(held.as_deref(), Some(&[1; 40][..]));
        drop(snapshot);
        overwrite_all(&db, 4);
        overwrite_all(&db, 5);
        assert!(slowed_after_update(&shared));
        let dir = tempfile::tempdir().unwrap();
        let db = open_with_debt_limit(dir.path(), 0);
        overwrite_all(&db, 6);
        overwrite_all(&db, 7);
        assert!(!slowed_after_update(&db.shared()), "0 never slows writes");
    }

    /// With `key_order_run_bytes` 0, log segments stay as they are until
    /// their dead bytes call for compaction.
    #[test]
    fn key_order_passes_can_be_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            background_compaction: false,
            segment_bytes: 16 << 10,
            key_order_run_bytes: 0,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let shared = db.shared();
        for i in 0..2_000u64 {
            let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
            db.put(KeyspaceId(0), &key, &[7; 40], &WriteOptions::default())
                .unwrap();
        }
        let (logs_before, _) = sealed_kinds(&shared);
        assert!(logs_before > 2);
        compact_while_needed(&shared, shared.options.compaction_dead_ratio).unwrap();
        assert_eq!(sealed_kinds(&shared), (logs_before, 0));
        assert_eq!(db.stats().key_order_passes, 0);
    }
}
