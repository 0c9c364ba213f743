//! An order-sensitive checksum over a family's entries.
//!
//! XXH3-128 over the stream `len(key) key len(value) value ...`, lengths as
//! 8-byte little-endian integers, so the boundaries between keys and values
//! are part of what is hashed: two families have the same checksum only if
//! they hold the same entries in the same order (barring a 128-bit hash
//! collision). The same checksum is printed by `inspect`, so two databases
//! can be compared from their reports.

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3Default;

/// A running checksum, with the key count and byte totals.
#[derive(Clone, Default)]
pub struct Checksum {
    hasher: Xxh3Default,
    keys: u64,
    key_bytes: u64,
    value_bytes: u64,
}

/// The result of a finished checksum.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Digest {
    /// Number of entries.
    pub keys: u64,
    /// Total bytes of the keys.
    pub key_bytes: u64,
    /// Total bytes of the values.
    pub value_bytes: u64,
    /// XXH3-128 of the entry stream, as 32 hex digits.
    pub checksum: String,
}

impl Checksum {
    /// An empty checksum.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one entry.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.hasher.update(&(key.len() as u64).to_le_bytes());
        self.hasher.update(key);
        self.hasher.update(&(value.len() as u64).to_le_bytes());
        self.hasher.update(value);
        self.keys += 1;
        self.key_bytes += key.len() as u64;
        self.value_bytes += value.len() as u64;
    }

    /// The digest of everything added so far.
    pub fn digest(&self) -> Digest {
        Digest {
            keys: self.keys,
            key_bytes: self.key_bytes,
            value_bytes: self.value_bytes,
            checksum: format!("{:032x}", self.hasher.digest128()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(entries: &[(&[u8], &[u8])]) -> String {
        let mut c = Checksum::new();
        for (k, v) in entries {
            c.add(k, v);
        }
        c.digest().checksum
    }

    #[test]
    fn order_and_boundaries_matter() {
        let a = of(&[(b"a", b"1"), (b"b", b"2")]);
        assert_ne!(a, of(&[(b"b", b"2"), (b"a", b"1")]));
        assert_ne!(of(&[(b"ab", b"")]), of(&[(b"a", b"b")]));
        assert_eq!(a, of(&[(b"a", b"1"), (b"b", b"2")]));
    }
}
