//! One emptied engine batch per thread, kept for that thread's next write.
//!
//! Every write through the drop-in (a single `put` included) is handed to
//! the engine as an engine [`WriteBatch`], whose two buffers cost two
//! allocations and two frees a write. A thread's writes reuse one batch
//! instead; a batch that grew past [`KEPT_BYTES`] is freed, not kept, so a
//! thread that once wrote a large batch does not hold its memory.

use std::cell::Cell;

use alexdb_engine::WriteBatch;

/// Largest allocation an emptied batch may keep to be reused.
const KEPT_BYTES: usize = 64 << 10;

thread_local! {
    static SPARE: Cell<Option<WriteBatch>> = const { Cell::new(None) };
}

/// An empty batch with room for `ops` operations of `bytes` in all: the
/// thread's spare one if it has one.
#[inline]
pub(crate) fn take(ops: usize, bytes: usize) -> WriteBatch {
    match SPARE.try_with(Cell::take).ok().flatten() {
        Some(mut batch) => {
            batch.reserve(ops, bytes);
            batch
        }
        None => WriteBatch::with_capacity(ops, bytes),
    }
}

/// Empties `batch` and keeps it for the thread's next write, unless it is
/// large.
#[inline]
pub(crate) fn give_back(mut batch: WriteBatch) {
    if batch.allocated_bytes() > KEPT_BYTES {
        return;
    }
    batch.clear();
    // During the thread's teardown the slot may be gone: the batch is
    // then simply freed.
    let _ = SPARE.try_with(|spare| spare.set(Some(batch)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use alexdb_engine::KeyspaceId;

    #[test]
    fn a_small_batch_is_reused_emptied_and_a_large_one_is_not() {
        let mut batch = take(1, 16);
        batch.put(KeyspaceId(0), b"key", b"value");
        give_back(batch);
        let reused = take(1, 16);
        assert!(reused.is_empty());
        assert!(
            reused.allocated_bytes() > 0,
            "the spare batch was not reused"
        );

        let mut large = reused;
        large.put(KeyspaceId(0), b"k", &vec![0u8; KEPT_BYTES + 1]);
        give_back(large);
        assert_eq!(take(0, 0).allocated_bytes(), 0, "a large batch was kept");
    }
}
