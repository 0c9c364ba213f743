//! The stored form of a timestamped key: the user key escaped, a
//! terminator, then the timestamp.
//!
//! ```text
//! user key, each 0x00 written as 0x00 0xFF | 0x00 0x01 | timestamp bytes
//! ```
//!
//! No stored key contains `0x00` followed by anything but `0xFF` or `0x01`
//! before its terminator, so the terminator ends the user key exactly and
//! bytewise order of stored keys is the order of (user key bytewise,
//! timestamp bytes bytewise): at the first byte where two escaped user keys
//! differ, a `0x00` byte (escaped `0x00 0xFF`) sorts below any other byte
//! and the terminator `0x00 0x01` (end of the shorter key) below both. So
//! every version of one user key lies in one contiguous range,
//! [`versions_of`], and the user keys come in bytewise order. Which version
//! a read sees is chosen by the comparator's timestamp order
//! (`timestamped/version.rs`), never by the bytes of the timestamp.

/// The escape byte, and the first byte of the terminator.
const ESCAPE: u8 = 0x00;
/// Follows [`ESCAPE`] for a `0x00` byte of the user key.
const ESCAPED_ZERO: u8 = 0xFF;
/// Follows [`ESCAPE`] at the end of the user key.
const TERMINATOR: u8 = 0x01;

/// The stored key of a column family's own bookkeeping (its
/// `full_history_ts_low`): `0x00 0x00` is no user key's stored form.
pub(crate) const HISTORY_LOW_KEY: &[u8] = &[ESCAPE, ESCAPE];

/// `user_key` escaped and terminated: the first bytes of every stored
/// version of it.
fn prefix(user_key: &[u8]) -> Vec<u8> {
    let zeros = user_key.iter().filter(|&&b| b == ESCAPE).count();
    let mut out = Vec::with_capacity(user_key.len() + zeros + 2);
    for &byte in user_key {
        out.push(byte);
        if byte == ESCAPE {
            out.push(ESCAPED_ZERO);
        }
    }
    out.extend_from_slice(&[ESCAPE, TERMINATOR]);
    out
}

/// The stored key of `user_key` at timestamp `ts`.
pub(crate) fn encode(user_key: &[u8], ts: &[u8]) -> Vec<u8> {
    let mut out = prefix(user_key);
    out.extend_from_slice(ts);
    out
}

/// The range `[start, end)` of stored keys holding the versions of
/// `user_key`.
pub(crate) fn versions_of(user_key: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let start = prefix(user_key);
    let mut end = start.clone();
    if let Some(last) = end.last_mut() {
        *last = TERMINATOR + 1;
    }
    (start, end)
}

/// The user key and timestamp of `stored`, or `None` if it is not the
/// stored form of a key with a `ts_size`-byte timestamp.
pub(crate) fn decode(stored: &[u8], ts_size: usize) -> Option<(Vec<u8>, &[u8])> {
    let mut user_key = Vec::with_capacity(stored.len());
    let mut at = 0;
    while at < stored.len() {
        let byte = stored[at];
        if byte != ESCAPE {
            user_key.push(byte);
            at += 1;
            continue;
        }
        match *stored.get(at + 1)? {
            ESCAPED_ZERO => user_key.push(ESCAPE),
            TERMINATOR => {
                let ts = &stored[at + 2..];
                return (ts.len() == ts_size).then_some((user_key, ts));
            }
            _ => return None,
        }
        at += 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use quickcheck::quickcheck;

    use super::*;

    /// Keys over a small alphabet rich in escape and terminator bytes.
    fn narrow(bytes: Vec<u8>) -> Vec<u8> {
        const ALPHABET: [u8; 5] = [0x00, 0x01, 0x02, 0xFE, 0xFF];
        bytes
            .into_iter()
            .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()])
            .collect()
    }

    fn ts(n: u64) -> [u8; 8] {
        n.to_le_bytes()
    }

    quickcheck! {
        fn stored_order_is_user_key_then_timestamp_order(
            a: Vec<u8>, ta: u64, b: Vec<u8>, tb: u64
        ) -> bool {
            let (a, b) = (narrow(a), narrow(b));
            let stored = encode(&a, &ts(ta)).cmp(&encode(&b, &ts(tb)));
            let expected = a.cmp(&b).then(ts(ta).cmp(&ts(tb)));
            stored == expected
        }

        fn decoding_gives_back_the_key_and_timestamp(a: Vec<u8>, t: u64) -> bool {
            let a = narrow(a);
            let stored = encode(&a, &ts(t));
            decode(&stored, 8) == Some((a, &ts(t)[..]))
        }

        fn the_versions_range_holds_exactly_the_key_s_versions(
            a: Vec<u8>, b: Vec<u8>, t: u64
        ) -> bool {
            let (a, b) = (narrow(a), narrow(b));
            let (start, end) = versions_of(&a);
            let stored = encode(&b, &ts(t));
            let inside = start <= stored && stored < end;
            inside == (a == b)
        }
    }

    #[test]
    fn the_bookkeeping_key_is_no_user_key() {
        assert_eq!(decode(HISTORY_LOW_KEY, 8), None);
        assert_eq!(decode(HISTORY_LOW_KEY, 0), None);
        assert_eq!(
            encode(b"", &ts(1)).as_slice().cmp(HISTORY_LOW_KEY),
            Ordering::Greater
        );
    }

    #[test]
    fn a_wrong_timestamp_size_does_not_decode() {
        assert_eq!(decode(&encode(b"k", &ts(3)), 4), None);
        assert_eq!(decode(b"k\x00\x07", 0), None);
    }
}
