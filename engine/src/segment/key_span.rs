//! The smallest and largest `(keyspace, key)` a segment holds, so that
//! compaction can tell a segment that cannot hold a key of some range
//! without reading it.

/// A key with its keyspace, ordered by keyspace first.
pub type SpanKey = (u32, Vec<u8>);

/// Bounds on the keys of a segment's records.
#[derive(Debug, Default)]
pub struct KeySpan {
    bounds: Option<(SpanKey, SpanKey)>,
}

impl KeySpan {
    /// Widens the span to include `key` of `keyspace`.
    pub fn note(&mut self, keyspace: u32, key: &[u8]) {
        let point = (keyspace, key);
        match &mut self.bounds {
            None => self.bounds = Some(((keyspace, key.to_vec()), (keyspace, key.to_vec()))),
            Some((lo, hi)) => {
                if point < (lo.0, lo.1.as_slice()) {
                    *lo = (keyspace, key.to_vec());
                }
                if point > (hi.0, hi.1.as_slice()) {
                    *hi = (keyspace, key.to_vec());
                }
            }
        }
    }

    /// The smallest and largest key noted, if any.
    pub fn bounds(&self) -> Option<&(SpanKey, SpanKey)> {
        self.bounds.as_ref()
    }

    /// Whether a record of `keyspace` may be in the segment.
    pub fn may_hold_keyspace(&self, keyspace: u32) -> bool {
        self.bounds
            .as_ref()
            .is_some_and(|(lo, hi)| lo.0 <= keyspace && keyspace <= hi.0)
    }

    /// Whether a record of `keyspace` with a key in `[start, end)` may be
    /// in the segment.
    pub fn may_hold(&self, keyspace: u32, start: &[u8], end: &[u8]) -> bool {
        match &self.bounds {
            None => false,
            Some((lo, hi)) => {
                (keyspace, start) <= (hi.0, hi.1.as_slice())
                    && (lo.0, lo.1.as_slice()) < (keyspace, end)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_decided_on_keyspace_then_key() {
        let mut span = KeySpan::default();
        assert!(!span.may_hold(0, b"a", b"z"));
        span.note(1, b"m");
        span.note(1, b"p");
        assert!(span.may_hold(1, b"a", b"n"));
        assert!(span.may_hold(1, b"p", b"q"));
        assert!(!span.may_hold(1, b"q", b"z"));
        assert!(!span.may_hold(1, b"a", b"m"), "the end is exclusive");
        assert!(!span.may_hold(0, b"a", b"z"));
        assert!(!span.may_hold(2, b"a", b"z"));
    }
}
