//! [`DBPinnableSlice`]: a value read without copying.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use alexdb_engine::ValueRef;

/// A value returned by `get_pinned` and friends: it points into the
/// database's memory-mapped segment file, so reading it copies nothing.
///
/// It derefs to `&[u8]`. While it lives, the segment holding the value
/// stays mapped, even if compaction replaces that segment in the meantime;
/// the lifetime ties it to its database, as in rocksdb.
pub struct DBPinnableSlice<'a> {
    value: Held,
    /// Bytes of `value` that are the user's (a TTL stamp is not).
    len: usize,
    db: PhantomData<&'a ()>,
}

/// Where the bytes are.
enum Held {
    /// In a mapped segment.
    Mapped(ValueRef),
    /// In memory: a transaction's own pending write.
    Owned(Vec<u8>),
}

impl DBPinnableSlice<'_> {
    /// Wraps `value`, of which the last `trim` bytes are not the user's.
    pub(crate) fn new(value: ValueRef, trim: usize) -> Self {
        let len = value.len().saturating_sub(trim);
        Self {
            value: Held::Mapped(value),
            len,
            db: PhantomData,
        }
    }

    /// A value held in memory (a transaction's own write).
    pub(crate) fn owned(value: Vec<u8>) -> Self {
        Self {
            len: value.len(),
            value: Held::Owned(value),
            db: PhantomData,
        }
    }
}

impl AsRef<[u8]> for DBPinnableSlice<'_> {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Deref for DBPinnableSlice<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        let bytes: &[u8] = match &self.value {
            Held::Mapped(value) => value,
            Held::Owned(value) => value,
        };
        &bytes[..self.len]
    }
}

impl fmt::Debug for DBPinnableSlice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DBPinnableSlice")
            .field(&self.as_ref())
            .finish()
    }
}
