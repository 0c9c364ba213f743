//! A structure built from a sealed segment on first use and kept until the
//! memory budget drops it (see `compaction::budget`): the next use builds
//! it again from the segment, which never changes once sealed.

use std::sync::{Arc, Mutex, PoisonError};

/// A lazily built, droppable `T`.
#[derive(Debug)]
pub(crate) struct Rebuildable<T> {
    built: Mutex<Option<Arc<T>>>,
}

impl<T> Default for Rebuildable<T> {
    fn default() -> Self {
        Rebuildable {
            built: Mutex::new(None),
        }
    }
}

impl<T> Rebuildable<T> {
    /// The structure, built by `build` (outside the lock) if it is not.
    pub(crate) fn get_or_build(&self, build: impl FnOnce() -> T) -> Arc<T> {
        if let Some(built) = self.lock().as_ref() {
            return Arc::clone(built);
        }
        let fresh = Arc::new(build());
        Arc::clone(self.lock().get_or_insert(fresh))
    }

    /// `measure` of the structure if it is built, else 0.
    pub(crate) fn bytes(&self, measure: impl FnOnce(&T) -> usize) -> usize {
        self.lock().as_deref().map_or(0, measure)
    }

    /// Drops the structure (a user holding it keeps its copy); returns
    /// whether it was built.
    pub(crate) fn drop_built(&self) -> bool {
        self.lock().take().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<T>>> {
        // Every change is a single assignment: a poisoned lock is consistent.
        self.built.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_once_until_dropped_then_built_again() {
        let cache = Rebuildable::<Vec<u8>>::default();
        let builds = std::cell::Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            vec![7; 10]
        };
        assert_eq!(cache.bytes(Vec::len), 0);
        assert_eq!(*cache.get_or_build(build), vec![7; 10]);
        assert_eq!(*cache.get_or_build(build), vec![7; 10]);
        assert_eq!((builds.get(), cache.bytes(Vec::len)), (1, 10));
        let held = cache.get_or_build(build);
        assert!(cache.drop_built() && !cache.drop_built());
        assert_eq!((held.len(), cache.bytes(Vec::len)), (10, 0));
        cache.get_or_build(build);
        assert_eq!(builds.get(), 2);
    }
}
