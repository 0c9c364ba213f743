//! A simulated power loss, for tests: a file system that passes every
//! operation to the real one (the *volatile* image, what the page cache
//! shows) while keeping, beside it, what would survive a power loss (the
//! *durable* image): each file's contents as of its last `sync_data`, and
//! the directory's entries as of its last `sync_dir`.
//!
//! [`PowerLossFileSystem::crash_at`] makes the I/O operation numbered `k`
//! and every later one fail, as if the machine lost power there.
//! [`PowerLossFileSystem::write_crash_image`] then writes what a disk could
//! hold afterwards: every synced byte, and of the unsynced writes an
//! arbitrary subset chosen by a seed, each torn at 512-byte sectors (pages
//! that reached the disk out of order); unsynced creations, renames and
//! removals may each be lost.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{FileHandle, FileSystem, OpenMode, ReadOnlyMap, StdFileSystem};

/// Sector size: the unit a torn write keeps or loses.
const SECTOR: u64 = 512;

/// An unsynced change to a file.
#[derive(Clone, Debug)]
enum Pending {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

/// What a power loss could leave of one file (an inode).
#[derive(Clone, Debug, Default)]
struct Shadow {
    durable: Vec<u8>,
    pending: Vec<Pending>,
}

#[derive(Debug, Default)]
struct State {
    files: Vec<Shadow>,
    /// Name → inode as the page cache shows it.
    volatile: HashMap<PathBuf, usize>,
    /// Name → inode as the disk holds it (as of the last directory sync).
    durable: HashMap<PathBuf, usize>,
    /// Directory entries changed since the last directory sync.
    dir_pending: Vec<(PathBuf, Option<usize>)>,
}

/// A file system that can lose power; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct PowerLossFileSystem {
    state: Arc<Mutex<State>>,
    ops: Arc<AtomicU64>,
    crash_at: Arc<AtomicU64>,
}

impl PowerLossFileSystem {
    /// A file system that never crashes until told to.
    pub fn new() -> Self {
        let fs = Self::default();
        fs.crash_at.store(u64::MAX, Ordering::SeqCst);
        fs
    }

    /// Makes I/O operation number `k` (counting from 0) and every later one
    /// fail with EIO, changing nothing.
    pub fn crash_at(&self, k: u64) {
        self.crash_at.store(k, Ordering::SeqCst);
    }

    /// Number of I/O operations performed (or refused) so far.
    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::SeqCst)
    }

    /// Whether the simulated power loss has happened.
    pub fn crashed(&self) -> bool {
        self.ops() > self.crash_at.load(Ordering::SeqCst)
    }

    /// Counts one operation; fails it if the power is gone.
    fn tick(&self) -> io::Result<()> {
        let n = self.ops.fetch_add(1, Ordering::SeqCst);
        if n >= self.crash_at.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(5));
        }
        Ok(())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes into `out` (an empty directory) the files a disk could hold
    /// after the power loss: durable entries and bytes, plus the unsynced
    /// changes `seed` picks (writes torn at sector boundaries).
    pub fn write_crash_image(&self, out: &Path, seed: u64) -> io::Result<()> {
        let state = self.state();
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut names = state.durable.clone();
        for (name, inode) in &state.dir_pending {
            if rng.coin() {
                match inode {
                    Some(i) => names.insert(name.clone(), *i),
                    None => names.remove(name),
                };
            }
        }
        for (name, inode) in names {
            let bytes = survivor(&state.files[inode], &mut rng);
            let file_name = name
                .file_name()
                .ok_or_else(|| io::Error::other("a file without a name"))?;
            std::fs::write(out.join(file_name), bytes)?;
        }
        Ok(())
    }
}

/// The contents of a file after a power loss: its durable bytes with some
/// of its pending changes applied, writes torn at sector boundaries.
fn survivor(shadow: &Shadow, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = shadow.durable.clone();
    for change in &shadow.pending {
        match change {
            Pending::SetLen(len) if rng.coin() => bytes.resize(*len as usize, 0),
            Pending::SetLen(_) => {}
            Pending::Write(offset, data) => {
                let mut at = *offset;
                let end = offset + data.len() as u64;
                while at < end {
                    let stop = ((at / SECTOR) + 1).saturating_mul(SECTOR).min(end);
                    if rng.coin() {
                        apply_write(
                            &mut bytes,
                            at,
                            &data[(at - offset) as usize..(stop - offset) as usize],
                        );
                    }
                    at = stop;
                }
            }
        }
    }
    bytes
}

fn apply_write(bytes: &mut Vec<u8>, at: u64, data: &[u8]) {
    let (at, end) = (at as usize, at as usize + data.len());
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[at..end].copy_from_slice(data);
}

/// xorshift64: a small deterministic generator for the crash image.
struct Rng(u64);

impl Rng {
    fn coin(&mut self) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 & 1 == 1
    }
}

impl FileSystem for PowerLossFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFileSystem.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFileSystem.list_dir(path)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        if mode == OpenMode::CreateNew {
            self.tick()?;
        }
        let inner = StdFileSystem.open(path, mode)?;
        let mut state = self.state();
        let inode = match state.volatile.get(path) {
            Some(&i) if mode != OpenMode::CreateNew => i,
            _ => {
                state.files.push(Shadow::default());
                let i = state.files.len() - 1;
                state.volatile.insert(path.to_path_buf(), i);
                state.dir_pending.push((path.to_path_buf(), Some(i)));
                i
            }
        };
        Ok(Arc::new(ShadowedFile {
            inner,
            inode,
            fs: self.clone(),
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        StdFileSystem.read_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.rename(from, to)?;
        let mut state = self.state();
        if let Some(i) = state.volatile.remove(from) {
            state.volatile.insert(to.to_path_buf(), i);
            state.dir_pending.push((from.to_path_buf(), None));
            state.dir_pending.push((to.to_path_buf(), Some(i)));
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.remove_file(path)?;
        let mut state = self.state();
        state.volatile.remove(path);
        state.dir_pending.push((path.to_path_buf(), None));
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.sync_dir(path)?;
        let mut state = self.state();
        state.durable = state.volatile.clone();
        state.dir_pending.clear();
        Ok(())
    }
}

#[derive(Debug)]
struct ShadowedFile {
    inner: Arc<dyn FileHandle>,
    inode: usize,
    fs: PowerLossFileSystem,
}

impl ShadowedFile {
    fn record(&self, change: Pending) {
        self.fs.state().files[self.inode].pending.push(change);
    }
}

impl FileHandle for ShadowedFile {
    fn path(&self) -> &Path {
        self.inner.path()
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.fs.tick()?;
        self.inner.write_all_at(buf, offset)?;
        self.record(Pending::Write(offset, buf.to_vec()));
        Ok(())
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.fs.tick()?;
        self.inner.sync_data()?;
        let mut state = self.fs.state();
        let shadow = &mut state.files[self.inode];
        for change in std::mem::take(&mut shadow.pending) {
            match change {
                Pending::Write(at, data) => apply_write(&mut shadow.durable, at, &data),
                Pending::SetLen(len) => shadow.durable.resize(len as usize, 0),
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.fs.tick()?;
        self.inner.set_len(len)?;
        self.record(Pending::SetLen(len));
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn map_readonly(&self, len: u64) -> io::Result<ReadOnlyMap> {
        self.inner.map_readonly(len)
    }

    fn hole_at_or_after(&self, from: u64) -> io::Result<u64> {
        self.inner.hole_at_or_after(from)
    }

    fn data_at_or_after(&self, from: u64) -> io::Result<Option<u64>> {
        self.inner.data_at_or_after(from)
    }
}
