//! The index's memory: nodes and all they own (slot arrays, child arrays,
//! occupancy bitmaps, key prefixes) on transparent huge pages.
//!
//! A lookup reads an inner node's link per level, a data node's header and
//! one slot of its array, each at a random place in the index's memory.
//! On 4 KiB pages each of those reads is a TLB miss as soon as the index
//! outgrows the TLB's reach (a few MiB), on top of its cache miss; on
//! 2 MiB pages the whole index of a 10M-key database fits the TLB. The
//! process's allocator puts the index on huge pages only if told so for
//! the whole process, which an embedded library cannot do, so the index
//! allocates here, from pages advised with `MADV_HUGEPAGE` once the heap
//! holds more than [`HUGE_PAGES_FROM_BYTES`] (a small index stays on small
//! pages: a huge page per size class would multiply its memory).
//!
//! A slab heap: requests are rounded up to a size class (multiples of 64
//! bytes up to 1 KiB, then eight classes per doubling up to
//! [`MAX_CLASS_BYTES`]), and each 2 MiB page holds blocks of one class.
//! A freed block goes on its page's free list for the next request of its
//! class; a page left with no block in use serves any class next, and
//! beyond a few such pages kept at hand its memory goes back to the system
//! (`MADV_DONTNEED`), so the heap does not keep the peak of a class's
//! demand (a rebuild frees a whole subtree of one mix of sizes and builds
//! another). Every class size is a multiple of 64 and pages are aligned,
//! so every block is 64-aligned. Larger or more aligned requests go to the
//! global allocator. Chunks of pages are mapped as needed and never
//! unmapped (the address space is kept, not the memory).
//!
//! Measured (engine probe, 10M uniform keys, base and this heap alternated
//! twice): load −23 to −28% a key, get −21 to −27%, seek + 10 −22 to −27%;
//! anonymous memory +12% (the heap holds 70 MB of free blocks and kept
//! pages beside 232 MB in use). A first version with one free list per
//! class kept 312 MB free: blocks freed in one class stayed there.
//! At 1M keys (three alternations): get −11%, seek + 10 −2%, load −10%,
//! anonymous memory 69 → 91 MB. A database of 1,000 keys: 1.2 → 2.0 MB
//! anonymous; of 100,000 keys: 4.1 → 12.0 MB (pages touched per class).
//!
//! One lock guards the heap: the index's writers (one per index), its side
//! rebuilds and the writers freeing retired nodes allocate here, each
//! briefly; readers never do. A thread of the heap's own ([`page_prep`])
//! faults pages in ahead of the writers, outside the lock, so that a writer
//! that needs a fresh page rarely waits for the kernel to zero 2 MiB.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, PoisonError};

use allocator_api2::alloc::{AllocError, Allocator, Global};
use memmap2::MmapMut;
use rustc_hash::FxHashMap;

use super::page_prep;

/// The largest block this heap serves; larger requests go to the global
/// allocator (only the root's child array of a huge index gets near it).
pub(crate) const MAX_CLASS_BYTES: usize = 1 << 20;

/// The alignment of every block.
const BLOCK_ALIGN: usize = 64;

/// The huge page size the chunks are aligned to.
pub(super) const HUGE_PAGE: usize = 2 << 20;

/// The system's page size, what [`Heap::trim`] gives back at the least.
const SMALL_PAGE: usize = 4096;

/// Small pages in a huge page.
const SMALL_PAGES: usize = HUGE_PAGE / SMALL_PAGE;

/// Bytes of one chunk of pages. Only the bytes blocks are cut from are
/// touched, so a small index costs what it uses, not a chunk.
const CHUNK_BYTES: usize = 32 << 20;

/// Size classes up to 1 KiB: multiples of 64.
const SMALL_CLASSES: usize = 1024 / BLOCK_ALIGN;

/// Size classes per doubling above 1 KiB: a block wastes less than an
/// eighth of its bytes. Packed leaves' blocks of a few KiB are most of a
/// large index: at four per doubling their rounding cost 0.45 byte a key at
/// 10M keys, at eight about 0.2, at sixteen 0.1. More classes keep more
/// free memory while data nodes grow (each class its partly used pages):
/// right after loading 1M keys the heap held 57 MB free at four, 74 at
/// eight and 106 at sixteen, until the keyspace's quiet trim.
const CLASSES_PER_DOUBLING: usize = 8;

/// Size classes: multiples of 64 up to 1 KiB, then
/// [`CLASSES_PER_DOUBLING`] per doubling up to `MAX_CLASS_BYTES`.
const CLASSES: usize =
    SMALL_CLASSES + CLASSES_PER_DOUBLING * (MAX_CLASS_BYTES.trailing_zeros() as usize - 10);

/// The index's allocator: blocks from the huge-page heap.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodeHeap;

/// A box in the index's heap.
pub(crate) type HeapBox<T> = allocator_api2::boxed::Box<T, NodeHeap>;

/// A vector in the index's heap.
pub(crate) type HeapVec<T> = allocator_api2::vec::Vec<T, NodeHeap>;

/// A boxed slice of `len` copies of `value` in the index's heap.
pub(crate) fn slice_of<T: Clone>(len: usize, value: T) -> HeapBox<[T]> {
    let mut v = HeapVec::with_capacity_in(len, NodeHeap);
    v.resize(len, value);
    v.into_boxed_slice()
}

/// A boxed slice of `items` in the index's heap, allocated once.
pub(crate) fn slice_from<T, I>(items: I) -> HeapBox<[T]>
where
    I: IntoIterator<Item = T>,
    I::IntoIter: ExactSizeIterator,
{
    let items = items.into_iter();
    let mut v = HeapVec::with_capacity_in(items.len(), NodeHeap);
    v.extend(items);
    v.into_boxed_slice()
}

/// A boxed slice of `items` in the index's heap, allocated once and filled
/// without a length check per item (the generic `extend` made copying a
/// node's slots cost several times the loads and stores themselves).
pub(crate) fn slice_from_exact<T>(items: impl ExactSizeIterator<Item = T>) -> HeapBox<[T]> {
    let mut v = HeapVec::with_capacity_in(items.len(), NodeHeap);
    let mut written = 0;
    for (slot, item) in v.spare_capacity_mut().iter_mut().zip(items) {
        slot.write(item);
        written += 1;
    }
    // SAFETY: the loop wrote each of the first `written` items, within the
    // capacity (if an item panics, the length stays 0 and the items
    // written so far are only leaked).
    unsafe { v.set_len(written) };
    v.into_boxed_slice()
}

/// The size class of a request, or `None` for the global allocator.
///
/// Under the fuzzer every request goes to the global allocator: there
/// AddressSanitizer checks every access to index memory, and
/// LeakSanitizer, which does not scan this heap's pages, sees the
/// allocations nodes own (a node here kept its bitmap out of sight, which
/// LeakSanitizer reported as a leak while the node was waiting to be
/// freed). A program of a user's built with LeakSanitizer sees the same
/// false reports for allocations owned by live nodes: the sanitizer's
/// `__lsan_register_root_region` is not exported for a library to find.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size();
    if cfg!(fuzzing) || size == 0 || size > MAX_CLASS_BYTES || layout.align() > BLOCK_ALIGN {
        return None;
    }
    if size <= 1024 {
        return Some(size.div_ceil(BLOCK_ALIGN) - 1);
    }
    // 2^p < size <= 2^(p + 1), in steps of 2^p / CLASSES_PER_DOUBLING.
    let p = (size - 1).ilog2() as usize;
    let step = (1 << p) / CLASSES_PER_DOUBLING;
    let k = (size - (1 << p)).div_ceil(step); // 1..=CLASSES_PER_DOUBLING
    Some(SMALL_CLASSES + (p - 10) * CLASSES_PER_DOUBLING + k - 1)
}

/// Bytes of a block of `class`.
fn class_bytes(class: usize) -> usize {
    if class < SMALL_CLASSES {
        return (class + 1) * BLOCK_ALIGN;
    }
    let p = 10 + (class - SMALL_CLASSES) / CLASSES_PER_DOUBLING;
    let k = (class - SMALL_CLASSES) % CLASSES_PER_DOUBLING + 1;
    (1 << p) + k * ((1 << p) / CLASSES_PER_DOUBLING)
}

/// Blocks of a class that fit one huge page.
fn blocks_per_page(class: usize) -> u32 {
    (HUGE_PAGE / class_bytes(class)) as u32
}

/// A huge page given to one size class.
struct Page {
    class: usize,
    /// Blocks in use.
    live: u32,
    /// Blocks cut so far (the page's first `cut` blocks).
    cut: u32,
    /// Freed blocks, by index in the page.
    free: Vec<u32>,
    /// Its position in its class's list of pages with room, if listed.
    listed_at: Option<usize>,
    /// Its small pages given back to the system by [`Heap::trim`] since a
    /// block last overlapped them, one bit each.
    released: [u64; SMALL_PAGES / 64],
}

impl Page {
    /// A page given to `class`, no block cut.
    fn new(class: usize, listed_at: usize) -> Self {
        Page {
            class,
            live: 0,
            cut: 0,
            free: Vec::new(),
            listed_at: Some(listed_at),
            released: [0; SMALL_PAGES / 64],
        }
    }

    /// Small pages of it released, in all.
    fn released_count(&self) -> usize {
        self.released.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The small pages that a block of this page in use overlaps, one
    /// bit each.
    fn small_pages_in_use(&self) -> [u64; SMALL_PAGES / 64] {
        let bytes = class_bytes(self.class);
        let mut live = vec![true; self.cut as usize];
        self.free.iter().for_each(|&i| live[i as usize] = false);
        let mut in_use = [0u64; SMALL_PAGES / 64];
        for (block, _) in live.iter().enumerate().filter(|(_, live)| **live) {
            for small in small_pages_of(block * bytes, bytes) {
                in_use[small / 64] |= 1 << (small % 64);
            }
        }
        in_use
    }

    /// Marks the small pages of `len` bytes from `offset` in the page as
    /// resident again (a block cut there is about to be written); returns
    /// how many were released.
    fn reclaim(&mut self, offset: usize, len: usize) -> usize {
        let mut reclaimed = 0;
        for small in small_pages_of(offset, len) {
            let bit = 1 << (small % 64);
            reclaimed += usize::from(self.released[small / 64] & bit != 0);
            self.released[small / 64] &= !bit;
        }
        reclaimed
    }
}

/// The small pages that `len` bytes from `offset` in a huge page overlap.
fn small_pages_of(offset: usize, len: usize) -> std::ops::RangeInclusive<usize> {
    offset / SMALL_PAGE..=(offset + len - 1) / SMALL_PAGE
}

/// The heap's state, behind [`HEAP`]'s lock.
pub(super) struct Heap {
    /// Pages given to a class, by address.
    pages: FxHashMap<usize, Page>,
    /// Pages of each class with a block to spare.
    with_room: [Vec<usize>; CLASSES],
    /// Pages no class holds, still resident, for the next class that
    /// needs one (at most `KEPT_EMPTY_PAGES`).
    empty: Vec<usize>,
    /// Pages [`page_prep`] made resident, taken before any other.
    ready: Vec<usize>,
    /// Pages no class holds, given back to the system (`MADV_DONTNEED`),
    /// for reuse once `empty` runs out.
    released: Vec<usize>,
    /// The mapped chunks, never unmapped (released pages stay mapped):
    /// leaked, so that [`page_prep`] can fault a page of one in without
    /// holding the heap's lock.
    chunks: Vec<&'static MmapMut>,
    /// Next page never used in the last chunk, and that chunk's end.
    next_page: usize,
    chunk_end: usize,
    /// Bytes of blocks in use.
    used_bytes: usize,
    /// Bytes of the small pages of pages in use that [`Heap::trim`] gave
    /// back and no block has overlapped since.
    trimmed_bytes: usize,
    /// Set once the heap first holds `HUGE_PAGES_FROM_BYTES`: chunks are
    /// advised for huge pages from then on.
    huge: bool,
    /// Pages taken by [`page_prep`] to be made ready, not yet back.
    preparing: usize,
    /// Pages [`page_prep`] has made ready, ever.
    pages_made_ready: u64,
}

/// Pages given to a class while the heap has fewer bytes in use than this
/// stay on small pages: a huge page per size class would cost a small
/// index (1,000 keys: 1.2 MB of anonymous memory) some 24 MB, and gains
/// nothing while the index fits the TLB anyway.
const HUGE_PAGES_FROM_BYTES: usize = 8 << 20;

/// Empty pages kept resident for reuse; pages emptied beyond these are
/// given back to the system.
const KEPT_EMPTY_PAGES: usize = 8;

/// What the index's heap holds, for the whole process (every index of
/// every database shares it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeHeapUsage {
    /// Bytes of blocks in use (sizes rounded up to their classes).
    pub used_bytes: u64,
    /// Bytes of pages the heap holds resident but does not use: free
    /// blocks in pages in use, empty pages kept for reuse and pages made
    /// ready ahead of the writers.
    pub free_bytes: u64,
    /// Of `free_bytes`, those of pages made ready ahead of the writers
    /// (kept whatever the heap's use).
    pub ready_bytes: u64,
    /// Bytes of address space mapped for pages (resident or not).
    pub mapped_bytes: u64,
    /// Pages the heap's own thread has faulted in ahead of the writers
    /// since the process started.
    pub pages_made_ready: u64,
}

/// The heap's figures now.
pub(crate) fn usage() -> NodeHeapUsage {
    heap().usage()
}

/// Gives back to the system the whole pages the heap keeps spare (empty
/// pages kept for reuse, pages made ready ahead of the writers: up to 32
/// huge pages resident and unused), and its free memory where whole small
/// pages of the pages in use are free (see [`Heap::trim`]) if those hold
/// more than one byte free for `per_free_byte` bytes in use; returns the
/// bytes given back.
///
/// Spare pages always go: giving a whole page back splits no huge page,
/// and the writers that need one again pay a fault for it. Free blocks in
/// pages in use go only past the threshold, because trimming them splits
/// the huge pages they lie in.
pub(crate) fn trim_if_free_above(per_free_byte: usize) -> usize {
    let mut heap = heap();
    let spare = heap.release_spare_pages();
    let held = heap.pages.len() * HUGE_PAGE;
    let free = held - heap.used_bytes - heap.trimmed_bytes;
    match free > heap.used_bytes / per_free_byte.max(1) {
        true => spare + heap.trim(),
        false => spare,
    }
}

static HEAP: Mutex<Heap> = Mutex::new(Heap::new());

/// The heap's lock (also what [`page_prep`]'s condition variable waits
/// with).
pub(super) fn heap_lock() -> &'static Mutex<Heap> {
    &HEAP
}

pub(super) fn heap() -> MutexGuard<'static, Heap> {
    // Every change to the heap completes before its lock is released
    // (nothing in it panics midway), so a poisoned heap is consistent.
    HEAP.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Heap {
    /// A heap with no pages.
    const fn new() -> Self {
        Heap {
            pages: FxHashMap::with_hasher(rustc_hash::FxBuildHasher),
            with_room: [const { Vec::new() }; CLASSES],
            empty: Vec::new(),
            ready: Vec::new(),
            released: Vec::new(),
            chunks: Vec::new(),
            next_page: 0,
            chunk_end: 0,
            used_bytes: 0,
            trimmed_bytes: 0,
            huge: false,
            preparing: 0,
            pages_made_ready: 0,
        }
    }

    /// Its figures.
    fn usage(&self) -> NodeHeapUsage {
        let held = (self.pages.len() + self.empty.len() + self.ready.len()) * HUGE_PAGE;
        NodeHeapUsage {
            used_bytes: self.used_bytes as u64,
            free_bytes: (held - self.used_bytes - self.trimmed_bytes) as u64,
            ready_bytes: (self.ready.len() * HUGE_PAGE) as u64,
            mapped_bytes: (self.chunks.len() * CHUNK_BYTES) as u64,
            pages_made_ready: self.pages_made_ready,
        }
    }

    /// The address of a block of `class`, or `None` if no page can be
    /// mapped.
    fn take(&mut self, class: usize) -> Option<usize> {
        let page_addr = match self.with_room[class].last() {
            Some(&addr) => addr,
            None => self.new_page(class)?,
        };
        let page = self.pages.get_mut(&page_addr)?;
        let index = page.free.pop().unwrap_or_else(|| {
            page.cut += 1;
            page.cut - 1
        });
        page.live += 1;
        let offset = index as usize * class_bytes(class);
        if page.released != [0; SMALL_PAGES / 64] {
            self.trimmed_bytes -= page.reclaim(offset, class_bytes(class)) * SMALL_PAGE;
        }
        if page.free.is_empty() && page.cut == blocks_per_page(class) {
            self.unlist(page_addr);
        }
        self.used_bytes += class_bytes(class);
        Some(page_addr + offset)
    }

    /// Takes back the block of `class` at `addr`; a page left with no
    /// block in use goes back to the empty pages.
    fn give_back(&mut self, class: usize, addr: usize) {
        let page_addr = addr & !(HUGE_PAGE - 1);
        let Some(page) = self.pages.get_mut(&page_addr) else {
            debug_assert!(false, "block {addr:#x} of no page");
            return;
        };
        debug_assert_eq!(page.class, class);
        page.free
            .push(((addr - page_addr) / class_bytes(class)) as u32);
        page.live -= 1;
        self.used_bytes -= class_bytes(class);
        if page.live == 0 {
            let trimmed = page.released_count() * SMALL_PAGE;
            self.unlist(page_addr);
            self.pages.remove(&page_addr);
            self.trimmed_bytes -= trimmed;
            match trimmed {
                0 => self.empty_page(page_addr),
                // Partly given back already: not worth keeping.
                _ => self.release_page(page_addr),
            }
        } else if page.listed_at.is_none() {
            page.listed_at = Some(self.with_room[class].len());
            self.with_room[class].push(page_addr);
        }
    }

    /// Gives a fresh page to `class` and lists it as having room.
    fn new_page(&mut self, class: usize) -> Option<usize> {
        if !self.huge && self.used_bytes >= HUGE_PAGES_FROM_BYTES {
            self.huge = true;
            self.advise_uncut_pages();
        }
        // A ready page is resident: taking it faults nothing in.
        let addr = match self.ready.pop().or_else(|| self.empty.pop()) {
            Some(addr) => addr,
            None => match self.released.pop() {
                Some(addr) => addr,
                None => self.cut_page()?,
            },
        };
        if self.wants_ready_pages() {
            page_prep::wake();
        }
        let page = Page::new(class, self.with_room[class].len());
        self.pages.insert(addr, page);
        self.with_room[class].push(addr);
        Some(addr)
    }

    /// Removes the page at `addr` from its class's list of pages with
    /// room, if it is listed.
    fn unlist(&mut self, addr: usize) {
        let Some(page) = self.pages.get_mut(&addr) else {
            return;
        };
        let Some(at) = page.listed_at.take() else {
            return;
        };
        let list = &mut self.with_room[page.class];
        list.swap_remove(at);
        if let Some(moved) = list.get(at).and_then(|m| self.pages.get_mut(m)) {
            moved.listed_at = Some(at);
        }
    }

    /// Keeps an emptied page for reuse, or gives its memory back to the
    /// system when enough are kept.
    fn empty_page(&mut self, addr: usize) {
        if self.empty.len() < KEPT_EMPTY_PAGES {
            self.empty.push(addr);
            return;
        }
        self.release_page(addr);
    }

    /// Gives the memory of a page no class holds back to the system.
    fn release_page(&mut self, addr: usize) {
        release(&self.chunks, addr, HUGE_PAGE);
        self.released.push(addr);
    }

    /// Gives back to the system the memory of the empty pages kept for
    /// reuse and of the pages made ready ahead of writers (the next page a
    /// writer takes wakes [`page_prep`] to make more); returns the bytes
    /// given back.
    fn release_spare_pages(&mut self) -> usize {
        let given_back = (self.empty.len() + self.ready.len()) * HUGE_PAGE;
        while let Some(addr) = self.empty.pop().or_else(|| self.ready.pop()) {
            self.release_page(addr);
        }
        given_back
    }

    /// Gives back to the system the memory of every small page of the
    /// heap's pages that no block in use overlaps, of the empty pages kept
    /// for reuse and of the pages made ready ahead of writers (the next
    /// page a writer takes wakes [`page_prep`] to make more); returns the
    /// bytes given back.
    ///
    /// Blocks freed in a page whose other blocks stay in use keep their
    /// memory until their class takes them again: a database filled by
    /// writes, whose data nodes were copied as they grew, held 2.4 bytes
    /// free for each byte in use. This gives it back. A huge page trimmed
    /// this way is split into small pages for good (the blocks left in it
    /// cost a TLB entry per 4 KiB), so the engine calls it once an open
    /// has built its indexes and once a keyspace's writes have stopped for
    /// a while, not as it goes.
    fn trim(&mut self) -> usize {
        let mut given_back = self.release_spare_pages();
        let addrs: Vec<usize> = self.pages.keys().copied().collect();
        for addr in addrs {
            given_back += self.trim_page(addr);
        }
        given_back
    }

    /// Gives back the small pages of the page at `addr` that no block in
    /// use overlaps and that are not given back already; returns the
    /// bytes given back.
    fn trim_page(&mut self, addr: usize) -> usize {
        let Some(page) = self.pages.get_mut(&addr) else {
            return 0;
        };
        let in_use = page.small_pages_in_use();
        let mut given_back = 0;
        let mut run: Option<usize> = None;
        for small in 0..=SMALL_PAGES {
            let (word, bit) = (small / 64, 1u64 << (small % 64));
            let wanted = small < SMALL_PAGES && (in_use[word] | page.released[word]) & bit == 0;
            match (wanted, run) {
                (true, None) => run = Some(small),
                (false, Some(first)) => {
                    let len = (small - first) * SMALL_PAGE;
                    release(&self.chunks, addr + first * SMALL_PAGE, len);
                    (first..small).for_each(|s| page.released[s / 64] |= 1 << (s % 64));
                    given_back += len;
                    run = None;
                }
                _ => {}
            }
        }
        self.trimmed_bytes += given_back;
        if given_back > 0 {
            self.keep_small(addr);
        }
        given_back
    }

    /// Keeps the page at `addr` on small pages from now on: the system's
    /// background collapse would otherwise fill the small pages
    /// [`Self::trim_page`] gave back into a whole huge page again within
    /// seconds (measured: a quiet 1M-key store's anonymous memory rose
    /// from 6.1 to 10.1 bytes a key that way, with `max_ptes_none` at its
    /// default).
    fn keep_small(&self, addr: usize) {
        if let Some((map, offset)) = chunk_of(&self.chunks, addr) {
            crate::io::os::advise_no_huge_pages_range(map, offset, HUGE_PAGE);
        }
    }

    /// Whether [`page_prep`] should make another page ready: the heap is
    /// big enough for huge pages and holds fewer ready pages (counting
    /// those being made ready) than it keeps.
    pub(super) fn wants_ready_pages(&self) -> bool {
        self.used_bytes >= HUGE_PAGES_FROM_BYTES
            && self.ready.len() + self.preparing < page_prep::ready_pages(self.used_bytes)
            && page_prep::supported()
    }

    /// A page that is not resident (released, or never used), taken out
    /// of the heap to be made ready, with its chunk and offset there.
    /// `None` if no chunk can be mapped. The page comes back through
    /// [`Heap::page_ready`].
    pub(super) fn page_to_prepare(&mut self) -> Option<PageToPrepare> {
        let addr = match self.released.pop() {
            Some(addr) => addr,
            None => self.cut_page()?,
        };
        let (map, offset) = chunk_of(&self.chunks, addr)?;
        self.preparing += 1;
        Some(PageToPrepare { addr, map, offset })
    }

    /// Takes back a page [`Heap::page_to_prepare`] gave out, now resident,
    /// for the next class that needs a page.
    pub(super) fn page_ready(&mut self, addr: usize) {
        self.preparing -= 1;
        self.pages_made_ready += 1;
        self.ready.push(addr);
    }

    /// Advises the system to back the pages of the last chunk never used
    /// yet with huge pages when first touched. A whole chunk at a time,
    /// when it is mapped (or when the heap turns `huge`): advising a page
    /// as it is handed out changes its mapping's flags, which waits for
    /// every fault in progress in that mapping, and [`page_prep`] faults
    /// pages in there for up to milliseconds (measured: a writer's advice
    /// waited twice in one put, 9 ms). Pages used before stay on small
    /// pages until `khugepaged` collapses them, if it does.
    fn advise_uncut_pages(&self) {
        if let Some((map, offset)) = chunk_of(&self.chunks, self.next_page) {
            let len = self.chunk_end - self.next_page;
            crate::io::os::advise_huge_pages_range(map, offset, len);
        }
    }

    /// A page never used before, from the last chunk or a new one.
    fn cut_page(&mut self) -> Option<usize> {
        if self.next_page == self.chunk_end {
            let (start, map) = map_chunk()?;
            self.chunks.push(Box::leak(Box::new(map)));
            self.next_page = start;
            self.chunk_end = start + CHUNK_BYTES;
            if self.huge {
                self.advise_uncut_pages();
            }
        }
        self.next_page += HUGE_PAGE;
        Some(self.next_page - HUGE_PAGE)
    }
}

/// A page out of the heap while [`page_prep`] makes it resident.
pub(super) struct PageToPrepare {
    /// Its address.
    pub(super) addr: usize,
    /// The chunk that holds it.
    pub(super) map: &'static MmapMut,
    /// Its offset in `map`.
    pub(super) offset: usize,
}

/// The chunk holding `addr` and the offset of `addr` in its map.
fn chunk_of(chunks: &[&'static MmapMut], addr: usize) -> Option<(&'static MmapMut, usize)> {
    chunks.iter().find_map(|&m| {
        let base = m.as_ptr() as usize;
        (base..base + m.len())
            .contains(&addr)
            .then(|| (m, addr - base))
    })
}

/// Gives the memory of the `len` bytes at `addr` (whole small pages of
/// one page, no block in use among them) back to the system; they stay
/// mapped and read as zeros when next touched.
fn release(chunks: &[&'static MmapMut], addr: usize, len: usize) {
    let Some((map, offset)) = chunk_of(chunks, addr) else {
        return;
    };
    // SAFETY: no block in use overlaps the range (a whole page whose class
    // gave it up at zero live blocks, or small pages `trim` found only
    // free or never-cut blocks in), and the heap's lock, held by the
    // caller, keeps any from being handed out meanwhile; a freed block is
    // read by no one (`deallocate` is called once nothing refers to it).
    // After `MADV_DONTNEED` anonymous private memory reads as zeros, which
    // is all a block cut there later may assume (nothing: blocks are
    // written before they are read).
    unsafe { crate::io::os::release_pages(map, offset, len) };
}

/// Maps a chunk of `CHUNK_BYTES` on a 2 MiB boundary and returns its start
/// address and the map that owns it.
fn map_chunk() -> Option<(usize, MmapMut)> {
    let map = MmapMut::map_anon(CHUNK_BYTES + HUGE_PAGE).ok()?;
    let start = (map.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
    Some((start, map))
}

// SAFETY: a block handed out by `allocate` is `class_bytes(class) >=
// layout.size()` bytes at a 64-aligned address (class sizes are multiples
// of 64 and pages are 2 MiB-aligned) inside an anonymous map that is never
// unmapped, and no other block overlaps it: a page holds blocks of one
// class only, at distinct indexes below `blocks_per_page` (so within the
// page), each either cut fresh or taken off the page's free list it was
// put on by `deallocate`, which callers do once per block; a page changes
// class or is released only once none of its blocks is in use. Requests this heap does
// not serve go to `Global` in both directions: `class_of` decides from the
// layout alone, and callers pass the same layout to both.
unsafe impl Allocator for NodeHeap {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let Some(class) = class_of(layout) else {
            return Global.allocate(layout);
        };
        let addr = heap().take(class).ok_or(AllocError)?;
        let ptr = NonNull::new(addr as *mut u8).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, class_bytes(class)))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        match class_of(layout) {
            Some(class) => heap().give_back(class, ptr.as_ptr() as usize),
            // SAFETY: per the trait's contract `ptr` came from `allocate`
            // with this layout, which sent it to `Global` too.
            None => unsafe { Global.deallocate(ptr, layout) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class is a multiple of 64, classes grow, and every size maps
    /// to the smallest class that holds it.
    #[test]
    fn classes_are_ordered_and_tight() {
        let mut last = 0;
        for class in 0..CLASSES {
            let bytes = class_bytes(class);
            assert_eq!(bytes % BLOCK_ALIGN, 0, "class {class}");
            assert!(bytes > last, "class {class}");
            let layout = |size| Layout::from_size_align(size, 8).unwrap();
            assert_eq!(class_of(layout(bytes)), Some(class), "{bytes}");
            assert_eq!(class_of(layout(last + 1)), Some(class), "{}", last + 1);
            last = bytes;
        }
        assert_eq!(last, MAX_CLASS_BYTES);
        assert_eq!(
            class_of(Layout::from_size_align(MAX_CLASS_BYTES + 1, 8).unwrap()),
            None
        );
        assert_eq!(class_of(Layout::from_size_align(64, 128).unwrap()), None);
    }

    /// A slice built from an exact-size iterator holds its items; one whose
    /// iterator yields fewer items than it announced holds only those.
    #[test]
    fn slices_from_exact_iterators_hold_what_was_yielded() {
        let built = slice_from_exact((0..1000u32).map(|i| u64::from(i) * 3));
        assert_eq!(built.len(), 1000);
        assert!(built.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
        /// Announces 10 items and yields 4.
        struct Short(u64);
        impl Iterator for Short {
            type Item = u64;
            fn next(&mut self) -> Option<u64> {
                self.0 += 1;
                (self.0 <= 4).then_some(self.0)
            }
        }
        impl ExactSizeIterator for Short {
            fn len(&self) -> usize {
                10
            }
        }
        assert_eq!(&*slice_from_exact(Short(0)), &[1, 2, 3, 4]);
        assert!(slice_from_exact(std::iter::empty::<u64>()).is_empty());
    }

    /// Blocks are aligned, hold their bytes, and never overlap while live.
    #[test]
    fn blocks_are_aligned_and_disjoint() {
        let sizes = [16usize, 64, 100, 1024, 1500, 6144, 40_000, 600_000];
        let mut boxes: Vec<HeapBox<[u8]>> = Vec::new();
        for (i, &size) in sizes.iter().cycle().take(200).enumerate() {
            boxes.push(slice_of(size, i as u8));
        }
        let mut spans: Vec<(usize, usize)> = boxes
            .iter()
            .map(|b| (b.as_ptr() as usize, b.as_ptr() as usize + b.len()))
            .collect();
        for (i, b) in boxes.iter().enumerate() {
            assert_eq!(b.as_ptr() as usize % BLOCK_ALIGN, 0);
            assert!(b.iter().all(|&x| x == i as u8));
        }
        spans.sort_unstable();
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0));
    }

    /// A freed block is taken again by its class; a page emptied serves
    /// another class; pages emptied beyond the few kept go back to the
    /// system and are reused from there.
    #[test]
    fn freed_memory_is_reused_across_classes() {
        let mut heap = Heap::new();
        let small = class_of(Layout::from_size_align(64, 8).unwrap()).unwrap();
        let large = class_of(Layout::from_size_align(6144, 8).unwrap()).unwrap();
        let per_page = blocks_per_page(small) as usize;
        let pages = KEPT_EMPTY_PAGES + 4;
        let blocks: Vec<usize> = (0..pages * per_page)
            .map(|_| heap.take(small).unwrap())
            .collect();
        assert_eq!(heap.usage().used_bytes, (pages * HUGE_PAGE) as u64);
        let freed = blocks[5];
        heap.give_back(small, freed);
        assert_eq!(heap.take(small), Some(freed));
        blocks.iter().for_each(|&b| heap.give_back(small, b));
        let usage = heap.usage();
        assert_eq!(usage.used_bytes, 0);
        assert_eq!(usage.free_bytes, (KEPT_EMPTY_PAGES * HUGE_PAGE) as u64);
        assert_eq!(heap.released.len(), 4);
        let mapped = usage.mapped_bytes;
        for _ in 0..pages * blocks_per_page(large) as usize {
            heap.take(large).unwrap();
        }
        assert_eq!(heap.usage().mapped_bytes, mapped, "no new chunk");
        assert!(heap.empty.is_empty() && heap.released.is_empty());
    }

    /// Fills the `len` bytes of the block at `addr` with `byte`.
    fn fill(addr: usize, len: usize, byte: u8) {
        // SAFETY: `addr` is a block of at least `len` bytes the test's heap
        // handed out and the test alone uses.
        unsafe { (addr as *mut u8).write_bytes(byte, len) }
    }

    /// Whether the `len` bytes of the block at `addr` all hold `byte`.
    fn holds(addr: usize, len: usize, byte: u8) -> bool {
        // SAFETY: as in `fill`; the block's bytes were written or read as
        // zeros from an anonymous map.
        unsafe { std::slice::from_raw_parts(addr as *const u8, len) }
            .iter()
            .all(|&b| b == byte)
    }

    /// Trimming gives back exactly the small pages only free blocks
    /// cover, keeps every block in use as it was, and does nothing twice;
    /// blocks cut there again read as zeros and count as resident again.
    #[test]
    #[cfg_attr(
        windows,
        ignore = "Windows keeps a released page's bytes (io::os::release_pages)"
    )]
    fn trim_gives_back_free_small_pages_and_keeps_blocks_in_use() {
        let mut heap = Heap::new();
        let class = class_of(Layout::from_size_align(1024, 8).unwrap()).unwrap();
        let per_small = SMALL_PAGE / 1024;
        let count = 2 * blocks_per_page(class) as usize;
        let blocks: Vec<usize> = (0..count).map(|_| heap.take(class).unwrap()).collect();
        let pattern = |i: usize| (i % 251 + 1) as u8;
        blocks
            .iter()
            .enumerate()
            .for_each(|(i, &b)| fill(b, 1024, pattern(i)));
        // Every other small page freed whole; one block freed in each other.
        let freed = |i: usize| (i / per_small).is_multiple_of(2) || i % per_small == 1;
        let before = heap.usage();
        for (_, &b) in blocks.iter().enumerate().filter(|&(i, _)| freed(i)) {
            heap.give_back(class, b);
        }
        let whole = count / per_small / 2 * SMALL_PAGE;
        assert_eq!(heap.trim(), whole);
        assert_eq!(heap.trim(), 0, "nothing left to give back");
        let after = heap.usage();
        let freed_bytes = blocks.iter().enumerate().filter(|&(i, _)| freed(i)).count() * 1024;
        assert_eq!(
            after.free_bytes,
            before.free_bytes + freed_bytes as u64 - whole as u64
        );
        for (i, &b) in blocks.iter().enumerate().filter(|&(i, _)| !freed(i)) {
            assert!(
                holds(b, 1024, pattern(i)),
                "block {i} in use kept its bytes"
            );
        }
        // Taken again, the freed blocks of given-back small pages read as zeros.
        let again: Vec<usize> = (0..freed_bytes / 1024)
            .map(|_| heap.take(class).unwrap())
            .collect();
        let zeroed = again.iter().filter(|&&b| holds(b, 1024, 0)).count();
        assert_eq!(zeroed * 1024, whole);
        assert_eq!(
            heap.trimmed_bytes, 0,
            "every given-back small page is in use again"
        );
        again.iter().for_each(|&b| fill(b, 1024, 0xAB));
        assert!(again.iter().all(|&b| holds(b, 1024, 0xAB)));
        // A page emptied after a trim goes back whole; the figures return to zero.
        let (kept, _): (Vec<usize>, Vec<usize>) = (0..count).partition(|&i| !freed(i));
        assert_eq!(heap.trim(), 0);
        let some_free = again[..again.len() / 2].to_vec();
        some_free.iter().for_each(|&b| heap.give_back(class, b));
        assert!(heap.trim() > 0);
        again[again.len() / 2..]
            .iter()
            .for_each(|&b| heap.give_back(class, b));
        kept.iter().for_each(|&i| heap.give_back(class, blocks[i]));
        let usage = heap.usage();
        assert_eq!((usage.used_bytes, heap.trimmed_bytes), (0, 0));
        assert!(heap.pages.is_empty());
    }

    /// Once the heap holds enough for huge pages, taking pages wakes its
    /// thread, which makes pages ready (resident, unused) for the next
    /// classes that need one. Other tests share the heap and may take the
    /// ready pages: the count made is what shows the thread at work.
    #[test]
    fn a_big_heap_gets_pages_made_ready() {
        let before = usage().pages_made_ready;
        let blocks: Vec<HeapBox<[u8]>> = (0..HUGE_PAGES_FROM_BYTES / 4096 + 8)
            .map(|i| slice_of(4096, i as u8))
            .collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while usage().pages_made_ready == before {
            assert!(
                std::time::Instant::now() < deadline,
                "no page made ready within 30 s: {:?}",
                usage()
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(blocks.iter().enumerate().all(|(i, b)| b[0] == i as u8));
    }

    /// Oversized and over-aligned requests go to the global allocator and
    /// come back to it.
    #[test]
    fn large_requests_use_the_global_allocator() {
        let big = slice_of(MAX_CLASS_BYTES + 1, 7u8);
        assert!(big.iter().all(|&x| x == 7));
        #[repr(align(128))]
        #[derive(Clone)]
        struct Wide(u8);
        let wide = slice_of(3, Wide(9));
        assert!(wide.iter().all(|w| w.0 == 9));
        assert_eq!(wide.as_ptr() as usize % 128, 0);
    }
}
