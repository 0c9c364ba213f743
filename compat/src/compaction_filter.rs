//! Compaction filters: user functions that may keep, drop or rewrite each
//! entry when it is compacted, set with `Options::set_compaction_filter`.

use std::ffi::CStr;

/// What a compaction filter decides for one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep the entry as it is.
    Keep,
    /// Remove the entry.
    Remove,
    /// Keep the key with this new value.
    Change(&'static [u8]),
}

/// A stateful compaction filter, as created by a
/// [`CompactionFilterFactory`](crate::compaction_filter_factory::CompactionFilterFactory).
pub trait CompactionFilter {
    /// Decides the fate of `key` with `value`, found at `level`.
    fn filter(&mut self, level: u32, key: &[u8], value: &[u8]) -> Decision;

    /// The filter's name.
    fn name(&self) -> &CStr;
}

/// The shape of a compaction filter function: `(level, key, value) -> Decision`.
pub trait CompactionFilterFn: FnMut(u32, &[u8], &[u8]) -> Decision {}

impl<F> CompactionFilterFn for F where F: FnMut(u32, &[u8], &[u8]) -> Decision + Send + 'static {}
