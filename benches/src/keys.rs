//! The generated data: which keys are loaded (and in what order), which keys
//! are known to be absent, the values, and the access orders of the
//! workloads. Every engine's child process regenerates it from the same
//! seeds, so every engine sees byte-identical data.

use std::collections::HashSet;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::rng::Xorshift;
use crate::zipf::Zipf;

/// The seed of the key generator (the seeds' benchmarks used 42).
pub const KEY_SEED: u64 = 42;
/// The seed of the access orders (which key each operation touches).
pub const ACCESS_SEED: u64 = 7;
/// Skew of the Zipfian access distribution (YCSB's default).
pub const ZIPF_THETA: f64 = 0.99;
/// Prefix of the string keys: long and shared by every key.
pub const STRING_PREFIX: &str = "user:profile:";
/// Number of long prefixes the skewed keys share (one per tenant).
pub const SKEWED_TENANTS: u64 = 4;
/// Trailing zero bytes of every skewed key.
pub const SKEWED_ZEROS: usize = 6;

/// How the loaded keys are drawn.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Keyset {
    /// Uniform random 8-byte integers (xorshift seeded 42), big-endian,
    /// loaded in generation (random) order.
    Uniform,
    /// 8-byte big-endian integers 0, 2, 4, …, loaded in ascending order.
    Sequential,
    /// `user:profile:{:012}` (25 bytes, a 13-byte shared prefix) over a
    /// dense id range, loaded in shuffled order.
    Strings,
    /// `tenant/{t:04}/events/` (19 bytes, 4 tenants), then a uniform 6-byte
    /// id, then 6 zero bytes (31 bytes): long shared prefixes and trailing
    /// zeros, loaded in generation (random) order.
    Skewed,
}

/// What the values hold.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ValueKind {
    /// Random bytes: nothing compresses them.
    #[default]
    Random,
    /// JSON-like text (repeated field names, dates, small numbers, words),
    /// as many applications store: compressible.
    Text,
}

impl ValueKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Random => "random",
            ValueKind::Text => "text",
        }
    }
}

impl Keyset {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Keyset::Uniform => "uniform",
            Keyset::Sequential => "sequential",
            Keyset::Strings => "strings",
            Keyset::Skewed => "skewed",
        }
    }

    /// Whether keys are 8-byte integers (usable by the i64 API).
    pub fn is_integer(self) -> bool {
        !matches!(self, Keyset::Strings | Keyset::Skewed)
    }
}

/// Fixed-width keys stored back to back.
#[derive(Clone, Debug)]
pub struct Keys {
    width: usize,
    bytes: Vec<u8>,
}

impl Keys {
    fn with_capacity(width: usize, n: usize) -> Self {
        Keys {
            width,
            bytes: Vec::with_capacity(width * n),
        }
    }

    fn push(&mut self, key: &[u8]) {
        debug_assert_eq!(key.len(), self.width);
        self.bytes.extend_from_slice(key);
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.width
    }

    /// Key number `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.width..(i + 1) * self.width]
    }

    /// The keys in order.
    pub fn iter(&self) -> std::slice::ChunksExact<'_, u8> {
        self.bytes.chunks_exact(self.width)
    }

    /// The keys `order` names, in that order: what a timed loop reads, so
    /// that its own read of the key is a sequential one. Read through
    /// `order` instead, every operation would begin with a random read of
    /// the whole key array (80 MB at 10M keys), a miss to memory that the
    /// harness, not the engine, pays (measured: 0.8 µs a get at 10M keys).
    pub fn gather(&self, order: &[u32]) -> Keys {
        let mut keys = Keys::with_capacity(self.width, order.len());
        for &i in order {
            keys.push(self.get(i as usize));
        }
        keys
    }
}

/// A data set: present keys in load order and as many absent keys.
#[derive(Clone, Debug)]
pub struct DataSet {
    /// Keys loaded, in load order.
    pub present: Keys,
    /// Keys never loaded, spread over the same range as the present ones.
    pub absent: Keys,
    values: ValuePool,
}

impl DataSet {
    /// Generates `n` present and `n` absent keys of `keyset`, with values of
    /// `value_size` bytes of `values`.
    pub fn generate(keyset: Keyset, n: usize, value_size: usize, values: ValueKind) -> Self {
        let (present, absent) = match keyset {
            Keyset::Uniform => uniform(n),
            Keyset::Sequential => sequential(n),
            Keyset::Strings => strings(n),
            Keyset::Skewed => skewed(n),
        };
        DataSet {
            present,
            absent,
            values: ValuePool::new(value_size, values),
        }
    }

    /// Indexes of the present keys in key order.
    pub fn sorted_order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.present.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            self.present
                .get(a as usize)
                .cmp(self.present.get(b as usize))
        });
        order
    }

    /// `count` new keys in the narrow range just above present key number
    /// `anchor`: that key followed by a 4-byte suffix (so every new key sorts
    /// between it and the next loaded key), in shuffled order.
    pub fn hot_keys(&self, anchor: usize, count: usize) -> Keys {
        let base = self.present.get(anchor);
        let mut suffixes: Vec<u32> = (0..count as u32).collect();
        Xorshift::new(ACCESS_SEED ^ 0x407).shuffle(&mut suffixes);
        let mut keys = Keys::with_capacity(base.len() + 4, count);
        let mut key = base.to_vec();
        for s in suffixes {
            key.truncate(base.len());
            key.extend_from_slice(&s.to_be_bytes());
            keys.push(&key);
        }
        keys
    }

    /// The value loaded for key number `i`; `version` > 0 gives the
    /// different, same-sized values of overwrites.
    pub fn value(&self, i: usize, version: usize) -> &[u8] {
        self.values
            .get(i.wrapping_mul(31).wrapping_add(version * 7))
    }
}

/// Uniform keys: `x & !1` for present, `x | 1` for absent, so both come
/// from the same distribution and no absent key equals a present one.
fn uniform(n: usize) -> (Keys, Keys) {
    let mut rng = Xorshift::new(KEY_SEED);
    let mut seen = HashSet::with_capacity(n);
    let mut present = Keys::with_capacity(8, n);
    let mut absent = Keys::with_capacity(8, n);
    while present.len() < n {
        let x = rng.next_u64() & !1;
        if seen.insert(x) {
            present.push(&x.to_be_bytes());
            absent.push(&(x | 1).to_be_bytes());
        }
    }
    (present, absent)
}

/// Sequential keys: even numbers present (ascending), odd numbers absent.
fn sequential(n: usize) -> (Keys, Keys) {
    let mut present = Keys::with_capacity(8, n);
    let mut absent = Keys::with_capacity(8, n);
    for i in 0..n as u64 {
        present.push(&(2 * i).to_be_bytes());
        absent.push(&(2 * i + 1).to_be_bytes());
    }
    (present, absent)
}

/// String keys over even ids (present, shuffled) and odd ids (absent).
fn strings(n: usize) -> (Keys, Keys) {
    let mut ids: Vec<u64> = (0..n as u64).collect();
    Xorshift::new(KEY_SEED).shuffle(&mut ids);
    let width = STRING_PREFIX.len() + 12;
    let mut present = Keys::with_capacity(width, n);
    let mut absent = Keys::with_capacity(width, n);
    for id in ids {
        present.push(format!("{STRING_PREFIX}{:012}", 2 * id).as_bytes());
        absent.push(format!("{STRING_PREFIX}{:012}", 2 * id + 1).as_bytes());
    }
    (present, absent)
}

/// Skewed keys: a tenant prefix, a uniform id (even present, odd absent)
/// and trailing zero bytes.
fn skewed(n: usize) -> (Keys, Keys) {
    let mut rng = Xorshift::new(KEY_SEED);
    let mut seen = HashSet::with_capacity(n);
    let width = skewed_key(0, 0).len();
    let mut present = Keys::with_capacity(width, n);
    let mut absent = Keys::with_capacity(width, n);
    while present.len() < n {
        let x = rng.next_u64();
        let (tenant, id) = (x % SKEWED_TENANTS, (x >> 16) & !1);
        if seen.insert((tenant, id)) {
            present.push(&skewed_key(tenant, id));
            absent.push(&skewed_key(tenant, id | 1));
        }
    }
    (present, absent)
}

fn skewed_key(tenant: u64, id: u64) -> Vec<u8> {
    let mut key = format!("tenant/{tenant:04}/events/").into_bytes();
    key.extend_from_slice(&id.to_be_bytes()[2..]);
    key.extend_from_slice(&[0; SKEWED_ZEROS]);
    key
}

/// A 1 MiB pool of random bytes from which values are sliced, so values
/// are incompressible and building them costs no allocation.
#[derive(Clone, Debug)]
struct ValuePool {
    size: usize,
    bytes: Vec<u8>,
}

impl ValuePool {
    /// A megabyte (plus one value) of `kind` to cut values from.
    fn new(size: usize, kind: ValueKind) -> Self {
        let mut rng = Xorshift::new(0xA1E7);
        let len = (1 << 20) + size;
        let bytes = match kind {
            ValueKind::Random => (0..len).map(|_| rng.next_u64() as u8).collect(),
            ValueKind::Text => {
                let mut text = Vec::with_capacity(len + 512);
                while text.len() < len {
                    text.extend_from_slice(json_record(&mut rng).as_bytes());
                }
                text.truncate(len);
                text
            }
        };
        ValuePool { size, bytes }
    }

    fn get(&self, selector: usize) -> &[u8] {
        let start = selector % (self.bytes.len() - self.size);
        &self.bytes[start..start + self.size]
    }
}

/// One JSON-like record of about 300 bytes: fixed field names, a date,
/// small numbers and a few words drawn from short lists.
fn json_record(rng: &mut Xorshift) -> String {
    const STATUS: [&str; 3] = ["active", "pending", "closed"];
    const CITY: [&str; 4] = ["Springfield", "Shelbyville", "Ogdenville", "Brockway"];
    const TAG: [&str; 5] = ["red", "green", "blue", "gold", "silver"];
    let mut n = |below: u64| rng.below(below);
    format!(
        "{{\"id\":{},\"user\":\"user{:06}\",\"email\":\"user{:06}@example.com\",\
         \"created_at\":\"2026-{:02}-{:02}T{:02}:{:02}:{:02}Z\",\"status\":\"{}\",\
         \"score\":{},\"balance\":{}.{:02},\"tags\":[\"{}\",\"{}\"],\
         \"address\":{{\"street\":\"{} Main Street\",\"city\":\"{}\",\"zip\":\"{:05}\"}},\
         \"active\":{},\"visits\":{}}}\n",
        n(10_000_000),
        n(1_000_000),
        n(1_000_000),
        n(12) + 1,
        n(28) + 1,
        n(24),
        n(60),
        n(60),
        STATUS[n(3) as usize],
        n(100),
        n(100_000),
        n(100),
        TAG[n(5) as usize],
        TAG[n(5) as usize],
        n(9_999),
        CITY[n(4) as usize],
        n(99_999),
        n(2) == 0,
        n(1_000),
    )
}

/// Indexes into the present keys, uniformly at random.
pub fn uniform_order(n: usize, ops: usize, stream: u64) -> Vec<u32> {
    let mut rng = Xorshift::new(ACCESS_SEED ^ stream.wrapping_mul(0x9E37_79B9));
    (0..ops).map(|_| rng.below(n as u64) as u32).collect()
}

/// Indexes into the present keys, Zipfian: the hottest ranks are scattered
/// over the key space by a fixed multiplicative permutation.
pub fn zipf_order(n: usize, ops: usize) -> Vec<u32> {
    let zipf = Zipf::new(n as u64, ZIPF_THETA);
    let mut rng = Xorshift::new(ACCESS_SEED ^ 0x21FF);
    let scatter = scatter_factor(n as u64);
    (0..ops)
        .map(|_| ((zipf.sample(&mut rng) * scatter) % n as u64) as u32)
        .collect()
}

/// An odd multiplier coprime with `n`, so `rank * m mod n` is a permutation.
fn scatter_factor(n: u64) -> u64 {
    let mut m = (2_654_435_761 % n.max(2)) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keys_are_absent() {
        for keyset in [
            Keyset::Uniform,
            Keyset::Sequential,
            Keyset::Strings,
            Keyset::Skewed,
        ] {
            let d = DataSet::generate(keyset, 5_000, 100, ValueKind::Random);
            let present: HashSet<&[u8]> = (0..d.present.len()).map(|i| d.present.get(i)).collect();
            assert_eq!(present.len(), 5_000, "{keyset:?} keys are distinct");
            assert!((0..d.absent.len()).all(|i| !present.contains(d.absent.get(i))));
        }
    }

    #[test]
    fn generation_is_deterministic() {
        let a = DataSet::generate(Keyset::Uniform, 1_000, 64, ValueKind::Random);
        let b = DataSet::generate(Keyset::Uniform, 1_000, 64, ValueKind::Random);
        assert_eq!(a.present.get(999), b.present.get(999));
        assert_eq!(a.value(5, 0), b.value(5, 0));
        assert_ne!(a.value(5, 0), a.value(5, 1));
        assert_eq!(a.value(5, 1).len(), 64);
    }

    #[test]
    fn string_keys_share_a_long_prefix() {
        let d = DataSet::generate(Keyset::Strings, 10, 100, ValueKind::Random);
        assert!(d.present.get(3).starts_with(STRING_PREFIX.as_bytes()));
        assert_eq!(d.present.get(3).len(), 25);
    }

    #[test]
    fn skewed_keys_share_prefixes_and_end_in_zeros() {
        let d = DataSet::generate(Keyset::Skewed, 100, 100, ValueKind::Random);
        let key = d.present.get(7);
        assert_eq!(key.len(), 31);
        assert!(key.starts_with(b"tenant/000"));
        assert!(key.ends_with(&[0; SKEWED_ZEROS]));
    }

    #[test]
    fn hot_keys_sit_between_two_loaded_keys() {
        let d = DataSet::generate(Keyset::Strings, 1_000, 8, ValueKind::Random);
        let sorted = d.sorted_order();
        let (lo, hi) = (sorted[500] as usize, sorted[501] as usize);
        let hot = d.hot_keys(lo, 100);
        assert_eq!(hot.len(), 100);
        for i in 0..hot.len() {
            assert!(d.present.get(lo) < hot.get(i) && hot.get(i) < d.present.get(hi));
        }
    }

    #[test]
    fn sorted_order_sorts() {
        let d = DataSet::generate(Keyset::Uniform, 1_000, 8, ValueKind::Random);
        let order = d.sorted_order();
        assert!(
            order
                .windows(2)
                .all(|w| d.present.get(w[0] as usize) < d.present.get(w[1] as usize))
        );
    }

    #[test]
    fn text_values_are_json_like_and_repeat_their_field_names() {
        let d = DataSet::generate(Keyset::Uniform, 1_000, 400, ValueKind::Text);
        let value = d.value(17, 0);
        assert_eq!(value.len(), 400);
        assert!(
            value
                .iter()
                .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == b'\n')
        );
        let pool = &d.values.bytes;
        let field = b"\"created_at\":\"2026-";
        let repeats = pool.windows(field.len()).filter(|w| w == field).count();
        assert!(repeats > 2_000, "{repeats} records in a megabyte");
        assert_ne!(d.value(1, 0), d.value(2, 0));
    }

    #[test]
    fn zipf_order_stays_in_range() {
        let order = zipf_order(1_000, 10_000);
        assert!(order.iter().all(|&i| i < 1_000));
    }
}
