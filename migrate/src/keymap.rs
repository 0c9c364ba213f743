//! Key ranges, and the mapping of source keys to target keys.
//!
//! Without `--i64-keys` keys are copied unchanged. With it, every key must
//! be an 8-byte big-endian `i64` as the seeds' `RocksStorage` wrote it
//! (`i64::to_be_bytes`), and is rewritten to the encoding of the compat
//! crate's `Storage` API: the same bytes with the sign bit flipped, so that
//! negative numbers sort before positive ones. The mapping changes the
//! order, so the source is read in two runs that together come out in
//! target order: first the keys starting with a byte `>= 0x80` (the
//! negative numbers), then the rest.

use crate::error::{MigrateError, Result};

/// Keys from `lower` (inclusive) to `upper` (exclusive); `None` is open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Smallest key included.
    pub lower: Option<Vec<u8>>,
    /// First key excluded.
    pub upper: Option<Vec<u8>>,
}

impl Bounds {
    /// Whether `key` lies within the bounds.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }
}

/// The smallest key greater than `key` in bytewise order.
pub fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

/// How source keys become target keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyMap {
    /// Keys are copied unchanged.
    #[default]
    Identity,
    /// 8-byte big-endian `i64` keys get their sign bit flipped.
    I64SignFlip,
}

impl KeyMap {
    /// The target key of source key `key` in `family`.
    pub fn map<'k>(&self, family: &str, key: &'k [u8]) -> Result<std::borrow::Cow<'k, [u8]>> {
        match self {
            KeyMap::Identity => Ok(key.into()),
            KeyMap::I64SignFlip => Ok(flip(family, key)?.into()),
        }
    }

    /// The source key of target key `key` (the mapping is its own inverse).
    pub fn unmap<'k>(&self, family: &str, key: &'k [u8]) -> Result<std::borrow::Cow<'k, [u8]>> {
        self.map(family, key)
    }

    /// The source ranges to read, in target order, to produce every target
    /// key after `resume_after` (every key when `None`).
    pub fn source_runs(&self, family: &str, resume_after: Option<&[u8]>) -> Result<Vec<Bounds>> {
        let mut runs = match self {
            KeyMap::Identity => vec![Bounds::default()],
            KeyMap::I64SignFlip => vec![
                Bounds {
                    lower: Some(vec![0x80]),
                    upper: None,
                },
                Bounds {
                    lower: None,
                    upper: Some(vec![0x80]),
                },
            ],
        };
        let Some(target_key) = resume_after else {
            return Ok(runs);
        };
        let source_key = self.unmap(family, target_key)?;
        let at = runs
            .iter()
            .position(|r| r.contains(&source_key))
            .unwrap_or(runs.len());
        let mut rest = runs.split_off(at);
        if let Some(first) = rest.first_mut() {
            first.lower = Some(successor(&source_key));
        }
        Ok(rest)
    }
}

/// Flips the sign bit of an 8-byte key.
fn flip(family: &str, key: &[u8]) -> Result<Vec<u8>> {
    if key.len() != 8 {
        return Err(MigrateError::BadI64Key {
            family: family.to_string(),
            key_hex: hex(key),
            len: key.len(),
        });
    }
    let mut out = key.to_vec();
    out[0] ^= 0x80;
    Ok(out)
}

/// Lower-case hex of `bytes`, shortened past 64 bytes.
pub fn hex(bytes: &[u8]) -> String {
    const MAX: usize = 64;
    let mut s: String = bytes.iter().take(MAX).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > MAX {
        s.push_str(&format!("...({} bytes)", bytes.len()));
    }
    if s.is_empty() {
        s.push_str("(empty)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i64_runs_come_out_in_numeric_order() {
        let map = KeyMap::I64SignFlip;
        let mut keys: Vec<i64> = vec![-5, 3, i64::MIN, 0, -1, i64::MAX, 7];
        let sources: Vec<[u8; 8]> = keys.iter().map(|k| k.to_be_bytes()).collect();
        let mut produced = Vec::new();
        for run in map.source_runs("f", None).unwrap() {
            let mut in_run: Vec<_> = sources.iter().filter(|s| run.contains(&s[..])).collect();
            in_run.sort();
            for s in in_run {
                let t = map.map("f", s).unwrap().into_owned();
                produced.push(t);
            }
        }
        let mut sorted = produced.clone();
        sorted.sort();
        assert_eq!(produced, sorted);
        keys.sort();
        assert_eq!(produced.len(), keys.len());
    }

    #[test]
    fn resume_skips_finished_runs() {
        let map = KeyMap::I64SignFlip;
        let last = map.map("f", &5i64.to_be_bytes()).unwrap().into_owned();
        let runs = map.source_runs("f", Some(&last)).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].lower, Some(successor(&5i64.to_be_bytes())));
        let last = map.map("f", &(-5i64).to_be_bytes()).unwrap().into_owned();
        assert_eq!(map.source_runs("f", Some(&last)).unwrap().len(), 2);
    }

    #[test]
    fn identity_resumes_after_the_key() {
        let runs = KeyMap::Identity.source_runs("f", Some(b"")).unwrap();
        assert_eq!(runs[0].lower, Some(vec![0]));
    }
}
