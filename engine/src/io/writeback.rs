//! Starting the kernel's writeback of appended bytes early
//! (`sync_file_range` with `SYNC_FILE_RANGE_WRITE` on Linux, see
//! [`super::os::start_writeback`]; nothing elsewhere), as RocksDB's
//! `bytes_per_sync` does: the fdatasync that seals a 32 MiB log segment
//! then waits for the last megabyte, not for the whole segment (about
//! 30 ms on this machine's disk, under the writer lock). It changes no
//! durability promise: nothing counts as durable until fdatasync returns.
//!
//! The call is not cheap: starting the writeback of a megabyte allocates
//! its blocks and submits the I/O, 200–330 µs (up to 3 ms) on the 2-vCPU
//! virtual machine the runner uses, which the put that crossed the megabyte
//! paid under the writer lock. [`start_in_background`] hands it to one
//! thread of the process instead.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use super::FileHandle;

/// Requests the writeback thread may hold at once; past them a request is
/// dropped (writeback is advisory: the next sync writes those bytes).
const QUEUED_MOST: usize = 64;

/// One range of one file to start writing back.
struct Request {
    file: Arc<dyn FileHandle>,
    offset: u64,
    len: u64,
}

/// Requests waiting for the writeback thread.
static QUEUE: Mutex<VecDeque<Request>> = Mutex::new(VecDeque::new());
/// Wakes the writeback thread when a request is queued.
static QUEUED: Condvar = Condvar::new();
/// Whether the writeback thread is running (spawned on first use).
static THREAD: OnceLock<bool> = OnceLock::new();

fn queue() -> MutexGuard<'static, VecDeque<Request>> {
    // A panic while the queue was locked leaves a valid queue behind.
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Has the process's writeback thread start writing back `len` bytes of
/// `file` at `offset` ([`FileHandle::start_writeback`]), so that the
/// caller does not wait for it. Where no thread can be started, the call
/// is made here. Advisory: errors are dropped, as are requests past
/// [`QUEUED_MOST`] waiting at once.
pub(crate) fn start_in_background(file: Arc<dyn FileHandle>, offset: u64, len: u64) {
    if !*THREAD.get_or_init(spawn_thread) {
        let _ = file.start_writeback(offset, len);
        return;
    }
    let mut requests = queue();
    if requests.len() < QUEUED_MOST {
        requests.push_back(Request { file, offset, len });
        QUEUED.notify_one();
    }
}

/// Starts the writeback thread; whether it runs.
fn spawn_thread() -> bool {
    std::thread::Builder::new()
        .name("alexdb-writeback".into())
        .spawn(serve)
        .is_ok()
}

/// The writeback thread: carries out requests as they come, for the life
/// of the process.
fn serve() {
    loop {
        let request = {
            let mut requests = queue();
            loop {
                match requests.pop_front() {
                    Some(request) => break request,
                    None => {
                        requests = QUEUED
                            .wait(requests)
                            .unwrap_or_else(PoisonError::into_inner)
                    }
                }
            }
        };
        let _ = request.file.start_writeback(request.offset, request.len);
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::io::ReadOnlyMap;

    /// A file that only records the writebacks asked of it.
    #[derive(Debug, Default)]
    struct Recorder {
        path: PathBuf,
        asked: Mutex<Vec<(u64, u64)>>,
    }

    impl FileHandle for Recorder {
        fn path(&self) -> &Path {
            &self.path
        }
        fn write_all_at(&self, _: &[u8], _: u64) -> io::Result<()> {
            Ok(())
        }
        fn read_exact_at(&self, _: &mut [u8], _: u64) -> io::Result<()> {
            Ok(())
        }
        fn sync_data(&self) -> io::Result<()> {
            Ok(())
        }
        fn id(&self) -> io::Result<crate::io::FileId> {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
        fn try_lock(&self) -> io::Result<bool> {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
        fn unlock(&self) -> io::Result<()> {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
        fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
            self.asked.lock().unwrap().push((offset, len));
            Ok(())
        }
        fn set_len(&self, _: u64) -> io::Result<()> {
            Ok(())
        }
        fn len(&self) -> io::Result<u64> {
            Ok(0)
        }
        fn map_readonly(&self, _: u64) -> io::Result<ReadOnlyMap> {
            Err(io::Error::other("not mapped"))
        }
    }

    #[test]
    fn the_writeback_thread_carries_out_each_request_in_order() {
        let file = Arc::new(Recorder::default());
        start_in_background(file.clone(), 0, 1 << 20);
        start_in_background(file.clone(), 1 << 20, 1 << 20);
        let deadline = Instant::now() + Duration::from_secs(30);
        while file.asked.lock().unwrap().len() < 2 {
            assert!(
                Instant::now() < deadline,
                "the writeback thread did nothing"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            *file.asked.lock().unwrap(),
            [(0, 1 << 20), (1 << 20, 1 << 20)]
        );
    }
}
