//! The directory lock: one writing handle per database directory.
//!
//! Across processes it is an exclusive `flock` on the directory's `LOCK`
//! file. Every call (creating and opening the file, `stat`, `realpath`,
//! `flock`) goes through the database's [`FileSystem`], so that fault
//! injection can fail it and a power-loss model sees the file created.
//! Within this process a table of the locks held, keyed by the `LOCK`
//! file's device and inode, decides, with RocksDB's rule: a second lock of
//! a directory still reachable at the path it was locked by fails
//! ([`LockError::HeldHere`], naming when and by which thread it was taken);
//! a lock through a new path after the directory was renamed away from the
//! old one succeeds, and shares the held lock (RocksDB keys its table by
//! path, and its `fcntl` lock does not conflict within a process). Unlike
//! RocksDB's `fcntl` lock, which the first close of any descriptor of the
//! file drops, the shared lock is held until its last holder lets go.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::io::{FileHandle, FileId, FileSystem, OpenMode};

/// Name of the lock file in a database directory.
pub const LOCK_FILE: &str = "LOCK";

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Opening or locking the file failed.
    Io(io::Error),
    /// Another process holds the lock.
    HeldElsewhere,
    /// A handle of this process holds the lock, taken through this path.
    HeldHere {
        /// When it was taken, in seconds since the Unix epoch.
        acquired_unix_secs: u64,
        /// The number of the thread that took it (see [`thread_number`]).
        thread: u64,
    },
}

/// The exclusive lock on a database directory; released when the last
/// `DirLock` sharing it is dropped.
#[derive(Debug)]
pub struct DirLock {
    held: Arc<Held>,
    /// The directory's canonical path when this holder took the lock.
    dir: PathBuf,
}

/// One `flock` and who holds it.
#[derive(Debug)]
struct Held {
    /// The locked file; taken (closed) when the lock is let go.
    file: Option<Arc<dyn FileHandle>>,
    inode: Inode,
    acquired_unix_secs: u64,
    thread: u64,
    /// The canonical directory path of every holder.
    dirs: Mutex<Vec<PathBuf>>,
}

type Inode = FileId;

/// The locks this process holds, by lock file.
type Table = MutexGuard<'static, HashMap<Inode, Weak<Held>>>;

fn table() -> Table {
    static TABLE: OnceLock<Mutex<HashMap<Inode, Weak<Held>>>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The table and the live holder of `inode`, if any, once that holder is
/// not halfway through letting go (its last reference dropped, its `flock`
/// not yet released): a database closed by one thread while another opens
/// it is then either still open or fully closed.
fn table_and_holder(inode: Inode) -> (Table, Option<Arc<Held>>) {
    loop {
        let table = table();
        match table.get(&inode).map(Weak::upgrade) {
            Some(None) => {
                drop(table);
                std::thread::yield_now();
            }
            Some(held) => return (table, held),
            None => return (table, None),
        }
    }
}

/// Takes the lock on the database directory `dir` (which must exist),
/// creating its `LOCK` file if missing, through `fs`.
pub fn acquire(fs: &dyn FileSystem, dir: &Path) -> Result<DirLock, LockError> {
    let path = dir.join(LOCK_FILE);
    let file = fs.open(&path, OpenMode::Create).map_err(LockError::Io)?;
    let inode = file.id().map_err(LockError::Io)?;
    let canonical = fs.canonicalize(dir).map_err(LockError::Io)?;
    let (mut table, holder) = table_and_holder(inode);
    if let Some(held) = holder {
        // `share` may drop the last strong reference, whose drop takes the
        // table.
        drop(table);
        return share(fs, held, canonical);
    }
    match file.try_lock() {
        Ok(true) => {}
        Ok(false) => return Err(LockError::HeldElsewhere),
        Err(e) => return Err(LockError::Io(e)),
    }
    let held = Arc::new(Held {
        file: Some(file),
        inode,
        acquired_unix_secs: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        thread: thread_number(),
        dirs: Mutex::new(vec![canonical.clone()]),
    });
    table.insert(inode, Arc::downgrade(&held));
    Ok(DirLock {
        held,
        dir: canonical,
    })
}

/// A lock this process holds on the same file: refused while a holder's
/// path still leads to it, shared once the directory has moved away from
/// every holder's path. A holder's path that cannot be checked (a failed
/// `stat`) refuses the lock: a failure never lets two handles write.
fn share(fs: &dyn FileSystem, held: Arc<Held>, canonical: PathBuf) -> Result<DirLock, LockError> {
    let mut dirs = held.dirs.lock().unwrap_or_else(|e| e.into_inner());
    let mut still_there = false;
    for d in dirs.iter() {
        if lock_inode(fs, d).map_err(LockError::Io)? == Some(held.inode) {
            still_there = true;
            break;
        }
    }
    if still_there {
        return Err(LockError::HeldHere {
            acquired_unix_secs: held.acquired_unix_secs,
            thread: held.thread,
        });
    }
    dirs.push(canonical.clone());
    drop(dirs);
    Ok(DirLock {
        held,
        dir: canonical,
    })
}

/// The device and inode of `dir`'s lock file, if there is one.
fn lock_inode(fs: &dyn FileSystem, dir: &Path) -> io::Result<Option<Inode>> {
    match fs.metadata(&dir.join(LOCK_FILE)) {
        Ok(meta) => Ok(Some(meta.id)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let mut dirs = self.held.dirs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = dirs.iter().position(|d| *d == self.dir) {
            dirs.swap_remove(i);
        }
    }
}

impl Drop for Held {
    /// Unlocks and closes the file while the table is locked, so that a
    /// lock taken right after the last holder let go never meets the
    /// `flock` still held (closing the file releases it even if the unlock
    /// failed).
    fn drop(&mut self) {
        let mut table = table();
        if let Some(file) = self.file.take() {
            let _ = file.unlock();
            drop(file);
        }
        if table
            .get(&self.inode)
            .is_some_and(|w| w.strong_count() == 0)
        {
            table.remove(&self.inode);
        }
    }
}

/// A number naming the calling thread for lock messages: threads are
/// numbered in the order they first ask.
pub fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;
    use crate::io::StdFileSystem;

    fn acquire(dir: &Path) -> Result<DirLock, LockError> {
        super::acquire(&StdFileSystem, dir)
    }

    #[test]
    fn a_second_lock_through_the_same_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path()).unwrap();
        let again = acquire(dir.path()).unwrap_err();
        assert!(matches!(again, LockError::HeldHere { .. }), "{again:?}");
        // Another spelling of the same path is the same directory.
        let dotted = dir.path().join(".");
        assert!(matches!(
            acquire(&dotted).unwrap_err(),
            LockError::HeldHere { .. }
        ));
        drop(first);
        acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_renamed_directory_shares_the_lock_until_its_last_holder_lets_go() {
        let base = tempfile::tempdir().unwrap();
        let (old, new) = (base.path().join("old"), base.path().join("new"));
        std::fs::create_dir(&old).unwrap();
        let first = acquire(&old).unwrap();
        std::fs::rename(&old, &new).unwrap();
        let second = acquire(&new).unwrap();
        assert!(matches!(
            acquire(&new).unwrap_err(),
            LockError::HeldHere { .. }
        ));
        drop(first);
        // The flock is still held: another open file description is refused.
        let other = File::open(new.join(LOCK_FILE)).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(second);
        other.try_lock().unwrap();
    }

    #[test]
    fn a_lock_let_go_in_one_thread_is_never_taken_for_another_processes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        match acquire(&path) {
                            Ok(lock) => drop(lock),
                            Err(LockError::HeldHere { .. }) => {}
                            Err(other) => panic!("{other:?}"),
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
    }
}
