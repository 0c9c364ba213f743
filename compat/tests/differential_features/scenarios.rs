// Included by `differential_features.rs` once per crate, with `api` naming
// the crate. Each scenario returns a transcript of what it observed.

use std::cmp::Ordering;
use std::path::Path;
use std::time::Duration;

use api::{
    ColumnFamilyDescriptor, ColumnFamilyTtl, CompactionDecision, DB, Direction, IteratorMode,
    Options, ReadOptions, WriteBatch,
};

/// A small deterministic generator (an LCG) of keys and choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn key(&mut self) -> Vec<u8> {
        format!("k{:02}", self.next() % 40).into_bytes()
    }
}

fn open_opts() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts
}

fn open_with_cf(path: &Path) -> DB {
    DB::open_cf(&open_opts(), path, ["cf"]).unwrap()
}

/// `n` random puts, deletes and two-family batches.
fn random_writes(db: &DB, rng: &mut Rng, n: usize) {
    let cf = db.cf_handle("cf").unwrap();
    for i in 0..n {
        match rng.next() % 4 {
            0 => db.put(rng.key(), format!("v{i}")).unwrap(),
            1 => db.delete(rng.key()).unwrap(),
            2 => db.put_cf(&cf, rng.key(), format!("c{i}")).unwrap(),
            _ => {
                let mut batch = WriteBatch::default();
                batch.put(rng.key(), format!("b{i}"));
                batch.delete_cf(&cf, rng.key());
                batch.put_cf(&cf, rng.key(), format!("b{i}"));
                db.write(batch).unwrap();
            }
        }
    }
}

fn dump(db: &DB, out: &mut Vec<String>) {
    for item in db.iterator(IteratorMode::Start) {
        let (k, v) = item.unwrap();
        out.push(format!("default {:?}={:?}", k, v));
    }
    if let Some(cf) = db.cf_handle("cf") {
        for item in db.iterator_cf(&cf, IteratorMode::Start) {
            let (k, v) = item.unwrap();
            out.push(format!("cf {:?}={:?}", k, v));
        }
    }
}

pub fn checkpoint_copies_exactly_the_writes_before_it(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let db = open_with_cf(&dir.path().join("db"));
    random_writes(&db, &mut rng, 200);
    let copy_path = dir.path().join("copy");
    api::checkpoint::Checkpoint::new(&db)
        .unwrap()
        .create_checkpoint(&copy_path)
        .unwrap();
    random_writes(&db, &mut rng, 50);
    let mut out = Vec::new();
    let copy = DB::open_cf(&Options::default(), &copy_path, ["cf"]).unwrap();
    dump(&copy, &mut out);
    out.push(format!("copy seq {}", copy.latest_sequence_number()));
    out
}

/// Records the batches after `seq` as text.
struct Ops(Vec<String>);

impl api::WriteBatchIteratorCf for Ops {
    fn put_cf(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.0.push(format!("put {cf} {key:?} {value:?}"));
    }
    fn delete_cf(&mut self, cf: u32, key: &[u8]) {
        self.0.push(format!("delete {cf} {key:?}"));
    }
    fn merge_cf(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.0.push(format!("merge {cf} {key:?} {value:?}"));
    }
}

/// A secondary opened beside the primary, then caught up after each round
/// of writes (the last round after a full compaction): it must hold what
/// the primary holds, and refuse writes the same way.
pub fn secondary_catches_up_with_the_primary(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let path = dir.path().join("db");
    let db = open_with_cf(&path);
    random_writes(&db, &mut rng, 100);
    let secondary = DB::open_cf_as_secondary(
        &Options::default(),
        &path,
        &dir.path().join("secondary"),
        ["cf"],
    )
    .unwrap();
    let mut out = Vec::new();
    for round in 0..3 {
        random_writes(&db, &mut rng, 80);
        if round == 2 {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
        secondary.try_catch_up_with_primary().unwrap();
        out.push(format!("round {round}"));
        dump(&secondary, &mut out);
        out.push(format!("seq {}", secondary.latest_sequence_number()));
    }
    out.push(format!("put: {:?}", secondary.put(b"k", b"v").map_err(|e| e.into_string())));
    out
}

pub fn updates_since_returns_the_logged_batches(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let db = open_with_cf(dir.path());
    random_writes(&db, &mut rng, 60);
    let latest = db.latest_sequence_number();
    let mut out = vec![format!("latest {latest}")];
    for from in [0, 1, latest / 2, latest.saturating_sub(1), latest] {
        for item in db.get_updates_since(from).unwrap() {
            let (seq, batch) = item.unwrap();
            let mut ops = Ops(Vec::new());
            batch.iterate_cf(&mut ops);
            out.push(format!("from {from}: {seq} {:?}", ops.0));
        }
    }
    let err = db.get_updates_since(latest + 1).err().unwrap();
    out.push(format!("future: {:?}", err.kind()));
    out
}

fn filter(_level: u32, key: &[u8], value: &[u8]) -> CompactionDecision {
    match (key.last().copied().unwrap_or(0) % 3, value.first()) {
        (0, _) => CompactionDecision::Remove,
        (1, Some(b'v')) => CompactionDecision::Change(b"changed"),
        _ => CompactionDecision::Keep,
    }
}

/// 150 random writes with `opts`, a flush and a full `compact_range`;
/// what the database then holds.
fn compacted_contents(opts: &Options, seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let db = DB::open_cf(opts, dir.path(), ["cf"]).unwrap();
    random_writes(&db, &mut rng, 150);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let mut out = Vec::new();
    dump(&db, &mut out);
    out
}

pub fn compaction_filter_decisions_apply_at_compact_range(seed: u64) -> Vec<String> {
    let mut opts = open_opts();
    opts.set_compaction_filter("diff", filter);
    compacted_contents(&opts, seed)
}

/// Random writes around two snapshots, then a full `compact_range` with a
/// filter: what the database holds, and what each snapshot reads. The
/// filter sees each key's newest version only, snapshots or not; a snapshot
/// that saw a removed or changed version sees the decision, an older one
/// the version before.
pub fn compaction_filter_with_snapshots(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut opts = open_opts();
    opts.set_compaction_filter("diff", filter);
    let db = DB::open_cf(&opts, dir.path(), ["cf"]).unwrap();
    let cf = db.cf_handle("cf").unwrap();
    random_writes(&db, &mut rng, 100);
    let first = db.snapshot();
    random_writes(&db, &mut rng, 100);
    let second = db.snapshot();
    random_writes(&db, &mut rng, 50);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let mut out = Vec::new();
    dump(&db, &mut out);
    for (name, snapshot) in [("first", &first), ("second", &second)] {
        for item in snapshot.iterator(IteratorMode::Start) {
            let (k, v) = item.unwrap();
            out.push(format!("{name} default {k:?}={v:?}"));
        }
        for item in snapshot.iterator_cf(&cf, IteratorMode::Start) {
            let (k, v) = item.unwrap();
            out.push(format!("{name} cf {k:?}={v:?}"));
        }
    }
    out
}

/// Removes every third entry it is asked about and changes every fifth
/// (counting across the run, so the filter must live as long as the run).
struct EveryThird(u32);

impl api::compaction_filter::CompactionFilter for EveryThird {
    fn filter(&mut self, _level: u32, _key: &[u8], _value: &[u8]) -> CompactionDecision {
        self.0 += 1;
        match (self.0 % 3, self.0 % 5) {
            (0, _) => CompactionDecision::Remove,
            (_, 0) => CompactionDecision::Change(b"fifth"),
            _ => CompactionDecision::Keep,
        }
    }
    fn name(&self) -> &std::ffi::CStr {
        c"every-third"
    }
}

/// Makes an [`EveryThird`] per run and notes each run's context.
struct EveryThirdFactory(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl api::compaction_filter_factory::CompactionFilterFactory for EveryThirdFactory {
    type Filter = EveryThird;
    fn create(&mut self, context: api::compaction_filter_factory::CompactionFilterContext) -> EveryThird {
        let note = format!("run full={} manual={}", context.is_full_compaction, context.is_manual_compaction);
        self.0.lock().unwrap().push(note);
        EveryThird(0)
    }
    fn name(&self) -> &std::ffi::CStr {
        c"every-third-factory"
    }
}

pub fn compaction_filter_factory_makes_a_filter_per_run(seed: u64) -> Vec<String> {
    let runs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut opts = open_opts();
    opts.set_disable_auto_compactions(true);
    opts.set_compaction_filter_factory(EveryThirdFactory(runs.clone()));
    let mut out = compacted_contents(&opts, seed);
    out.extend(runs.lock().unwrap().iter().cloned());
    out
}

/// Appends the operands to the value (associative: any grouping of the
/// operands gives the same value).
fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &api::MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        out.extend_from_slice(op);
    }
    Some(out)
}

/// Every key's value, and the keys in order, as `db` or `snapshot` reads them.
fn merged_view(
    label: &str,
    keys: &[Vec<u8>],
    get: impl Fn(&[u8]) -> Option<Vec<u8>>,
    iter: impl Iterator<Item = (Box<[u8]>, Box<[u8]>)>,
    out: &mut Vec<String>,
) {
    for k in keys {
        out.push(format!("{label} get {k:?}={:?}", get(k)));
    }
    for (k, v) in iter {
        out.push(format!("{label} iter {k:?}={v:?}"));
    }
}

/// Many merges into a few keys, with operands long enough that AlexDB
/// stores them as stacks of operands (and, in the family with
/// `max_successive_merges`, folds them early), between puts, deletes,
/// snapshots, flushes, compactions and a reopen.
pub fn merge_stacks_fold_alike(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let options = || {
        let mut opts = open_opts();
        opts.set_merge_operator_associative("concat", concat);
        opts
    };
    let families = || {
        let mut short = options();
        short.set_max_successive_merges(4);
        // "default" named with the merge operator: a family left out gets
        // default options (no merge operator), as in rust-rocksdb.
        [
            ColumnFamilyDescriptor::new("default", options()),
            ColumnFamilyDescriptor::new("short", short),
        ]
    };
    let mut db = DB::open_cf_descriptors(&options(), dir.path(), families()).unwrap();
    let keys: Vec<Vec<u8>> = (0..12).map(|i| format!("m{i:02}").into_bytes()).collect();
    let mut out = Vec::new();
    let mut snapshots = Vec::new();
    for i in 0..600u64 {
        let key = &keys[(rng.next() % 12) as usize];
        let in_short = rng.next().is_multiple_of(2);
        let cf = db.cf_handle("short").unwrap();
        let choice = rng.next() % 100;
        match choice {
            0..65 => {
                let operand = format!("<{i}:{}>", "x".repeat((rng.next() % 80) as usize));
                match in_short {
                    true => db.merge_cf(&cf, key, operand).unwrap(),
                    false => db.merge(key, operand).unwrap(),
                }
            }
            65..75 => match in_short {
                true => db.put_cf(&cf, key, format!("put{i}")).unwrap(),
                false => db.put(key, format!("put{i}")).unwrap(),
            },
            75..83 => match in_short {
                true => db.delete_cf(&cf, key).unwrap(),
                false => db.delete(key).unwrap(),
            },
            83..88 if snapshots.len() < 3 => snapshots.push((i, db.snapshot())),
            88..92 => db.flush().unwrap(),
            92..95 => db.compact_range(None::<&[u8]>, None::<&[u8]>),
            95..97 => db.compact_range_cf(&cf, None::<&[u8]>, None::<&[u8]>),
            _ => {}
        }
        if i % 100 == 99 {
            let cf = db.cf_handle("short").unwrap();
            let label = format!("at {i} default");
            let get = |k: &[u8]| db.get(k).unwrap();
            let iter = db.iterator(IteratorMode::Start).map(Result::unwrap);
            merged_view(&label, &keys, get, iter, &mut out);
            let label = format!("at {i} short");
            let get = |k: &[u8]| db.get_cf(&cf, k).unwrap();
            let iter = db.iterator_cf(&cf, IteratorMode::Start).map(Result::unwrap);
            merged_view(&label, &keys, get, iter, &mut out);
            let many = db.multi_get(&keys);
            out.push(format!("at {i} multi_get {:?}", many.into_iter().map(Result::unwrap).collect::<Vec<_>>()));
        }
    }
    for (taken, snapshot) in &snapshots {
        let cf = db.cf_handle("short").unwrap();
        let label = format!("snapshot {taken} default");
        let get = |k: &[u8]| snapshot.get(k).unwrap();
        merged_view(&label, &keys, get, snapshot.iterator(IteratorMode::Start).map(Result::unwrap), &mut out);
        let label = format!("snapshot {taken} short");
        let get = |k: &[u8]| snapshot.get_cf(&cf, k).unwrap();
        merged_view(&label, &keys, get, snapshot.iterator_cf(&cf, IteratorMode::Start).map(Result::unwrap), &mut out);
    }
    drop(snapshots);
    drop(db);
    db = DB::open_cf_descriptors(&options(), dir.path(), families()).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    dump(&db, &mut out);
    let cf = db.cf_handle("short").unwrap();
    for item in db.iterator_cf(&cf, IteratorMode::Start) {
        let (k, v) = item.unwrap();
        out.push(format!("reopened short {k:?}={v:?}"));
    }
    out
}

pub fn ttl_entries_expire_at_compaction(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let keep = ColumnFamilyDescriptor::new_with_ttl("keep", Options::default(), ColumnFamilyTtl::Disabled);
    let db = DB::open_cf_descriptors_with_ttl(&open_opts(), dir.path(), [keep], Duration::from_secs(1))
        .unwrap();
    let keep = db.cf_handle("keep").unwrap();
    for i in 0..20 {
        db.put(rng.key(), format!("old{i}")).unwrap();
        db.put_cf(&keep, rng.key(), format!("kept{i}")).unwrap();
    }
    let mut out = Vec::new();
    let count = |db: &DB| db.iterator(IteratorMode::Start).count();
    out.push(format!("before expiry {}", count(&db)));
    std::thread::sleep(Duration::from_millis(2100));
    for i in 0..5 {
        db.put(format!("new{i}"), b"fresh").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for item in db.iterator(IteratorMode::Start) {
        let (k, v) = item.unwrap();
        out.push(format!("default {k:?}={v:?}"));
    }
    for item in db.iterator_cf(&keep, IteratorMode::Start) {
        let (k, v) = item.unwrap();
        out.push(format!("keep {k:?}={v:?}"));
    }
    out
}

fn reverse(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

pub fn comparator_orders_every_iteration(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut cf_opts = Options::default();
    cf_opts.set_comparator("diff_reverse", Box::new(reverse));
    let cfs = vec![ColumnFamilyDescriptor::new("rev", cf_opts)];
    let db = DB::open_cf_descriptors(&open_opts(), dir.path(), cfs).unwrap();
    let cf = db.cf_handle("rev").unwrap();
    for i in 0..100 {
        if rng.next().is_multiple_of(4) {
            db.delete_cf(&cf, rng.key()).unwrap();
        } else {
            db.put_cf(&cf, rng.key(), format!("v{i}")).unwrap();
        }
    }
    let keys = |mode: IteratorMode, opts: ReadOptions| -> String {
        db.iterator_cf_opt(&cf, opts, mode)
            .map(|item| String::from_utf8(item.unwrap().0.to_vec()).unwrap())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = vec![
        keys(IteratorMode::Start, ReadOptions::default()),
        keys(IteratorMode::End, ReadOptions::default()),
        keys(IteratorMode::From(b"k20", Direction::Forward), ReadOptions::default()),
        keys(IteratorMode::From(b"k20", Direction::Reverse), ReadOptions::default()),
    ];
    let mut bounded = ReadOptions::default();
    bounded.set_iterate_lower_bound(b"k30".to_vec());
    bounded.set_iterate_upper_bound(b"k10".to_vec());
    out.push(keys(IteratorMode::Start, bounded));
    out
}

/// An iterator's entry.
type KeyValue = (Box<[u8]>, Box<[u8]>);

/// Case-insensitive: keys equal but for case are one key.
fn case_folding(a: &[u8], b: &[u8]) -> Ordering {
    a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
}

/// A key from a small space whose keys often differ only by case.
fn mixed_case_key(rng: &mut Rng) -> Vec<u8> {
    const STEMS: [&str; 4] = ["user", "User", "USER", "zed"];
    let stem = STEMS[(rng.next() % 4) as usize];
    format!("{stem}{}", rng.next() % 6).into_bytes()
}

/// What `db`'s family `cf` shows: both ways of iteration, seeks, gets and
/// one multi-get of mixed-case keys, at `readopts`.
fn case_folding_view(
    db: &DB,
    cf: &impl api::AsColumnFamilyRef,
    readopts: impl Fn() -> ReadOptions,
    out: &mut Vec<String>,
) {
    // Going forward RocksDB shows a key as its newest version wrote it.
    // Going backward it shows the bytes of the oldest version not yet
    // compacted away (its reverse step meets a key's versions oldest
    // first), which depends on when compaction ran: only the class (the
    // key in lower case) is compared there.
    let show = |item: Result<KeyValue, api::Error>, fold: bool| {
        let (k, v) = item.unwrap();
        let k = if fold { k.to_ascii_lowercase() } else { k.to_vec() };
        format!("{}={}", String::from_utf8_lossy(&k), String::from_utf8_lossy(&v))
    };
    let modes = [
        (IteratorMode::Start, false),
        (IteratorMode::End, true),
        (IteratorMode::From(b"USER3", Direction::Forward), false),
        (IteratorMode::From(b"user3", Direction::Reverse), true),
    ];
    for (mode, fold) in modes {
        let items: Vec<String> = db
            .iterator_cf_opt(cf, readopts(), mode)
            .map(|item| show(item, fold))
            .collect();
        out.push(items.join(","));
    }
    let probes: Vec<Vec<u8>> = ["USER1", "user2", "User3", "uSeR4", "ZED0", "Zed5"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    for key in &probes {
        let got = db.get_cf_opt(cf, key, &readopts()).unwrap();
        out.push(format!("get {} = {:?}", String::from_utf8_lossy(key), got));
    }
    let many = db.multi_get_cf_opt(probes.iter().map(|k| (cf, k)), &readopts());
    out.push(format!("{:?}", many.into_iter().map(Result::unwrap).collect::<Vec<_>>()));
}

pub fn case_insensitive_keys_are_one_key(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut cf_opts = Options::default();
    cf_opts.set_comparator("diff_case_folding", Box::new(case_folding));
    cf_opts.set_merge_operator_associative("concat", concat);
    let cfs = vec![ColumnFamilyDescriptor::new("names", cf_opts)];
    let db = DB::open_cf_descriptors(&open_opts(), dir.path(), cfs).unwrap();
    let cf = db.cf_handle("names").unwrap();
    // The sequence of the issue, then random writes, some in batches.
    db.put_cf(&cf, "User", "1").unwrap();
    db.put_cf(&cf, "user", "2").unwrap();
    db.put_cf(&cf, "Zed", "3").unwrap();
    let mut out = Vec::new();
    case_folding_view(&db, &cf, ReadOptions::default, &mut out);
    db.delete_cf(&cf, "uSeR").unwrap();
    case_folding_view(&db, &cf, ReadOptions::default, &mut out);
    let mut snapshot_view = Vec::new();
    let mut snapshot = None;
    for i in 0..300 {
        let key = mixed_case_key(&mut rng);
        match rng.next() % 8 {
            0..=2 => db.put_cf(&cf, &key, format!("v{i}")).unwrap(),
            3 => db.delete_cf(&cf, &key).unwrap(),
            4 => db.merge_cf(&cf, &key, format!("+{i}")).unwrap(),
            5 => {
                let mut batch = WriteBatch::default();
                batch.put_cf(&cf, &key, format!("b{i}"));
                batch.merge_cf(&cf, mixed_case_key(&mut rng), format!("+b{i}"));
                batch.delete_cf(&cf, mixed_case_key(&mut rng));
                batch.put_cf(&cf, mixed_case_key(&mut rng), format!("c{i}"));
                db.write(batch).unwrap();
            }
            6 => {
                let other = mixed_case_key(&mut rng);
                let (begin, end) = match case_folding(&key, &other) {
                    Ordering::Greater => (other, key),
                    _ => (key, other),
                };
                let mut batch = WriteBatch::default();
                batch.delete_range_cf(&cf, &begin, &end);
                db.write(batch).unwrap();
            }
            _ => {
                if i == 150 {
                    snapshot = Some(db.snapshot());
                    case_folding_view(&db, &cf, ReadOptions::default, &mut snapshot_view);
                }
            }
        }
    }
    case_folding_view(&db, &cf, ReadOptions::default, &mut out);
    if let Some(snapshot) = &snapshot {
        let at_snapshot = || {
            let mut readopts = ReadOptions::default();
            readopts.set_snapshot(snapshot);
            readopts
        };
        let mut again = Vec::new();
        case_folding_view(&db, &cf, at_snapshot, &mut again);
        out.push(format!("snapshot unchanged: {}", again == snapshot_view));
        out.extend(again);
    }
    out
}

pub fn ingested_files_override_the_database(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let db = open_with_cf(&dir.path().join("db"));
    random_writes(&db, &mut rng, 100);
    let mut keys: Vec<Vec<u8>> = (0..30).map(|_| rng.key()).collect();
    keys.sort();
    keys.dedup();
    let file = dir.path().join("ingest.sst");
    let opts = Options::default();
    let mut writer = api::SstFileWriter::create(&opts);
    writer.open(&file).unwrap();
    for (i, key) in keys.iter().enumerate() {
        if i.is_multiple_of(3) {
            writer.delete(key).unwrap();
        } else {
            writer.put(key, format!("ingested{i}")).unwrap();
        }
    }
    writer.finish().unwrap();
    let cf = db.cf_handle("cf").unwrap();
    db.ingest_external_file_cf(&cf, vec![&file]).unwrap();
    let mut out = Vec::new();
    dump(&db, &mut out);
    out
}

pub fn set_options_accepts_and_refuses_the_same_input(_seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let db = open_with_cf(dir.path());
    let cases: &[&[(&str, &str)]] = &[
        &[("disable_auto_compactions", "true")],
        &[("disable_auto_compactions", "maybe")],
        &[("write_buffer_size", "67108864")],
        &[("write_buffer_size", "-5")],
        &[("max_bytes_for_level_multiplier", "8.5")],
        &[("compression", "kZSTD")],
        &[("compression", "zstd")],
        &[("no_such_option", "1")],
        &[("paranoid_file_checks", "true"), ("report_bg_io_stats", "false")],
        &[],
    ];
    cases
        .iter()
        .map(|case| format!("{case:?}: {:?}", db.set_options(case).map_err(|e| e.kind())))
        .collect()
}

/// How a property answers: not at all, with an integer, or with text (and
/// the value itself where it is the same on every run of every engine).
fn property_answer(db: &DB, name: &str, exact: bool) -> String {
    let value = db.property_value(name).unwrap();
    let int = db.property_int_value(name);
    match (value, int) {
        (None, _) => format!("{name}: none"),
        (Some(v), Ok(Some(_))) if exact => format!("{name}: int {v}"),
        (Some(_), Ok(Some(_))) => format!("{name}: int"),
        (Some(v), _) if exact => format!("{name}: text {v}"),
        (Some(_), _) => format!("{name}: text"),
    }
}

pub fn properties_answer_where_rocksdb_does(seed: u64) -> Vec<String> {
    use api::properties as p;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let db = open_with_cf(dir.path());
    random_writes(&db, &mut rng, 100);
    db.flush().unwrap();
    let varying = [
        p::STATS,
        p::SSTABLES,
        p::CFSTATS,
        p::CFSTATS_NO_FILE_HISTOGRAM,
        p::CF_FILE_HISTOGRAM,
        p::DBSTATS,
        p::LEVELSTATS,
        p::NUM_IMMUTABLE_MEM_TABLE,
        p::NUM_IMMUTABLE_MEM_TABLE_FLUSHED,
        p::MEM_TABLE_FLUSH_PENDING,
        p::NUM_RUNNING_FLUSHES,
        p::COMPACTION_PENDING,
        p::NUM_RUNNING_COMPACTIONS,
        p::BACKGROUND_ERRORS,
        p::CUR_SIZE_ACTIVE_MEM_TABLE,
        p::CUR_SIZE_ALL_MEM_TABLES,
        p::SIZE_ALL_MEM_TABLES,
        p::NUM_ENTRIES_ACTIVE_MEM_TABLE,
        p::NUM_ENTRIES_IMM_MEM_TABLES,
        p::NUM_DELETES_ACTIVE_MEM_TABLE,
        p::NUM_DELETES_IMM_MEM_TABLES,
        p::ESTIMATE_NUM_KEYS,
        p::ESTIMATE_TABLE_READERS_MEM,
        p::NUM_SNAPSHOTS,
        p::OLDEST_SNAPSHOT_TIME,
        p::CURRENT_SUPER_VERSION_NUMBER,
        p::ESTIMATE_LIVE_DATA_SIZE,
        p::MIN_LOG_NUMBER_TO_KEEP,
        p::TOTAL_SST_FILES_SIZE,
        p::LIVE_SST_FILES_SIZE,
        p::ESTIMATE_PENDING_COMPACTION_BYTES,
        p::AGGREGATED_TABLE_PROPERTIES,
        p::ACTUAL_DELAYED_WRITE_RATE,
        p::IS_WRITE_STOPPED,
        p::ESTIMATE_OLDEST_KEY_TIME,
        p::BLOCK_CACHE_CAPACITY,
        p::BLOCK_CACHE_USAGE,
        p::BLOCK_CACHE_PINNED_USAGE,
        p::OPTIONS_STATISTICS,
    ];
    let mut out: Vec<String> = varying
        .iter()
        .map(|name| property_answer(&db, name.as_str(), false))
        .collect();
    let exact = [
        p::IS_FILE_DELETIONS_ENABLED,
        p::NUM_LIVE_VERSIONS,
        p::MIN_OBSOLETE_SST_NUMBER_TO_KEEP,
        p::BASE_LEVEL,
    ];
    out.extend(exact.iter().map(|name| property_answer(&db, name.as_str(), true)));
    for level in [0, 1, 6, 7] {
        out.push(property_answer(&db, p::num_files_at_level(level).as_str(), false));
        let ratio = p::compression_ratio_at_level(level);
        out.push(property_answer(&db, ratio.as_str(), level > 0));
        let table = p::aggregated_table_properties_at_level(level);
        out.push(property_answer(&db, table.as_str(), false));
    }
    out.push(property_answer(&db, "rocksdb.no-such-property", false));
    out
}
