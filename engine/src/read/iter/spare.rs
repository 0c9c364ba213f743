//! Buffers of dropped cursors, kept per thread for the next cursors.
//!
//! A cursor buffers the index payloads and the visible entries of each
//! refill. Allocating both afresh made every short seek pay two
//! allocations and two frees (about 250 instructions of a seek + 10 of
//! ~10,000); a cursor dropped hands its buffers back here, emptied, and the
//! next cursor on the same thread takes them.

use std::cell::RefCell;
use std::collections::VecDeque;

/// Buffer sets kept per thread: enough for a few cursors alive at once.
const KEPT: usize = 4;

/// The two buffers of a cursor.
pub(super) struct Buffers<T> {
    /// The visible entries of a refill, consumed from the front.
    pub(super) ahead: VecDeque<T>,
    /// The index payloads of a refill.
    pub(super) payloads: Vec<u64>,
}

impl<T> Default for Buffers<T> {
    fn default() -> Self {
        Buffers {
            ahead: VecDeque::new(),
            payloads: Vec::new(),
        }
    }
}

/// A pool of emptied [`Buffers`] for one thread.
pub(super) struct Spare<T> {
    kept: RefCell<Vec<Buffers<T>>>,
}

impl<T> Spare<T> {
    /// An empty pool.
    pub(super) const fn new() -> Self {
        Spare {
            kept: RefCell::new(Vec::new()),
        }
    }

    /// A set of buffers: a kept one, or new empty ones.
    pub(super) fn take(&self) -> Buffers<T> {
        self.kept
            .try_borrow_mut()
            .ok()
            .and_then(|mut kept| kept.pop())
            .unwrap_or_default()
    }

    /// Keeps `buffers`, emptied, unless the pool is full or they have grown
    /// past `most` entries (a long scan's; freed, so that a thread does not
    /// hold on to them).
    pub(super) fn give_back(&self, mut buffers: Buffers<T>, most: usize) {
        if buffers.ahead.capacity() > most || buffers.payloads.capacity() > most {
            return;
        }
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            return;
        };
        if kept.len() < KEPT {
            buffers.ahead.clear();
            buffers.payloads.clear();
            kept.push(buffers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_empty_with_their_capacity() {
        let spare = Spare::<u32>::new();
        let mut first = spare.take();
        first.ahead.extend([1, 2, 3]);
        first.payloads.extend([7, 8]);
        let capacity = first.payloads.capacity();
        spare.give_back(first, 16);
        let again = spare.take();
        assert!(again.ahead.is_empty() && again.payloads.is_empty());
        assert_eq!(again.payloads.capacity(), capacity);
        assert_eq!(spare.take().payloads.capacity(), 0, "only one was kept");
    }

    #[test]
    fn grown_buffers_and_a_full_pool_are_not_kept() {
        let spare = Spare::<u32>::new();
        let mut big = spare.take();
        big.payloads.reserve(100);
        spare.give_back(big, 16);
        assert_eq!(spare.kept.borrow().len(), 0);
        let sets: Vec<_> = (0..KEPT + 2).map(|_| spare.take()).collect();
        for set in sets {
            spare.give_back(set, 16);
        }
        assert_eq!(spare.kept.borrow().len(), KEPT);
    }
}
