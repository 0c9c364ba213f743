//! A Bloom filter over the `(keyspace, key)` pairs of a sealed segment, so
//! that compaction can tell, without reading the segment, that it holds no
//! older version of a key whose tombstone it wants to drop. Built in memory
//! on first use, from one walk of the segment (sealed segments never
//! change), at sixteen bits per record.

use std::hash::{DefaultHasher, Hash, Hasher};

/// Bits per key: about 0.05% false positives with [`PROBES`] probes. A
/// delete is checked against every surviving segment whose key span covers
/// it, a dozen or more after a large compaction, and each false positive
/// keeps it (with 10 bits, 1% per segment kept a tenth of the deletes).
const BITS_PER_KEY: usize = 16;
/// Probes per key.
const PROBES: u32 = 11;

/// A set of keys that answers "certainly not" or "maybe".
#[derive(Debug)]
pub struct KeyFilter {
    bits: Vec<u64>,
}

impl KeyFilter {
    /// A filter holding `keys` (an upper bound on their number is
    /// `count`).
    pub fn build<'a>(count: usize, keys: impl Iterator<Item = (u32, &'a [u8])>) -> Self {
        let words = (count.max(1) * BITS_PER_KEY).div_ceil(64);
        let mut filter = KeyFilter {
            bits: vec![0; words],
        };
        for (keyspace, key) in keys {
            let bits: Vec<usize> = filter.probes(keyspace, key).collect();
            for bit in bits {
                filter.bits[bit / 64] |= 1 << (bit % 64);
            }
        }
        filter
    }

    /// Heap bytes of the filter.
    pub fn heap_bytes(&self) -> usize {
        self.bits.len() * 8
    }

    /// Whether `key` of `keyspace` may be in the set.
    pub fn may_contain(&self, keyspace: u32, key: &[u8]) -> bool {
        self.probes(keyspace, key)
            .all(|bit| self.bits[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.bits.len() * 8
    }

    /// The bit positions of a key (double hashing).
    fn probes(&self, keyspace: u32, key: &[u8]) -> impl Iterator<Item = usize> + use<> {
        let mut hasher = DefaultHasher::new();
        (keyspace, key).hash(&mut hasher);
        let h = hasher.finish();
        let (a, b) = (h, (h >> 32) | 1);
        let n = self.bits.len() as u64 * 64;
        (0..u64::from(PROBES)).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % n) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_every_key_and_rejects_most_others() {
        let keys: Vec<Vec<u8>> = (0..10_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let filter = KeyFilter::build(keys.len(), keys.iter().map(|k| (1, k.as_slice())));
        assert!(keys.iter().all(|k| filter.may_contain(1, k)));
        let false_positives = (10_000..20_000u32)
            .filter(|i| filter.may_contain(1, &i.to_be_bytes()))
            .count();
        assert!(
            false_positives < 300,
            "{false_positives} false positives in 10,000"
        );
        assert!(keys.iter().filter(|k| filter.may_contain(2, k)).count() < 300);
    }
}
