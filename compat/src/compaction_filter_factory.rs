//! Compaction filter factories: a fresh [`CompactionFilter`] per compaction,
//! set with `Options::set_compaction_filter_factory`.

use std::ffi::CStr;

use crate::compaction_filter::CompactionFilter;

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
/// filter for one run.
pub(crate) trait FilterSource: Send {
    /// Makes a filter for a run described by `context`.
    fn make(&mut self, context: CompactionFilterContext) -> Box<dyn CompactionFilter>;
}

impl<F: CompactionFilterFactory + Send + 'static> FilterSource for F {
    fn make(&mut self, context: CompactionFilterContext) -> Box<dyn CompactionFilter> {
        Box::new(self.create(context))
    }
}
