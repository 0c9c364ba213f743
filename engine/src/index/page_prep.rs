//! Pages of the index's heap made resident ahead of the writers that will
//! cut blocks from them.
//!
//! The first touch of a page advised with `MADV_HUGEPAGE` faults in a whole
//! 2 MiB page: the kernel zeroes it, and may first compact memory to find
//! one (`defrag` = `madvise`). On the virtual machine this was measured on
//! that fault took 3 ms and more; an index writer that cut its first block
//! from a fresh page held every other writer that long, five pages in a
//! row once (longest put 10–15 ms in the runner's `hot-range` at 10M keys,
//! profiled as `clear_page_erms` under the writer's put). Here a thread of
//! the heap's own keeps a few empty pages resident ([`ready_pages`]): it
//! takes a page that is not (released or never used), faults it in by
//! writing to it without holding the heap's lock, and hands it back as a
//! ready page, which the next class that needs a page takes without a
//! system call or a fault. Writers still fault pages in themselves when
//! they outrun it. The heap wakes the thread (under its lock) whenever a
//! class takes a page and fewer than [`ready_pages`] are ready.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Once, PoisonError};

use super::node_heap::{self, HUGE_PAGE, PageToPrepare};

/// Pages kept ready (resident, unused) ahead of the writers: a
/// sixteenth of the heap's bytes in use, at least 4 pages and at most 32
/// (64 MiB). A writer's burst outran 4 pages right after an open, when
/// the index was loaded from its checkpoint and every class's pages are
/// full: the first rebuild in a hot range faulted pages in itself (5 ms).
pub(super) fn ready_pages(used_bytes: usize) -> usize {
    (used_bytes / (16 * HUGE_PAGE)).clamp(4, 32)
}

/// Signalled when the heap wants pages made ready; waits with the heap's
/// lock.
static WANTED: Condvar = Condvar::new();

/// Starts the thread on the first wake.
static START: Once = Once::new();

/// Cleared when no thread can be started: then writers fault pages in as
/// they go.
static SUPPORTED: AtomicBool = AtomicBool::new(true);

/// Whether pages can be made ready here.
pub(super) fn supported() -> bool {
    SUPPORTED.load(Ordering::Relaxed)
}

/// Tells the thread (starting it the first time) that the heap wants
/// pages made ready.
pub(super) fn wake() {
    START.call_once(|| {
        let started = std::thread::Builder::new()
            .name("alexdb-index-pages".into())
            .spawn(run);
        if started.is_err() {
            SUPPORTED.store(false, Ordering::Relaxed);
        }
    });
    WANTED.notify_one();
}

/// The thread: for ever, waits until the heap wants pages, and makes one
/// ready at a time.
fn run() {
    let lock = node_heap::heap_lock();
    let mut heap = lock.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let page = if heap.wants_ready_pages() {
            heap.page_to_prepare()
        } else {
            None
        };
        let Some(page) = page else {
            heap = WANTED.wait(heap).unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        drop(heap);
        make_resident(&page);
        heap = lock.lock().unwrap_or_else(PoisonError::into_inner);
        heap.page_ready(page.addr);
    }
}

/// Bytes between the writes that fault a page in: the smallest page size
/// (one write faults in a whole huge page; without one, each small page).
const SMALL_PAGE: usize = 4096;

/// Faults all of `page` in (a huge page where its chunk is advised for
/// them) by writing a zero to each of its small pages: a fault takes the
/// lock of the page's mapping alone, where `MADV_POPULATE_WRITE` would hold
/// the process's whole address space while the kernel zeroes 2 MiB,
/// stalling every thread that maps or unmaps meanwhile.
fn make_resident(page: &PageToPrepare) {
    let start = page.map.as_ptr() as usize + page.offset;
    for at in (start..start + HUGE_PAGE).step_by(SMALL_PAGE) {
        // SAFETY: the page is out of the heap (`page_to_prepare` took it
        // off every list), so no block of it is in use, handed out or read
        // while it is here; it lies inside a chunk that is mapped writable
        // and never unmapped (`PageToPrepare::map` is `'static`); and a
        // page the heap gives out reads as zeros, which writing zeros
        // keeps (nothing assumes it anyway: blocks are written before they
        // are read).
        unsafe { std::ptr::write_volatile(at as *mut u8, 0) };
    }
}
