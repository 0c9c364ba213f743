//! Memory budgets that RocksDB shares between databases: [`Cache`],
//! [`LruCacheOptions`] and [`WriteBufferManager`].
//!
//! AlexDB reads its data through memory maps and keeps no block cache, so a
//! cache holds nothing: it remembers its capacity and reports zero usage.
//! A write buffer manager's size (or, made with a cache, that cache's
//! capacity) becomes the memory budget of every database opened with it:
//! see [`WriteBufferManager`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use alexdb_engine::MemoryBudget;

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
    /// The engine's budget for the databases opened with the manager.
    memory: MemoryBudget,
    /// Whether `memory` follows `buffer_size` (not made with a cache).
    memory_follows_size: bool,
}

/// A memory budget shared by several column families or databases, shared
/// by cloning.
///
/// AlexDB has no write buffers (a write goes straight to its log segment),
/// so it charges nothing to the manager ([`Self::get_usage`] is 0). What it
/// holds of its own is its index, the index heap's free memory and
/// compaction's key filters; a database opened with a manager keeps those
/// within a memory budget (`alexdb_engine::memory_budget`): the manager's
/// buffer size, or for [`Self::new_write_buffer_manager_with_cache`] the
/// cache's capacity (RocksDB's recipe for bounding memtables and block
/// cache together). Over it, AlexDB drops compaction's filters, packs its
/// index and gives free index memory back; it never evicts the index
/// itself and never stalls writes (`allow_stall` has no effect), and
/// reports in `rocksdb.stats` what it holds (`Memory held`) and whether it
/// stays over (`Memory over budget`).
#[derive(Clone, Debug)]
pub struct WriteBufferManager(Arc<WriteBufferBudget>);

impl WriteBufferManager {
    /// Creates a manager with a budget of `buffer_size` bytes (0: unlimited).
    pub fn new_write_buffer_manager(buffer_size: usize, allow_stall: bool) -> Self {
        Self::with_memory(buffer_size, allow_stall, buffer_size, true)
    }

    /// Creates a manager that charges its memory to `cache`: the databases
    /// opened with it keep within the cache's capacity (as it is now).
    pub fn new_write_buffer_manager_with_cache(
        buffer_size: usize,
        allow_stall: bool,
        cache: Cache,
    ) -> Self {
        Self::with_memory(buffer_size, allow_stall, cache.capacity(), false)
    }

    fn with_memory(buffer_size: usize, allow_stall: bool, memory: usize, follows: bool) -> Self {
        Self(Arc::new(WriteBufferBudget {
            buffer_size: AtomicUsize::new(buffer_size),
            allow_stall: AtomicBool::new(allow_stall),
            memory: MemoryBudget::new(memory as u64),
            memory_follows_size: follows,
        }))
    }

    /// The memory budget of the databases opened with the manager.
    pub(crate) fn memory_budget(&self) -> MemoryBudget {
        self.0.memory.clone()
    }

    /// Bytes of write buffers charged to the manager: always 0, AlexDB has
    /// no write buffers.
    pub fn get_usage(&self) -> usize {
        0
    }

    /// The budget in bytes.
    pub fn get_buffer_size(&self) -> usize {
        self.0.buffer_size.load(Ordering::Relaxed)
    }

    /// Changes the budget (and, for a manager not made with a cache, the
    /// memory budget of the databases opened with it, from their next
    /// check on).
    pub fn set_buffer_size(&self, new_size: usize) {
        self.0.buffer_size.store(new_size, Ordering::Relaxed);
        if self.0.memory_follows_size {
            self.0.memory.set_bytes(new_size as u64);
        }
    }

    /// Whether a budget is set (a non-zero buffer size).
    pub fn enabled(&self) -> bool {
        self.get_buffer_size() != 0
    }

    /// Sets whether writers stall when the budget is exceeded; AlexDB never
    /// stalls writes for memory, so this is only recorded.
    pub fn set_allow_stall(&self, allow_stall: bool) {
        self.0.allow_stall.store(allow_stall, Ordering::Relaxed);
    }
}
