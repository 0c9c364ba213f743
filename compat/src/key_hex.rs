//! Keys and timestamps in upper-case hexadecimal, as RocksDB prints them in
//! its messages and property texts.

/// `bytes` in upper-case hexadecimal, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}
