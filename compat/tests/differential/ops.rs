//! The operations of a differential run and their seeded random generator.
//!
//! An [`Op`] names column families by index into [`CF_NAMES`] (or
//! [`Cf::Plain`] for the default family through the non-`_cf` methods), so
//! every operation is meaningful whatever ran before it: any subsequence of
//! a generated sequence is itself a valid sequence, which is what lets the
//! shrinker in `differential.rs` delete operations freely.

/// The column family names operations refer to; `"default"` is index 0.
pub const CF_NAMES: [&str; 4] = ["default", "cf1", "cf2", "cf3"];

/// Which column family an operation addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cf {
    /// The default family through the plain methods (`put`, `get`,
    /// `iterator`, ...), which need no handle.
    Plain,
    /// `CF_NAMES[i]` through `cf_handle` and the `_cf` methods. With
    /// `DB::open` there is no handle for `"default"`, as in RocksDB.
    Named(usize),
}

/// One write, alone or inside a batch.
#[derive(Clone, Debug)]
pub enum Write {
    /// `put` / `put_cf`.
    Put(Cf, Vec<u8>, Vec<u8>),
    /// `merge` / `merge_cf` (every family merges by concatenation).
    Merge(Cf, Vec<u8>, Vec<u8>),
    /// `delete` / `delete_cf`.
    Delete(Cf, Vec<u8>),
    /// `delete_range_cf` (`[from, to)`); with [`Cf::Plain`] the batch form
    /// `WriteBatch::delete_range` (the database has no plain `delete_range`).
    DeleteRange(Cf, Vec<u8>, Vec<u8>),
}

/// The iterator bounds of a `ReadOptions`.
#[derive(Clone, Debug)]
pub enum Bounds {
    /// No bounds.
    None,
    /// `set_iterate_lower_bound` and/or `set_iterate_upper_bound`.
    Set(Option<Vec<u8>>, Option<Vec<u8>>),
    /// `set_iterate_range(a..b)`.
    Range(Vec<u8>, Vec<u8>),
    /// `set_iterate_range(a..)`.
    From(Vec<u8>),
    /// `set_iterate_range(..b)`.
    To(Vec<u8>),
    /// `set_iterate_range(..)` after setting both bounds (which it clears).
    Full,
    /// `set_iterate_range(PrefixRange(p))`.
    Prefix(Vec<u8>),
}

/// An `IteratorMode`.
#[derive(Clone, Debug)]
pub enum Mode {
    /// `IteratorMode::Start`.
    Start,
    /// `IteratorMode::End`.
    End,
    /// `IteratorMode::From(k, Direction::Forward)`.
    Forward(Vec<u8>),
    /// `IteratorMode::From(k, Direction::Reverse)`.
    Reverse(Vec<u8>),
}

/// One step of a raw iterator walk; after each, the runner records
/// `valid()`, `key()`, `value()` and `item()`.
#[derive(Clone, Debug)]
pub enum Move {
    /// `seek_to_first`.
    First,
    /// `seek_to_last`.
    Last,
    /// `seek`.
    Seek(Vec<u8>),
    /// `seek_for_prev`.
    SeekForPrev(Vec<u8>),
    /// `next` (a no-op when not valid).
    Next,
    /// `prev` (a no-op when not valid).
    Prev,
}

/// A read made through a snapshot (or a `ReadOptions` holding it).
#[derive(Clone, Debug)]
pub enum SnapRead {
    /// `snapshot.get` / `get_cf`.
    Get(Cf, Vec<u8>),
    /// `snapshot.multi_get` of the default family.
    MultiGet(Vec<Vec<u8>>),
    /// `snapshot.iterator` / `iterator_cf`, collected.
    Iter(Cf, Mode),
    /// `snapshot.raw_iterator` / `raw_iterator_cf` walked.
    Raw(Cf, Vec<Move>),
    /// `db.get_opt` / `get_cf_opt` with `ReadOptions::set_snapshot`.
    GetOpt(Cf, Vec<u8>),
    /// `db.iterator_opt` / `iterator_cf_opt` with `set_snapshot` and bounds.
    IterOpt(Cf, Bounds, Mode),
}

/// One operation of a sequence.
#[derive(Clone, Debug)]
pub enum Op {
    /// A single write.
    Write(Write),
    /// A `WriteBatch` of writes (possibly empty), with `write` or
    /// `write_opt` (sync).
    Batch(Vec<Write>, bool),
    /// `get` / `get_cf`.
    Get(Cf, Vec<u8>),
    /// `get_pinned` / `get_pinned_cf`.
    GetPinned(Cf, Vec<u8>),
    /// `multi_get` of the default family.
    MultiGet(Vec<Vec<u8>>),
    /// `multi_get_cf` across families.
    MultiGetCf(Vec<(usize, Vec<u8>)>),
    /// An iterator in `mode` with `bounds`, collected or `take(n)`, then
    /// polled twice more past its end.
    Iter(Cf, Bounds, Mode, Option<usize>),
    /// A raw iterator with `bounds`, walked.
    Raw(Cf, Bounds, Vec<Move>),
    /// Take a snapshot, make `writes`, then read through the snapshot and
    /// through the database.
    Snapshot(Vec<Write>, Vec<SnapRead>),
    /// Make an iterator, read `n` items, make `writes`, read the rest: an
    /// iterator is an implicit snapshot.
    IterAcrossWrites(Cf, Mode, usize, Vec<Write>),
    /// `latest_sequence_number`.
    Sequence,
    /// `property_int_value(_cf)("rocksdb.estimate-num-keys")`, compared
    /// only while RocksDB's estimate is exact (see the runner).
    EstimateNumKeys(Cf),
    /// `create_cf`.
    CreateCf(usize),
    /// `drop_cf`.
    DropCf(usize),
    /// `DB::list_cf` on the open database's path.
    ListCf,
    /// `flush` / `flush_cf`.
    Flush(Cf),
    /// `compact_range(_cf)(None, None)`.
    CompactAll(Cf),
    /// Close and reopen with the families that exist; `true`: by
    /// `open_cf_descriptors` instead of `open_cf`.
    Reopen(bool),
    /// While open: a second `open_cf` of the same path, and `destroy`.
    SecondOpen,
    /// Close, reopen naming only a subset of the families (an error when
    /// one is left out), then reopen properly.
    OpenMissingCfs(usize),
    /// Close, `open_cf` naming a family that does not exist without
    /// `create_missing_column_families` (an error), then reopen properly.
    OpenUnknownCf,
    /// `delete_range_cf(from, to)` with `to < from` (`true`: in a batch
    /// after a put). RocksDB fails it with `Invalid argument: end key comes
    /// before start key` and then refuses every write (its memtable insert
    /// failed after the WAL write), so this ends the run: only the error
    /// is compared. Generated only as the last operation.
    ReversedRange(Cf, Vec<u8>, Vec<u8>, bool),
}

/// A small xorshift64* generator: deterministic per seed, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: usize) -> bool {
        self.below(100) < pct
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The shared prefix of the "long key" shape.
const LONG_PREFIX: &[u8] = b"a/very/long/shared/prefix/that/many/keys/begin/with/0123456789/";

/// A key of one of the shapes the brief asks for.
fn fresh_key(rng: &mut Rng) -> Vec<u8> {
    match rng.below(9) {
        0 => Vec::new(),
        1 | 2 => {
            let len = 1 + rng.below(3);
            (0..len).map(|_| b"abc"[rng.below(3)]).collect()
        }
        3 | 4 => (rng.below(48) as u64).to_be_bytes().to_vec(),
        5 => {
            let mut k = LONG_PREFIX.to_vec();
            let tail = rng.below(3);
            k.extend((0..tail).map(|_| b"xyz"[rng.below(3)]));
            if rng.chance(20) {
                k.extend(std::iter::repeat_n(b'-', 200));
            }
            k
        }
        6 => vec![0xff; 1 + rng.below(4)],
        7 => {
            let mut k = vec![0xff; 1 + rng.below(3)];
            k.push(*rng.pick(&[0x00, 0x01, 0xfe, 0xff]));
            k
        }
        _ => vec![*rng.pick(&[0x00, 0x7f, 0x80, 0xfe]), 0xff],
    }
}

/// A value: empty, short, medium or (rarely) a few KiB, tagged with `n`
/// so that different writes of a key are told apart.
fn fresh_value(rng: &mut Rng, n: usize) -> Vec<u8> {
    match rng.below(10) {
        0 | 1 => Vec::new(),
        2..=6 => format!("v{n}").into_bytes(),
        7 | 8 => {
            let mut v = format!("v{n}:").into_bytes();
            v.extend((0..rng.below(120)).map(|i| (i * 7 + n) as u8));
            v
        }
        _ => {
            let mut v = format!("big{n}:").into_bytes();
            v.resize(1000 + rng.below(5000), (n % 251) as u8);
            v
        }
    }
}

/// Generates sequences of operations over a per-sequence pool of keys.
pub struct Generator {
    rng: Rng,
    pool: Vec<Vec<u8>>,
    counter: usize,
}

impl Generator {
    /// A generator for the sequence of `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let size = 6 + rng.below(30);
        let pool = (0..size).map(|_| fresh_key(&mut rng)).collect();
        Self {
            rng,
            pool,
            counter: 0,
        }
    }

    /// `len` random operations, sometimes followed by an
    /// [`Op::ReversedRange`].
    pub fn ops(&mut self, len: usize) -> Vec<Op> {
        let mut ops: Vec<Op> = (0..len).map(|_| self.op()).collect();
        if self.rng.chance(10) {
            let (a, b) = (self.probe(), self.probe());
            let (to, mut from) = if a <= b { (a, b) } else { (b, a) };
            if from == to {
                from.push(0);
            }
            ops.push(Op::ReversedRange(self.cf(), from, to, self.rng.chance(50)));
        }
        ops
    }

    /// A key of the pool, mostly; sometimes a fresh one.
    fn key(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick(&self.pool).clone()
        } else {
            fresh_key(&mut self.rng)
        }
    }

    /// A seek target or bound: a key, or a position between keys.
    fn probe(&mut self) -> Vec<u8> {
        let mut k = self.key();
        match self.rng.below(6) {
            0 => k.push(0x00),
            1 => {
                k.pop();
            }
            2 => k.push(0xff),
            _ => {}
        }
        k
    }

    fn value(&mut self) -> Vec<u8> {
        self.counter += 1;
        fresh_value(&mut self.rng, self.counter)
    }

    /// Mostly the default family (by both routes) and cf1/cf2; rarely cf3.
    fn cf(&mut self) -> Cf {
        match self.rng.below(20) {
            0..=5 => Cf::Plain,
            6 | 7 => Cf::Named(0),
            8..=12 => Cf::Named(1),
            13..=18 => Cf::Named(2),
            _ => Cf::Named(3),
        }
    }

    fn write(&mut self) -> Write {
        let cf = self.cf();
        match self.rng.below(23) {
            0..=11 => Write::Put(cf, self.key(), self.value()),
            12..=17 => Write::Delete(cf, self.key()),
            18..=20 => Write::Merge(cf, self.key(), self.value()),
            _ => {
                // A range whose end comes before its start is an error that
                // leaves RocksDB refusing writes: only `Op::ReversedRange`
                // makes one, as the last operation.
                let (a, b) = (self.probe(), self.probe());
                let (from, to) = if a <= b { (a, b) } else { (b, a) };
                Write::DeleteRange(cf, from, to)
            }
        }
    }

    fn writes(&mut self, max: usize) -> Vec<Write> {
        let n = self.rng.below(max + 1);
        (0..n).map(|_| self.write()).collect()
    }

    fn bounds(&mut self) -> Bounds {
        match self.rng.below(12) {
            0..=4 => Bounds::None,
            5 => Bounds::Set(Some(self.probe()), None),
            6 => Bounds::Set(None, Some(self.probe())),
            7 => Bounds::Set(Some(self.probe()), Some(self.probe())),
            8 => Bounds::Range(self.probe(), self.probe()),
            9 => {
                if self.rng.chance(50) {
                    Bounds::From(self.probe())
                } else {
                    Bounds::To(self.probe())
                }
            }
            10 => Bounds::Full,
            _ => {
                let mut p = self.key();
                p.truncate(self.rng.below(p.len() + 1));
                Bounds::Prefix(p)
            }
        }
    }

    fn mode(&mut self) -> Mode {
        match self.rng.below(4) {
            0 => Mode::Start,
            1 => Mode::End,
            2 => Mode::Forward(self.probe()),
            _ => Mode::Reverse(self.probe()),
        }
    }

    /// A raw iterator walk: mostly starting with a positioning move, then
    /// steps and repositionings.
    fn moves(&mut self) -> Vec<Move> {
        let n = 1 + self.rng.below(12);
        let position_first = self.rng.chance(85);
        (0..n)
            .map(|i| {
                let choices = if i == 0 && position_first { 4 } else { 10 };
                match self.rng.below(choices) {
                    0 => Move::First,
                    1 => Move::Last,
                    2 => Move::Seek(self.probe()),
                    3 => Move::SeekForPrev(self.probe()),
                    4..=6 => Move::Next,
                    _ => Move::Prev,
                }
            })
            .collect()
    }

    fn snap_read(&mut self) -> SnapRead {
        match self.rng.below(6) {
            0 => SnapRead::Get(self.cf(), self.key()),
            1 => SnapRead::MultiGet((0..1 + self.rng.below(4)).map(|_| self.key()).collect()),
            2 => SnapRead::Iter(self.cf(), self.mode()),
            3 => SnapRead::Raw(self.cf(), self.moves()),
            4 => SnapRead::GetOpt(self.cf(), self.key()),
            _ => SnapRead::IterOpt(self.cf(), self.bounds(), self.mode()),
        }
    }

    /// One random operation; writes and reads dominate, the lifecycle
    /// operations (families, reopen, errors) are rare.
    fn op(&mut self) -> Op {
        let cf_index = 1 + self.rng.below(3);
        match self.rng.below(100) {
            0..=29 => Op::Write(self.write()),
            30..=39 => Op::Batch(self.writes(6), self.rng.chance(20)),
            40..=45 => Op::Get(self.cf(), self.key()),
            46..=48 => Op::GetPinned(self.cf(), self.key()),
            49..=50 => Op::MultiGet((0..self.rng.below(5)).map(|_| self.key()).collect()),
            51..=52 => Op::MultiGetCf(
                (0..self.rng.below(5))
                    .map(|_| (self.rng.below(CF_NAMES.len()), self.key()))
                    .collect(),
            ),
            53..=64 => {
                let take = self.rng.chance(30).then(|| self.rng.below(4));
                Op::Iter(self.cf(), self.bounds(), self.mode(), take)
            }
            65..=74 => Op::Raw(self.cf(), self.bounds(), self.moves()),
            75..=79 => {
                let writes = self.writes(5);
                let reads = (0..1 + self.rng.below(4))
                    .map(|_| self.snap_read())
                    .collect();
                Op::Snapshot(writes, reads)
            }
            80..=82 => {
                let first = self.rng.below(3);
                Op::IterAcrossWrites(self.cf(), self.mode(), first, self.writes(4))
            }
            83..=85 => Op::Sequence,
            86..=87 => Op::EstimateNumKeys(self.cf()),
            88 | 89 => Op::CreateCf(if self.rng.chance(10) { 0 } else { cf_index }),
            90 => Op::DropCf(if self.rng.chance(10) { 0 } else { cf_index }),
            91 => Op::ListCf,
            92 => Op::Flush(self.cf()),
            93 => Op::CompactAll(self.cf()),
            94..=95 => Op::Reopen(self.rng.chance(50)),
            96 => Op::SecondOpen,
            97..=98 => Op::OpenMissingCfs(self.rng.below(8)),
            _ => Op::OpenUnknownCf,
        }
    }
}

/// Everything a run observed, in order, each entry tagged with the index
/// of the operation that produced it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    /// The operation being run.
    pub op: usize,
    /// The compared observations: results, error kinds and prefixes.
    pub obs: Vec<(usize, String)>,
    /// The full error messages, with the database path replaced.
    pub messages: Vec<(usize, String)>,
}

impl Transcript {
    /// Records an observation of the current operation.
    pub fn push(&mut self, text: impl Into<String>) {
        self.obs.push((self.op, text.into()));
    }

    /// Records a full error message of the current operation.
    pub fn message(&mut self, text: String) {
        self.messages.push((self.op, text));
    }
}

/// Bytes as text: escaped when short, length and a hash when long.
pub fn show(bytes: &[u8]) -> String {
    if bytes.len() <= 48 {
        return format!("\"{}\"", bytes.escape_ascii());
    }
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!(
        "\"{}\"..({} bytes, fnv {hash:016x})",
        bytes[..24].escape_ascii(),
        bytes.len()
    )
}

/// A `Mode` as text, keys shown with [`show`].
pub fn show_mode(mode: &Mode) -> String {
    match mode {
        Mode::Start => "Start".to_owned(),
        Mode::End => "End".to_owned(),
        Mode::Forward(k) => format!("From({}, Forward)", show(k)),
        Mode::Reverse(k) => format!("From({}, Reverse)", show(k)),
    }
}

/// `Bounds` as text, keys shown with [`show`].
pub fn show_bounds(bounds: &Bounds) -> String {
    let side = |b: &Option<Vec<u8>>| b.as_deref().map_or("_".to_owned(), show);
    match bounds {
        Bounds::None => "unbounded".to_owned(),
        Bounds::Set(lower, upper) => format!("bounds[{}, {})", side(lower), side(upper)),
        Bounds::Range(a, b) => format!("range({}..{})", show(a), show(b)),
        Bounds::From(a) => format!("range({}..)", show(a)),
        Bounds::To(b) => format!("range(..{})", show(b)),
        Bounds::Full => "range(..) after bounds".to_owned(),
        Bounds::Prefix(p) => format!("PrefixRange({})", show(p)),
    }
}

/// A `Move` as text, keys shown with [`show`].
pub fn show_move(m: &Move) -> String {
    match m {
        Move::Seek(k) => format!("Seek({})", show(k)),
        Move::SeekForPrev(k) => format!("SeekForPrev({})", show(k)),
        other => format!("{other:?}"),
    }
}
