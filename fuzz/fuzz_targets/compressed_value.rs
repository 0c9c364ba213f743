//! Compressed values (format version 5), two ways from every input.
//!
//! As stored bytes: the first byte splits the input into a value-dictionary
//! frame body and a stored value. A body that decodes gives a dictionary;
//! decoding the stored value with it must fail with a reason or give
//! exactly the length the value declares. (The record checksum, which
//! `recover_bytes` covers, stands in front of this in a segment: here the
//! decoder sees arbitrary bytes directly.)
//!
//! As a round trip: the same split as a dictionary's bytes and a value;
//! a value that compresses decodes back to itself.
//!
//! Never a panic, abort or unbounded allocation.
#![no_main]

use alexdb_engine::format::compressed_value::ValueDictionary;
use libfuzzer_sys::fuzz_target;

/// The largest value decoded (the engine's limit is larger; the fuzzer's
/// memory is not).
const LIMIT: usize = 1 << 24;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = (usize::from(split) * 8).min(rest.len());
    let (head, tail) = rest.split_at(at);
    as_stored(head, tail);
    round_trip(head, tail);
});

fn as_stored(body: &[u8], stored: &[u8]) {
    let dictionary = ValueDictionary::decode_body(body).unwrap_or_else(|_| ValueDictionary::new(Vec::new()));
    if let Ok(value) = dictionary.decompress(stored, LIMIT) {
        assert!(value.len() <= LIMIT);
    }
}

fn round_trip(dictionary: &[u8], value: &[u8]) {
    let dictionary = ValueDictionary::new(dictionary.to_vec());
    let body = dictionary.encode_body();
    assert_eq!(ValueDictionary::decode_body(&body).as_ref(), Ok(&dictionary));
    if let Some(stored) = dictionary.compress(value) {
        assert!(stored.len() < value.len());
        assert_eq!(dictionary.decompress(&stored, LIMIT).as_deref(), Ok(value));
    }
}
