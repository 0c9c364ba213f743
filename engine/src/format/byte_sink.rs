//! [`ByteSink`]: a growable byte buffer records are encoded into.
//!
//! Records are appended to a `Vec<u8>` by the writers and to a compaction
//! output's buffer, whose memory is mapped on its own
//! (`io::transient`) so that freeing it gives the memory back at once.

use std::ops::DerefMut;

use allocator_api2::alloc::Allocator;

/// A growable byte buffer: what encoding a record needs of one.
pub trait ByteSink: DerefMut<Target = [u8]> {
    /// Appends `bytes`.
    fn extend_from_slice(&mut self, bytes: &[u8]);
    /// Appends one byte.
    fn push(&mut self, byte: u8);
    /// Grows or shrinks the buffer to `len` bytes, filling with `value`.
    fn resize(&mut self, len: usize, value: u8);
}

impl ByteSink for Vec<u8> {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }

    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }

    fn resize(&mut self, len: usize, value: u8) {
        Vec::resize(self, len, value);
    }
}

impl<A: Allocator> ByteSink for allocator_api2::vec::Vec<u8, A> {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        allocator_api2::vec::Vec::extend_from_slice(self, bytes);
    }

    fn push(&mut self, byte: u8) {
        allocator_api2::vec::Vec::push(self, byte);
    }

    fn resize(&mut self, len: usize, value: u8) {
        allocator_api2::vec::Vec::resize(self, len, value);
    }
}
