//! Index checkpoint bodies (`INDEX`), two ways from every input.
//!
//! As bytes: the fuzzer's bytes are the body and the target appends their
//! checksum, so that the parser behind it sees arbitrary content with a
//! valid one (a flipped bit without a new checksum stops at the check,
//! which `recover_bytes` covers). Decoding must fail with a reason or give
//! a checkpoint whose every entry can be read and whose keys strictly
//! ascend within each section (the open bulk-loads the index from them in
//! file order); one that decodes, written again as the engine writes it
//! (each section's entries streamed out before its counts are filled in),
//! decodes to the same checkpoint.
//!
//! As entries: the same bytes choose sections of entries, in either
//! format version, with keys often repeated or out of order, written with
//! valid checksums as a writer that lost the key order would write them.
//! The checkpoint must decode, to those entries, exactly when every
//! section's keys strictly ascend.
//!
//! Never a panic, abort or unbounded allocation.
#![no_main]

use alexdb_engine::format::crc::crc32c;
use alexdb_engine::format::index_checkpoint::{
    Cut, Encoder, IndexCheckpoint, KeyspaceSection, decode,
};
use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    as_bytes(body);
    let _ = as_entries(&mut Unstructured::new(body));
});

/// The fuzzer's bytes as a checkpoint body.
fn as_bytes(body: &[u8]) {
    let mut file = body.to_vec();
    file.extend_from_slice(&crc32c(body).to_le_bytes());
    let Ok(checkpoint) = decode(&file) else {
        return;
    };
    for section in &checkpoint.keyspaces {
        assert_ascending(section);
    }
    let again = encode(&checkpoint);
    let decoded = decode(&again).expect("a checkpoint written again decodes");
    assert_same(&checkpoint, &decoded);
}

/// One section as the fuzzer chose it: keyspace id, (key, location)s.
type Section = (u32, Vec<(Vec<u8>, u64)>);

/// The fuzzer's bytes as sections of entries, written with valid checksums.
fn as_entries(u: &mut Unstructured<'_>) -> Result<()> {
    let fixed_width = u.arbitrary::<bool>()?;
    let cut = Cut {
        seq: u.arbitrary()?,
        segment: u.arbitrary()?,
        offset: u.arbitrary()?,
    };
    let mut sections: Vec<Section> = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        let id = u.arbitrary()?;
        let mut entries: Vec<(Vec<u8>, u64)> = Vec::new();
        for _ in 0..u.int_in_range(0..=64)? {
            let key = match (entries.last(), u.int_in_range(0..=3)?) {
                // The previous key again, or one it is a prefix of, or one
                // sharing part of it: repeats and near-misses in order.
                (Some((prev, _)), 0) => prev.clone(),
                (Some((prev, _)), 1) => {
                    let mut key = prev.clone();
                    key.push(u.arbitrary()?);
                    key
                }
                (Some((prev, _)), 2) => {
                    let shared = u.int_in_range(0..=prev.len())?;
                    let mut key = prev[..shared].to_vec();
                    let len = u.int_in_range(0..=8)?;
                    key.extend_from_slice(u.bytes(len)?);
                    key
                }
                _ => {
                    let len = u.int_in_range(0..=16)?;
                    u.bytes(len)?.to_vec()
                }
            };
            entries.push((key, u.arbitrary()?));
        }
        sections.push((id, entries));
    }
    let file = match fixed_width {
        true => write_fixed_width(cut, &sections),
        false => write_front_coded(cut, &sections),
    };
    let ascending = sections
        .iter()
        .all(|(_, e)| e.windows(2).all(|w| w[0].0 < w[1].0));
    match decode(&file) {
        Ok(c) => {
            assert!(ascending, "a section whose keys do not ascend decoded");
            assert_eq!(c.keyspaces.len(), sections.len());
            for (got, (id, entries)) in c.keyspaces.iter().zip(&sections) {
                assert_ascending(got);
                assert_eq!((got.id, got.len()), (*id, entries.len()));
                for (i, (key, location)) in entries.iter().enumerate() {
                    assert_eq!((got.key(i), got.location(i)), (&key[..], *location));
                }
            }
        }
        Err(reason) => assert!(!ascending, "a well-formed checkpoint refused: {reason}"),
    }
    Ok(())
}

/// `sections` in version 4's layout, written as the engine writes it.
fn write_front_coded(cut: Cut, sections: &[Section]) -> Vec<u8> {
    let mut enc = Encoder::new(cut, &[], sections.len() as u32);
    let (mut out, mut counts) = (Vec::new(), Vec::new());
    for (id, entries) in sections {
        let slot = enc.keyspace(*id, &[]);
        let (mut prev_key, mut prev_location): (&[u8], u64) = (&[], 0);
        for (key, location) in entries {
            enc.entry(prev_key, key, prev_location, *location);
            (prev_key, prev_location) = (key, *location);
        }
        enc.pad();
        out.extend(enc.take());
        let key_bytes = entries.iter().map(|(k, _)| k.len() as u64).sum();
        counts.push(enc.count(slot, entries.len() as u64, key_bytes));
    }
    out.extend(enc.finish());
    for c in counts {
        let at = c.at as usize;
        out[at..at + c.bytes.len()].copy_from_slice(&c.bytes);
    }
    out
}

/// `sections` in version 3's fixed-width layout (locations, cumulative key
/// ends, key bytes), with the version and checksum set to match.
fn write_fixed_width(cut: Cut, sections: &[Section]) -> Vec<u8> {
    let mut enc = Encoder::new(cut, &[], sections.len() as u32);
    let (mut out, mut counts) = (Vec::new(), Vec::new());
    for (id, entries) in sections {
        let slot = enc.keyspace(*id, &[]);
        for (_, location) in entries {
            enc.put(&location.to_le_bytes());
        }
        let mut end = 0u64;
        for (key, _) in entries {
            end += key.len() as u64;
            enc.put(&end.to_le_bytes());
        }
        for (key, _) in entries {
            enc.put(key);
        }
        enc.pad();
        out.extend(enc.take());
        counts.push(enc.count(slot, entries.len() as u64, end));
    }
    out.extend(enc.finish());
    for c in counts {
        let at = c.at as usize;
        out[at..at + c.bytes.len()].copy_from_slice(&c.bytes);
    }
    out[8..12].copy_from_slice(&3u32.to_le_bytes());
    let body = out.len() - 4;
    let crc = crc32c(&out[..body]);
    out[body..].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Fails unless the section's keys strictly ascend.
fn assert_ascending(section: &KeyspaceSection<'_>) {
    for i in 1..section.len() {
        assert!(
            section.key(i - 1) < section.key(i),
            "keyspace {}: entry {i} is not above the one before it",
            section.id
        );
    }
}

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
