//! Projection of byte-string keys onto a node's `u64` model-key space.
//!
//! Every node stores a byte prefix `p`. The model key of `k` in that node is
//! the big-endian `u64` of the 8 bytes of `k` that follow `p` (zero padded)
//! when `k` starts with `p`; `0` when `k < p`; `u64::MAX` otherwise. The map
//! is monotone non-decreasing in bytewise key order, so nodes can search on
//! model keys and break ties (equal model keys) with full-key comparisons.

use super::node_heap::{HeapBox, slice_from};

/// Bytes of the build keys' common prefix left *out* of a node's prefix.
///
/// A node's prefix is the longest common prefix of the keys it was built
/// from, shortened by this many bytes. The slack keeps keys that arrive
/// later just outside the build range (the next `user:000999` after
/// `user:000000..user:000998`) inside the node's model-key domain instead of
/// clamping them all to `u64::MAX`, at the price of 16 of the 64 model-key
/// bits, which is plenty to separate the few hundred keys of a data node.
pub(crate) const PREFIX_SLACK: usize = 2;

/// The longest prefix kept inside the node itself.
const INLINE_PREFIX: usize = 22;

/// A node's key prefix: up to [`INLINE_PREFIX`] bytes inside the node (in
/// a data node's first cache line, which a lookup reads anyway), longer
/// ones in the index's heap (see `node_heap`), which costs a lookup one
/// more dependent cache miss per node.
#[derive(Clone, Debug)]
enum Prefix {
    Inline { len: u8, bytes: [u8; INLINE_PREFIX] },
    Heap(HeapBox<[u8]>),
}

impl Prefix {
    fn new(bytes: &[u8]) -> Self {
        match bytes.len() {
            len @ 0..=INLINE_PREFIX => {
                let mut inline = [0; INLINE_PREFIX];
                inline[..len].copy_from_slice(bytes);
                Prefix::Inline {
                    len: len as u8,
                    bytes: inline,
                }
            }
            _ => Prefix::Heap(slice_from(bytes.iter().copied())),
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            Prefix::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Prefix::Heap(bytes) => bytes,
        }
    }
}

impl std::ops::Deref for Prefix {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for Prefix {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Prefix {}

/// A node's key prefix and the projection it defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Projection {
    prefix: Prefix,
}

impl Default for Projection {
    fn default() -> Self {
        Self {
            prefix: Prefix::new(&[]),
        }
    }
}

impl Projection {
    /// The projection for a node built from keys in `first..=last`.
    pub(crate) fn for_range(first: &[u8], last: &[u8]) -> Self {
        let lcp = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let len = lcp.saturating_sub(PREFIX_SLACK);
        Self::with_prefix(&first[..len])
    }

    /// The projection of keys under `prefix`.
    fn with_prefix(prefix: &[u8]) -> Self {
        Self {
            prefix: Prefix::new(prefix),
        }
    }

    /// The model key of `key` in this node.
    #[inline]
    pub(crate) fn model_key(&self, key: &[u8]) -> u64 {
        if self.prefix.is_empty() {
            if let Ok(bytes) = <[u8; 8]>::try_from(key) {
                return u64::from_be_bytes(bytes);
            }
            return load_be(key);
        }
        match key.strip_prefix(&*self.prefix) {
            Some(rest) => load_be(rest),
            None if key < &*self.prefix => 0,
            None => u64::MAX,
        }
    }

    /// How model keys under `from` turn into model keys under this
    /// projection without the keys: unchanged if the prefixes are equal;
    /// if this prefix is `from`'s shortened by `d <= 8` bytes, the `d`
    /// dropped bytes followed by the top `8 - d` bytes of the old model key
    /// (for keys that start with `from`'s prefix); else not at all.
    pub(crate) fn reprojection_from(&self, from: &Projection) -> Reprojection {
        if self.prefix == from.prefix {
            return Reprojection::Same;
        }
        match from.prefix.strip_prefix(&*self.prefix) {
            Some(dropped) if dropped.len() <= 8 => Reprojection::Widen {
                high: load_be(dropped),
                shift: 8 * dropped.len() as u32,
            },
            _ => Reprojection::Unknown,
        }
    }

    /// The model key under this projection of a key whose model key under
    /// `from` (a prefix this one extends by at most 8 bytes) is `mk`, as
    /// far as `mk` tells: the bytes past `mk`'s end read as zeros. `None`
    /// if this prefix does not extend `from`'s so.
    pub(crate) fn narrowed_from(&self, from: &Projection, mk: u64) -> Option<u64> {
        let added = self.prefix.strip_prefix(&*from.prefix)?;
        if added.len() > 8 {
            return None;
        }
        let shift = 8 * added.len() as u32;
        let high = mk.checked_shr(64 - shift).unwrap_or(0);
        let wanted = load_be(added).checked_shr(64 - shift).unwrap_or(0);
        Some(match high.cmp(&wanted) {
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Greater => u64::MAX,
            std::cmp::Ordering::Equal => mk.checked_shl(shift).unwrap_or(0),
        })
    }

    /// Heap bytes held by the prefix (none when it is kept inline).
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.prefix {
            Prefix::Inline { .. } => 0,
            Prefix::Heap(bytes) => bytes.len(),
        }
    }
}

/// A map of model keys from one projection to another (see
/// [`Projection::reprojection_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reprojection {
    /// The same projection: model keys carry over.
    Same,
    /// A prefix shorter by `shift / 8` bytes, whose big-endian value
    /// (zero padded) is `high`.
    Widen {
        /// The dropped prefix bytes, in the top bytes.
        high: u64,
        /// Bits the old model key moves down.
        shift: u32,
    },
    /// Model keys do not carry over: read the keys.
    Unknown,
}

impl Reprojection {
    /// The model key under the new projection of a key whose model key
    /// under the old one is `mk`, if it follows from `mk` alone. A clamped
    /// old model key (`0` or `u64::MAX`, which a key outside the old prefix
    /// gets too) does not carry over a change of prefix.
    pub(crate) fn apply(self, mk: u64) -> Option<u64> {
        match self {
            Reprojection::Same => Some(mk),
            Reprojection::Widen { .. } if mk == 0 || mk == u64::MAX => None,
            Reprojection::Widen { high, shift } => Some(high | mk.checked_shr(shift).unwrap_or(0)),
            Reprojection::Unknown => None,
        }
    }
}

/// Big-endian `u64` of the first 8 bytes of `bytes`, zero padded.
#[inline]
fn load_be(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = bytes.len().min(8);
    buf[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_keys_narrow_to_a_longer_prefix() {
        let wide = Projection::for_range(b"ab", b"az");
        let narrow = Projection::for_range(b"abcd0000", b"abcd9999");
        let key = b"abcd1234";
        let mk = wide.model_key(key);
        assert_eq!(narrow.narrowed_from(&wide, mk), Some(narrow.model_key(key)));
        assert_eq!(
            narrow.narrowed_from(&wide, wide.model_key(b"aa99")),
            Some(0)
        );
        assert_eq!(
            narrow.narrowed_from(&wide, wide.model_key(b"ac00")),
            Some(u64::MAX)
        );
        assert_eq!(wide.narrowed_from(&wide, 77), Some(77));
        assert_eq!(wide.narrowed_from(&narrow, 77), None);
    }

    #[test]
    fn fast_path_matches_big_endian() {
        let p = Projection::default();
        assert_eq!(p.model_key(&7u64.to_be_bytes()), 7);
        assert_eq!(p.model_key(b""), 0);
        assert_eq!(p.model_key(b"\x01"), 1 << 56);
    }

    #[test]
    fn prefix_is_lcp_minus_slack() {
        let p = Projection::for_range(b"user:profile:000123", b"user:profile:000999");
        assert_eq!(&*p.prefix, b"user:profile:0");
        assert!(p.model_key(b"user:profile:000124") > p.model_key(b"user:profile:000123"));
        assert!(p.model_key(b"user:profile:001000") < u64::MAX);
        assert_eq!(p.model_key(b"a"), 0);
        assert_eq!(p.model_key(b"z"), u64::MAX);
    }

    /// A reprojected model key is the key's model key under the new
    /// projection, for keys of every length around the prefixes.
    #[test]
    fn reprojection_matches_the_new_model_key() {
        let long = Projection::with_prefix(b"abcdefghijkl");
        let keys: [&[u8]; 8] = [
            b"abcdefghij",
            b"abcdefghijk",
            b"abcdefghijkl\0",
            b"abcdefghijkl\x01\0\0",
            b"abcdefghijklmnopqrstuvwxyz",
            b"abcdefghijkl\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            b"abcdefghijklm",
            b"b",
        ];
        let mut applied = 0;
        for short in ["", "a", "abcd", "abcdefghij"] {
            let short = Projection::with_prefix(short.as_bytes());
            let how = short.reprojection_from(&long);
            for key in keys {
                if let Some(mk) = how.apply(long.model_key(key)) {
                    assert_eq!(mk, short.model_key(key), "{short:?} {key:?}");
                    applied += 1;
                }
            }
        }
        // Three keys under the long prefix, unclamped, for two projections.
        assert_eq!(applied, 6);
        assert_eq!(long.reprojection_from(&long), Reprojection::Same);
        assert_eq!(
            long.reprojection_from(&Projection::default()),
            Reprojection::Unknown
        );
    }

    /// Prefixes up to [`INLINE_PREFIX`] bytes stay in the node, longer
    /// ones go to the heap, and both project and reproject alike.
    #[test]
    fn inline_and_heap_prefixes_project_alike() {
        let inline = [b'p'; INLINE_PREFIX];
        let heap = [b'p'; INLINE_PREFIX + 4];
        for prefix in [&inline[..], &heap[..]] {
            let p = Projection::with_prefix(prefix);
            assert_eq!(
                p.heap_bytes(),
                if prefix.len() > INLINE_PREFIX {
                    prefix.len()
                } else {
                    0
                }
            );
            let key = [prefix, b"12345678rest"].concat();
            assert_eq!(p.model_key(&key), u64::from_be_bytes(*b"12345678"));
            assert_eq!(p.model_key(b"a"), 0);
            assert_eq!(p.model_key(b"z"), u64::MAX);
        }
        let (wide, narrow) = (
            Projection::with_prefix(&inline),
            Projection::with_prefix(&heap),
        );
        let key = [&heap[..], b"abcdefgh"].concat();
        let widened = wide
            .reprojection_from(&narrow)
            .apply(narrow.model_key(&key));
        assert_eq!(widened, Some(wide.model_key(&key)));
        assert_eq!(Projection::with_prefix(&heap), narrow);
        assert_ne!(wide, narrow);
    }

    #[test]
    fn projection_is_monotone() {
        let p = Projection::for_range(b"abcdef", b"abcdxy");
        let mut keys: Vec<&[u8]> = vec![
            b"", b"a", b"ab", b"abc", b"abc\0", b"abcd", b"abcde", b"abcdz", b"abd", b"b", b"\xff",
        ];
        keys.sort();
        let mks: Vec<u64> = keys.iter().map(|k| p.model_key(k)).collect();
        assert!(mks.windows(2).all(|w| w[0] <= w[1]), "{mks:?}");
    }
}
