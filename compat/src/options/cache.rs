//! Memory budgets that RocksDB shares between databases: [`Cache`],
//! [`LruCacheOptions`] and [`WriteBufferManager`].
//!
//! AlexDB reads its data through memory maps and keeps no block cache, so a
//! cache holds nothing: it remembers its capacity and reports zero usage.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A block or row cache, shared by cloning.
///
/// AlexDB has no block cache; a `Cache` records its capacity and kind so
/// that code that configures one keeps working (and finds them in `LOG`),
/// and always reports zero usage.
#[derive(Clone, Debug)]
pub struct Cache {
    capacity: Arc<AtomicUsize>,
    kind: CacheKind,
}

/// Which of RocksDB's caches a [`Cache`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheKind {
    /// `new_lru_cache`.
    Lru,
    /// `new_hyper_clock_cache` with an entry charge estimate of 0.
    AutoHyperClock,
    /// `new_hyper_clock_cache` with an entry charge estimate.
    FixedHyperClock,
}

impl Cache {
    /// Creates an LRU cache of `capacity` bytes.
    pub fn new_lru_cache(capacity: usize) -> Cache {
        Self::of_kind(capacity, CacheKind::Lru)
    }

    fn of_kind(capacity: usize, kind: CacheKind) -> Cache {
        Cache {
            capacity: Arc::new(AtomicUsize::new(capacity)),
            kind,
        }
    }

    /// Creates an LRU cache from `opts`.
    pub fn new_lru_cache_opts(opts: &LruCacheOptions) -> Cache {
        Self::new_lru_cache(opts.capacity)
    }

    /// Creates a HyperClockCache of `capacity` bytes; the entry charge
    /// estimate is accepted for compatibility and has no effect.
    pub fn new_hyper_clock_cache(capacity: usize, estimated_entry_charge: usize) -> Cache {
        let kind = if estimated_entry_charge == 0 {
            CacheKind::AutoHyperClock
        } else {
            CacheKind::FixedHyperClock
        };
        Self::of_kind(capacity, kind)
    }

    /// Bytes held by the cache: always 0, AlexDB caches no blocks.
    pub fn get_usage(&self) -> usize {
        0
    }

    /// Bytes pinned in the cache: always 0, AlexDB caches no blocks.
    pub fn get_pinned_usage(&self) -> usize {
        0
    }

    /// Sets the capacity in bytes (shared by every clone of this cache).
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity.store(capacity, Ordering::Relaxed);
    }

    /// The capacity in bytes.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Which kind of RocksDB cache this stands for.
    pub(crate) fn kind(&self) -> CacheKind {
        self.kind
    }

    /// An address shared by every clone (what `LOG` prints for the cache).
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.capacity) as usize
    }
}

/// Settings for [`Cache::new_lru_cache_opts`].
#[derive(Clone, Debug, Default)]
pub struct LruCacheOptions {
    capacity: usize,
}

impl LruCacheOptions {
    /// Sets the cache capacity in bytes.
    pub fn set_capacity(&mut self, cap: usize) {
        self.capacity = cap;
    }

    /// Accepted for compatibility; AlexDB has no block cache to shard, so
    /// this has no effect.
    pub fn set_num_shard_bits(&mut self, _val: i32) {}
}

#[derive(Debug)]
struct WriteBufferBudget {
    buffer_size: AtomicUsize,
    allow_stall: AtomicBool,
}

/// A memory budget for write buffers shared by several column families or
/// databases, shared by cloning.
///
/// AlexDB records the budget; it does not yet limit its write buffers by it,
/// and reports zero usage.
#[derive(Clone, Debug)]
pub struct WriteBufferManager(Arc<WriteBufferBudget>);

impl WriteBufferManager {
    /// Creates a manager with a budget of `buffer_size` bytes (0: unlimited).
    pub fn new_write_buffer_manager(buffer_size: usize, allow_stall: bool) -> Self {
        Self(Arc::new(WriteBufferBudget {
            buffer_size: AtomicUsize::new(buffer_size),
            allow_stall: AtomicBool::new(allow_stall),
        }))
    }

    /// Creates a manager that would charge its memory to `cache`; AlexDB has
    /// no block cache, so this is the same as [`Self::new_write_buffer_manager`].
    pub fn new_write_buffer_manager_with_cache(
        buffer_size: usize,
        allow_stall: bool,
        _cache: Cache,
    ) -> Self {
        Self::new_write_buffer_manager(buffer_size, allow_stall)
    }

    /// Bytes of write buffers charged to the manager: always 0 for now.
    pub fn get_usage(&self) -> usize {
        0
    }

    /// The budget in bytes.
    pub fn get_buffer_size(&self) -> usize {
        self.0.buffer_size.load(Ordering::Relaxed)
    }

    /// Changes the budget.
    pub fn set_buffer_size(&self, new_size: usize) {
        self.0.buffer_size.store(new_size, Ordering::Relaxed);
    }

    /// Whether a budget is set (a non-zero buffer size).
    pub fn enabled(&self) -> bool {
        self.get_buffer_size() != 0
    }

    /// Sets whether writers stall when the budget is exceeded.
    pub fn set_allow_stall(&self, allow_stall: bool) {
        self.0.allow_stall.store(allow_stall, Ordering::Relaxed);
    }
}
