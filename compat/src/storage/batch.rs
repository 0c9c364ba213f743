//! [`StorageBatch`]: inserts and deletes applied together.

/// One operation of a [`StorageBatch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Insert(i64, Vec<u8>),
    Delete(i64),
}

/// A list of inserts and deletes that `Storage::write_batch` applies
/// atomically and in order (a later operation on the same key wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StorageBatch {
    pub(crate) ops: Vec<Op>,
}

impl StorageBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an insert of `key` with `value`.
    pub fn insert(&mut self, key: i64, value: &[u8]) {
        self.ops.push(Op::Insert(key, value.to_vec()));
    }

    /// Adds a delete of `key`.
    pub fn delete(&mut self, key: i64) {
        self.ops.push(Op::Delete(key));
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.ops.clear();
    }
}
