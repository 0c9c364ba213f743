//! Index checkpoint bodies (`INDEX`): the fuzzer's bytes are the body and
//! the target appends their checksum, so that the parser behind it sees
//! arbitrary content with a valid one (a flipped bit without a new checksum
//! stops at the check, which `recover_bytes` covers). Decoding must fail
//! with a reason or give a checkpoint whose every entry can be read; one
//! that decodes, written again as the engine writes it (each section's
//! entries streamed out before its counts are filled in), decodes to the
//! same checkpoint. Never a panic, abort or unbounded allocation.
#![no_main]

use alexdb_engine::format::crc::crc32c;
use alexdb_engine::format::index_checkpoint::{Encoder, IndexCheckpoint, decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let mut file = body.to_vec();
    file.extend_from_slice(&crc32c(body).to_le_bytes());
    let Ok(checkpoint) = decode(&file) else {
        return;
    };
    let again = encode(&checkpoint);
    let decoded = decode(&again).expect("a checkpoint written again decodes");
    assert_same(&checkpoint, &decoded);
});

/// Writes `c` as `index_save` does: sections streamed out, counts last.
fn encode(c: &IndexCheckpoint<'_>) -> Vec<u8> {
    let mut enc = Encoder::new(c.cut, &c.segments, c.keyspaces.len() as u32);
    let mut out = Vec::new();
    let mut counts = Vec::new();
    for section in &c.keyspaces {
        let slot = enc.keyspace(section.id, &section.tombstones);
        out.extend(enc.take());
        let (mut prev_key, mut prev_location): (&[u8], u64) = (&[], 0);
        let mut key_bytes = 0;
        for i in 0..section.len() {
            let (key, location) = (section.key(i), section.location(i));
            enc.entry(prev_key, key, prev_location, location);
            key_bytes += key.len() as u64;
            (prev_key, prev_location) = (key, location);
        }
        enc.pad();
        out.extend(enc.take());
        counts.push(enc.count(slot, section.len() as u64, key_bytes));
    }
    out.extend(enc.finish());
    for c in counts {
        let at = c.at as usize;
        out[at..at + c.bytes.len()].copy_from_slice(&c.bytes);
    }
    out
}

/// Fails unless `a` and `b` hold the same checkpoint.
fn assert_same(a: &IndexCheckpoint<'_>, b: &IndexCheckpoint<'_>) {
    assert_eq!(a.cut, b.cut);
    assert_eq!(a.segments, b.segments);
    assert_eq!(a.keyspaces.len(), b.keyspaces.len());
    for (x, y) in a.keyspaces.iter().zip(&b.keyspaces) {
        assert_eq!(
            (x.id, &x.tombstones, x.len()),
            (y.id, &y.tombstones, y.len())
        );
        for i in 0..x.len() {
            assert_eq!((x.key(i), x.location(i)), (y.key(i), y.location(i)));
        }
    }
}
