//! The timestamp order of rust-rocksdb's own tests (a `u64`, little-endian,
//! newer versions first), for tests of user-defined timestamps.

use std::cmp::Ordering;

use alexdb::{Options, ReadOptions};

/// The timestamp `n`.
pub fn ts(n: u64) -> [u8; 8] {
    n.to_le_bytes()
}

/// Read options reading at timestamp `n`.
pub fn read_at(n: u64) -> ReadOptions {
    let mut opts = ReadOptions::default();
    opts.set_timestamp(ts(n));
    opts
}

fn compare_ts(a: &[u8], b: &[u8]) -> Ordering {
    let number = |t: &[u8]| u64::from_le_bytes(t.try_into().unwrap());
    number(a).cmp(&number(b))
}

fn strip(key: &[u8], has_ts: bool) -> &[u8] {
    if has_ts { &key[..key.len() - 8] } else { key }
}

/// Sets a comparator with 8-byte timestamps on `opts` that orders user
/// keys by `user_order` and one key's versions newest first.
pub fn set_u64_comparator(opts: &mut Options, user_order: fn(&[u8], &[u8]) -> Ordering) {
    let without_ts = move |a: &[u8], a_ts: bool, b: &[u8], b_ts: bool| {
        user_order(strip(a, a_ts), strip(b, b_ts))
    };
    let compare = move |a: &[u8], b: &[u8]| {
        without_ts(a, true, b, true)
            .then_with(|| compare_ts(&a[a.len() - 8..], &b[b.len() - 8..]).reverse())
    };
    opts.set_comparator_with_ts(
        "u64-timestamps",
        8,
        Box::new(compare),
        Box::new(compare_ts),
        Box::new(without_ts),
    );
}
