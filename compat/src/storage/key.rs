//! The order-preserving `i64` key encoding, and the mapping from the old
//! `RocksStorage` encoding (plain big-endian two's complement).

/// The sign bit, flipped so that bytewise order is numeric order.
const SIGN_BIT: u64 = 1 << 63;

/// The stored bytes of `key`: big-endian with the sign bit flipped.
pub fn encode_key(key: i64) -> [u8; 8] {
    ((key as u64) ^ SIGN_BIT).to_be_bytes()
}

/// The key stored as `bytes` by [`encode_key`]; `None` unless 8 bytes long.
pub fn decode_key(bytes: &[u8]) -> Option<i64> {
    let bytes: [u8; 8] = bytes.try_into().ok()?;
    Some((u64::from_be_bytes(bytes) ^ SIGN_BIT) as i64)
}

/// The key the old `RocksStorage` stored as `bytes` (`key.to_be_bytes()`).
pub fn key_from_legacy(bytes: [u8; 8]) -> i64 {
    i64::from_be_bytes(bytes)
}

/// The bytes AlexStorage stores for a key the old `RocksStorage` stored as
/// `bytes`: the same bytes with the top bit of the first one flipped.
pub fn legacy_to_encoded(mut bytes: [u8; 8]) -> [u8; 8] {
    bytes[0] ^= 0x80;
    bytes
}

#[cfg(test)]
mod tests {
    use super::{decode_key, encode_key, key_from_legacy, legacy_to_encoded};

    const SAMPLES: [i64; 9] = [
        i64::MIN,
        i64::MIN + 1,
        -256,
        -1,
        0,
        1,
        255,
        i64::MAX - 1,
        i64::MAX,
    ];

    #[test]
    fn bytewise_order_is_numeric_order() {
        for pair in SAMPLES.windows(2) {
            assert!(encode_key(pair[0]) < encode_key(pair[1]), "{pair:?}");
        }
        assert_eq!(encode_key(i64::MIN), [0; 8]);
        assert_eq!(encode_key(0), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            encode_key(-1),
            [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn encoding_round_trips_and_rejects_other_lengths() {
        for key in SAMPLES {
            assert_eq!(decode_key(&encode_key(key)), Some(key));
        }
        assert_eq!(decode_key(&[0; 7]), None);
    }

    #[test]
    fn legacy_keys_map_to_the_same_numbers() {
        for key in SAMPLES {
            let old = key.to_be_bytes();
            assert_eq!(key_from_legacy(old), key);
            assert_eq!(legacy_to_encoded(old), encode_key(key));
        }
    }
}
