//! [`CSlice`]: an owned byte slice returned by
//! `key_may_exist_cf_opt_value`, as rocksdb's.

use std::ops::Deref;

/// A value returned by a read that found it; dereferences to its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CSlice {
    bytes: Vec<u8>,
}

impl CSlice {
    pub(crate) fn new(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }
}

impl AsRef<[u8]> for CSlice {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Deref for CSlice {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}
