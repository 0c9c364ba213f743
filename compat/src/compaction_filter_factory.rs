//! Compaction filter factories: a fresh [`CompactionFilter`] per compaction,
//! set with `Options::set_compaction_filter_factory`.

use std::ffi::CStr;

use crate::compaction_filter::{CompactionFilter, Decision};

/// Creates a [`CompactionFilter`] for each compaction run.
pub trait CompactionFilterFactory {
    /// The filter type this factory makes.
    type Filter: CompactionFilter;

    /// Makes the filter for one compaction run.
    fn create(&mut self, context: CompactionFilterContext) -> Self::Filter;

    /// The factory's name.
    fn name(&self) -> &CStr;
}

/// What a compaction run is, as told to a [`CompactionFilterFactory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionFilterContext {
    /// Whether the run includes all data files.
    pub is_full_compaction: bool,
    /// Whether the client asked for the run (rather than it being automatic).
    pub is_manual_compaction: bool,
}

/// A factory as the options keep it: whatever its filter type, it makes a
/// filter for one run and passes each entry through it.
pub(crate) trait FilterSource: Send {
    /// Makes a filter for a run described by `context` and hands `run` a
    /// function that asks it about one entry.
    fn with_filter(&mut self, context: CompactionFilterContext, run: &mut FilterRun<'_>);
}

/// A filter asked about one entry: `(level, key, value) -> Decision`.
pub(crate) type EntryFilter<'a> = dyn FnMut(u32, &[u8], &[u8]) -> Decision + 'a;

/// What [`FilterSource::with_filter`] runs: it gets the run's filter.
pub(crate) type FilterRun<'a> = dyn FnMut(&mut EntryFilter<'_>) + 'a;

impl<F: CompactionFilterFactory + Send> FilterSource for F {
    fn with_filter(&mut self, context: CompactionFilterContext, run: &mut FilterRun<'_>) {
        let mut filter = self.create(context);
        run(&mut |level, key, value| filter.filter(level, key, value));
    }
}
