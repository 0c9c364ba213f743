//! A simulated power loss, for tests: a file system that passes every
//! operation to the real one (the *volatile* image, what the page cache
//! shows) while keeping, beside it, what would survive a power loss (the
//! *durable* image): each file's contents as of its last `sync_data`, and
//! each directory's entries as of its last `sync_dir`.
//!
//! The model is a tree of directories. A directory the model did not see
//! created (one that existed before, such as a test's temporary directory)
//! is a root, durable itself. A file is an inode: its names (hard links)
//! share its contents. A directory's entries (name → file or directory)
//! change in its volatile view at once and reach its durable view only when
//! that directory is synced: a file or directory created, renamed, linked
//! or removed is an entry change of the directory (or directories) holding
//! the name, and a directory moves with its contents.
//!
//! [`PowerLossFileSystem::crash_at`] makes the I/O operation numbered `k`
//! and every later one fail, as if the machine lost power there.
//! [`PowerLossFileSystem::write_crash_image_of`] then writes what a disk
//! could hold afterwards of one directory: every synced byte and entry,
//! and of the unsynced writes an arbitrary subset chosen by a seed, each
//! torn at 512-byte sectors (pages that reached the disk out of order);
//! each unsynced entry change may be lost, and a directory whose own entry
//! was lost holds nothing.
//!
//! Operations that change nothing on disk (reads, listings, `stat`,
//! `realpath`, `flock`) pass through and are not counted.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{FileHandle, FileId, FileSystem, Metadata, OpenMode, ReadOnlyMap, StdFileSystem};

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

/// What a directory entry names: a file (inode) or a directory, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    File(usize),
    Dir(usize),
}

/// A directory's entries, as the page cache shows them and as the disk
/// holds them.
#[derive(Clone, Debug, Default)]
struct DirShadow {
    volatile: BTreeMap<OsString, Node>,
    /// As of the directory's last sync.
    durable: BTreeMap<OsString, Node>,
    /// Entry changes since the last sync, in order (`None`: removed).
    pending: Vec<(OsString, Option<Node>)>,
}

#[derive(Debug, Default)]
struct State {
    files: Vec<Shadow>,
    dirs: Vec<DirShadow>,
    /// Directories that existed before the model saw them, by path.
    roots: Vec<(PathBuf, usize)>,
    /// The directory the first file was created in.
    first_dir: Option<PathBuf>,
}

impl State {
    /// The directory at `path` as the page cache shows it, if the model
    /// knows it.
    fn lookup_dir(&self, path: &Path) -> Option<usize> {
        if let Some((_, id)) = self.roots.iter().find(|(p, _)| p == path) {
            return Some(*id);
        }
        match self.node(path)? {
            Node::Dir(id) => Some(id),
            Node::File(_) => None,
        }
    }

    /// What the entry `path` names in the page cache, if the model knows.
    fn node(&self, path: &Path) -> Option<Node> {
        let parent = self.lookup_dir(path.parent()?)?;
        self.dirs[parent].volatile.get(path.file_name()?).copied()
    }

    /// The directory at `path`; one the model does not know existed
    /// before it (a root).
    fn dir_id(&mut self, path: &Path) -> usize {
        if let Some(id) = self.lookup_dir(path) {
            return id;
        }
        self.dirs.push(DirShadow::default());
        let id = self.dirs.len() - 1;
        self.roots.push((path.to_path_buf(), id));
        id
    }

    /// The directory holding the entry `path`, and the entry's name.
    fn entry(&mut self, path: &Path) -> io::Result<(usize, OsString)> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::Error::other(format!(
                "{} names no directory entry",
                path.display()
            )));
        };
        Ok((self.dir_id(parent), name.to_owned()))
    }

    /// Changes the entry `path` in the page cache; durable once its
    /// directory is synced.
    fn set_entry(&mut self, path: &Path, node: Option<Node>) -> io::Result<()> {
        let (dir, name) = self.entry(path)?;
        let shadow = &mut self.dirs[dir];
        match node {
            Some(n) => shadow.volatile.insert(name.clone(), n),
            None => shadow.volatile.remove(&name),
        };
        shadow.pending.push((name, node));
        Ok(())
    }

    /// A new, empty file at `path`.
    fn create_file(&mut self, path: &Path) -> io::Result<usize> {
        self.files.push(Shadow::default());
        let inode = self.files.len() - 1;
        self.set_entry(path, Some(Node::File(inode)))?;
        if self.first_dir.is_none() {
            self.first_dir = path.parent().map(Path::to_path_buf);
        }
        Ok(inode)
    }

    /// A file that existed at `path` before the model saw it: durable, its
    /// entry and its contents as they are now.
    fn adopt_file(&mut self, path: &Path) -> io::Result<usize> {
        let durable = std::fs::read(path)?;
        self.files.push(Shadow {
            durable,
            pending: Vec::new(),
        });
        let inode = self.files.len() - 1;
        let (dir, name) = self.entry(path)?;
        let shadow = &mut self.dirs[dir];
        shadow.volatile.insert(name.clone(), Node::File(inode));
        shadow.durable.insert(name, Node::File(inode));
        Ok(inode)
    }

    /// The file at `path`: the model's inode, or the file adopted.
    fn file_at(&mut self, path: &Path) -> io::Result<usize> {
        match self.node(path) {
            Some(Node::File(inode)) => Ok(inode),
            _ => self.adopt_file(path),
        }
    }

    /// The directory `path` of a crash image whose directories hold
    /// `entries`, if it survived.
    fn surviving_dir(&self, entries: &[BTreeMap<OsString, Node>], path: &Path) -> Option<usize> {
        if let Some((_, id)) = self.roots.iter().find(|(p, _)| p == path) {
            return Some(*id);
        }
        let parent = self.surviving_dir(entries, path.parent()?)?;
        match entries[parent].get(path.file_name()?)? {
            Node::Dir(id) => Some(*id),
            Node::File(_) => None,
        }
    }
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
            return Err(io::Error::from_raw_os_error(
                super::os::error_code::IO_ERROR,
            ));
        }
        Ok(())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// For a workload on one directory: writes into `out` (an empty
    /// directory) the crash image (see [`Self::write_crash_image_of`]) of
    /// the directory the first file was created in.
    pub fn write_crash_image(&self, out: &Path, seed: u64) -> io::Result<()> {
        let first = self.state().first_dir.clone();
        match first {
            Some(dir) => self.write_crash_image_of(&dir, out, seed),
            None => Ok(()),
        }
    }

    /// Writes into `out` (an empty directory) what a disk could hold of the
    /// directory `dir` after the power loss: its durable entries and bytes,
    /// plus the unsynced changes `seed` picks (writes torn at sector
    /// boundaries), subdirectories included. Nothing if `dir` itself did
    /// not survive. The same seed picks the same changes whichever
    /// directory is written, so the images of two directories of one
    /// `seed` are parts of one disk.
    pub fn write_crash_image_of(&self, dir: &Path, out: &Path, seed: u64) -> io::Result<()> {
        let state = self.state();
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let entries: Vec<BTreeMap<OsString, Node>> = state
            .dirs
            .iter()
            .map(|d| {
                let mut names = d.durable.clone();
                for (name, node) in &d.pending {
                    if rng.coin() {
                        match node {
                            Some(n) => names.insert(name.clone(), *n),
                            None => names.remove(name),
                        };
                    }
                }
                names
            })
            .collect();
        // Every file's surviving bytes, drawn in inode order whatever is
        // written: one seed, one disk.
        let contents: Vec<Vec<u8>> = state
            .files
            .iter()
            .map(|shadow| survivor(shadow, &mut rng))
            .collect();
        let Some(root) = state.surviving_dir(&entries, dir) else {
            return Ok(());
        };
        write_tree(&entries, &contents, root, out, 0)
    }
}

/// Writes the directory `dir` of a crash image into `out`.
fn write_tree(
    entries: &[BTreeMap<OsString, Node>],
    contents: &[Vec<u8>],
    dir: usize,
    out: &Path,
    depth: usize,
) -> io::Result<()> {
    if depth > 64 {
        return Err(io::Error::other("directories nested too deep"));
    }
    for (name, node) in &entries[dir] {
        let path = out.join(name);
        match node {
            Node::File(inode) => std::fs::write(&path, &contents[*inode])?,
            Node::Dir(child) => {
                std::fs::create_dir(&path)?;
                write_tree(entries, contents, *child, &path, depth + 1)?;
            }
        }
    }
    Ok(())
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
        self.tick()?;
        let mut missing = Vec::new();
        let mut at = Some(path);
        while let Some(p) = at.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            missing.push(p.to_path_buf());
            at = p.parent();
        }
        StdFileSystem.create_dir_all(path)?;
        let mut state = self.state();
        for created in missing.iter().rev() {
            state.dirs.push(DirShadow::default());
            let id = state.dirs.len() - 1;
            state.set_entry(created, Some(Node::Dir(id)))?;
        }
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFileSystem.list_dir(path)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        let creates = matches!(mode, OpenMode::CreateNew | OpenMode::Create);
        if creates {
            self.tick()?;
        }
        let existed = mode == OpenMode::Create && path.exists();
        let inner = StdFileSystem.open(path, mode)?;
        let mut state = self.state();
        let inode = match mode {
            OpenMode::CreateNew => state.create_file(path)?,
            OpenMode::Create if !existed => state.create_file(path)?,
            _ => state.file_at(path)?,
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
        if let Some(node) = state.node(from) {
            state.set_entry(from, None)?;
            state.set_entry(to, Some(node))?;
        }
        // Roots at or below a moved directory move with it.
        for (root, _) in &mut state.roots {
            if let Ok(rest) = root.strip_prefix(from) {
                *root = to.join(rest);
            }
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.remove_file(path)?;
        self.state().set_entry(path, None)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.sync_dir(path)?;
        let mut state = self.state();
        let id = state.dir_id(path);
        let dir = &mut state.dirs[id];
        dir.durable = dir.volatile.clone();
        dir.pending.clear();
        Ok(())
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        StdFileSystem.metadata(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        StdFileSystem.canonicalize(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.remove_dir_all(path)?;
        let mut state = self.state();
        state.roots.retain(|(root, _)| !root.starts_with(path));
        state.set_entry(path, None)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        self.tick()?;
        StdFileSystem.hard_link(original, link)?;
        let mut state = self.state();
        let inode = state.file_at(original)?;
        state.set_entry(link, Some(Node::File(inode)))
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

    fn id(&self) -> io::Result<FileId> {
        self.inner.id()
    }

    fn try_lock(&self) -> io::Result<bool> {
        self.inner.try_lock()
    }

    fn unlock(&self) -> io::Result<()> {
        self.inner.unlock()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Crash images of `dir` for 32 seeds, each as a sorted list of
    /// (relative path, contents).
    fn images(fs: &PowerLossFileSystem, dir: &Path) -> Vec<Vec<(PathBuf, Vec<u8>)>> {
        (0..32)
            .map(|seed| {
                let out = tempfile::tempdir().unwrap();
                fs.write_crash_image_of(dir, out.path(), seed).unwrap();
                let mut found = Vec::new();
                let mut todo = vec![out.path().to_path_buf()];
                while let Some(d) = todo.pop() {
                    for entry in std::fs::read_dir(&d).unwrap() {
                        let path = entry.unwrap().path();
                        match path.is_dir() {
                            true => todo.push(path),
                            false => found.push((
                                path.strip_prefix(out.path()).unwrap().to_path_buf(),
                                std::fs::read(&path).unwrap(),
                            )),
                        }
                    }
                }
                found.sort();
                found
            })
            .collect()
    }

    fn write_synced(fs: &PowerLossFileSystem, path: &Path, bytes: &[u8]) {
        let file = fs.open(path, OpenMode::CreateNew).unwrap();
        file.write_all_at(bytes, 0).unwrap();
        file.sync_data().unwrap();
    }

    #[test]
    fn a_directory_renamed_into_place_survives_once_its_parent_is_synced() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path();
        let fs = PowerLossFileSystem::new();
        let (tmp, dir) = (root.join("cp.tmp"), root.join("cp"));
        fs.create_dir_all(&tmp).unwrap();
        write_synced(&fs, &tmp.join("a"), b"alpha");
        fs.sync_dir(&tmp).unwrap();
        fs.rename(&tmp, &dir).unwrap();
        let whole = vec![(PathBuf::from("cp/a"), b"alpha".to_vec())];
        // Unsynced, the staging directory's creation and the rename may
        // each be lost: `cp.tmp`, `cp`, both or neither, each whole.
        let before = images(&fs, root);
        assert!(before.iter().flatten().all(|(path, bytes)| {
            bytes == b"alpha" && (path.starts_with("cp") || path.starts_with("cp.tmp"))
        }));
        assert!(before.iter().any(|i| !i.contains(&whole[0])));
        fs.sync_dir(root).unwrap();
        assert!(images(&fs, root).iter().all(|i| *i == whole));
        assert!(
            images(&fs, &dir)
                .iter()
                .all(|i| *i == [(PathBuf::from("a"), b"alpha".to_vec())])
        );
    }

    #[test]
    fn a_sync_makes_only_its_own_directorys_entries_durable() {
        let base = tempfile::tempdir().unwrap();
        let fs = PowerLossFileSystem::new();
        let (one, two) = (base.path().join("one"), base.path().join("two"));
        fs.create_dir_all(&one).unwrap();
        fs.create_dir_all(&two).unwrap();
        fs.sync_dir(base.path()).unwrap();
        write_synced(&fs, &one.join("f"), b"1");
        write_synced(&fs, &two.join("f"), b"2");
        fs.sync_dir(&one).unwrap();
        assert!(images(&fs, &one).iter().all(|i| i.len() == 1));
        assert!(images(&fs, &two).iter().any(|i| i.is_empty()));
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "no hard links on Windows: a checkpoint copies (io::os::hard_link)"
    )]
    fn hard_links_share_their_contents_and_outlive_the_other_name() {
        let base = tempfile::tempdir().unwrap();
        let fs = PowerLossFileSystem::new();
        let (db, cp) = (base.path().join("db"), base.path().join("cp"));
        fs.create_dir_all(&db).unwrap();
        fs.create_dir_all(&cp).unwrap();
        fs.sync_dir(base.path()).unwrap();
        let file = fs.open(&db.join("seg"), OpenMode::CreateNew).unwrap();
        file.write_all_at(b"sealed", 0).unwrap();
        fs.sync_dir(&db).unwrap();
        fs.hard_link(&db.join("seg"), &cp.join("seg")).unwrap();
        fs.sync_dir(&cp).unwrap();
        // The data is not synced yet: the link holds what the file holds.
        assert!(images(&fs, &cp).iter().any(|i| i[0].1 != b"sealed"));
        file.sync_data().unwrap();
        fs.remove_file(&db.join("seg")).unwrap();
        fs.sync_dir(&db).unwrap();
        let linked = vec![(PathBuf::from("seg"), b"sealed".to_vec())];
        assert!(images(&fs, &cp).iter().all(|i| *i == linked));
        assert!(images(&fs, &db).iter().all(Vec::is_empty));
    }

    #[test]
    fn the_lock_file_is_a_file_the_model_sees_created() {
        let base = tempfile::tempdir().unwrap();
        let fs = PowerLossFileSystem::new();
        let lock = fs
            .open(&base.path().join("LOCK"), OpenMode::Create)
            .unwrap();
        assert!(lock.try_lock().unwrap());
        assert!(images(&fs, base.path()).iter().any(Vec::is_empty));
        fs.sync_dir(base.path()).unwrap();
        let again = fs
            .open(&base.path().join("LOCK"), OpenMode::Create)
            .unwrap();
        assert!(!again.try_lock().unwrap(), "a second open of a locked file");
        assert!(images(&fs, base.path()).iter().all(|i| i.len() == 1));
    }
}
