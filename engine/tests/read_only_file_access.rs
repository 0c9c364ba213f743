//! What a read-only handle does to files, seen through the file system
//! seam: it never opens a file for writing, renames, removes or syncs
//! anything, and when a listed segment vanishes from the directory (the
//! primary's compaction removed it after the MANIFEST was read) it reads the
//! MANIFEST again, up to 5 times, before reporting the file.

mod common;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use alexdb_engine::io::{FileHandle, FileSystem, Metadata, OpenMode, StdFileSystem};
use alexdb_engine::keyspace::MANIFEST_FILE;
use alexdb_engine::{Db, Error, Options};
use common::{quiet_options, scan_all, segment_files};

/// The real file system, recording every call that could change anything,
/// and hiding `hidden` from the first `hide_for` directory listings.
#[derive(Debug, Default)]
struct Watched {
    hidden: Option<String>,
    state: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    hide_for: usize,
    changes: Vec<String>,
    manifest_reads: usize,
}

impl Watched {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.state.lock().unwrap()
    }

    fn change(&self, what: String) {
        self.seen().changes.push(what);
    }
}

impl FileSystem for Watched {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.change(format!("create_dir_all {}", path.display()));
        StdFileSystem.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = StdFileSystem.list_dir(path)?;
        let mut seen = self.seen();
        if seen.hide_for > 0 {
            seen.hide_for -= 1;
            names.retain(|n| Some(n) != self.hidden.as_ref());
        }
        Ok(names)
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn FileHandle>> {
        if mode != OpenMode::ReadOnly {
            self.change(format!("open {mode:?} {}", path.display()));
        }
        StdFileSystem.open(path, mode)
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        if path.ends_with(MANIFEST_FILE) {
            self.seen().manifest_reads += 1;
        }
        StdFileSystem.read_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.change(format!("rename {}", from.display()));
        StdFileSystem.rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.change(format!("remove {}", path.display()));
        StdFileSystem.remove_file(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.change(format!("sync_dir {}", path.display()));
        StdFileSystem.sync_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        StdFileSystem.metadata(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        StdFileSystem.canonicalize(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.change(format!("remove_dir_all {}", path.display()));
        StdFileSystem.remove_dir_all(path)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        self.change(format!("hard_link {}", link.display()));
        StdFileSystem.hard_link(original, link)
    }
}

/// A closed database of several segments; returns its second segment.
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    let ks = db.keyspace("default").unwrap();
    for i in 0..3000u32 {
        let key = format!("key{i:05}");
        db.put(ks, key.as_bytes(), b"value", &Default::default())
            .unwrap();
    }
    drop(db);
    let second = segment_files(dir.path()).swap_remove(1);
    (dir, second)
}

/// A watched file system that hides `file` from the first `listings`
/// directory listings.
fn hiding(file: &Path, listings: usize) -> Arc<Watched> {
    let fs = Watched {
        hidden: Some(file.file_name().unwrap().to_string_lossy().into_owned()),
        ..Watched::default()
    };
    fs.seen().hide_for = listings;
    Arc::new(fs)
}

fn reader_options(fs: &Arc<Watched>) -> Options {
    Options {
        file_system: fs.clone(),
        ..quiet_options()
    }
}

#[test]
fn a_reader_opens_nothing_for_writing_and_changes_nothing() {
    let (dir, _) = database();
    let fs = Arc::new(Watched::default());
    let reader = Db::open_read_only(dir.path(), reader_options(&fs)).unwrap();
    let ks = reader.keyspace("default").unwrap();
    assert_eq!(scan_all(&reader, ks).len(), 3000);
    reader.catch_up().unwrap();
    let _ = reader.put(ks, b"k", b"v", &Default::default());
    let _ = reader.compact();
    drop(reader);
    assert_eq!(fs.seen().changes, Vec::<String>::new());
}

#[test]
fn a_listed_segment_missing_for_a_while_is_waited_for() {
    let (dir, second) = database();
    let fs = hiding(&second, 4);
    let reader = Db::open_read_only(dir.path(), reader_options(&fs)).unwrap();
    let ks = reader.keyspace("default").unwrap();
    assert_eq!(scan_all(&reader, ks).len(), 3000);
    assert_eq!(fs.seen().manifest_reads, 5);
}

#[test]
fn a_listed_segment_missing_for_good_is_reported_by_name() {
    let (dir, second) = database();
    let fs = hiding(&second, usize::MAX);
    match Db::open_read_only(dir.path(), reader_options(&fs)) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, second),
        other => panic!(
            "expected corruption naming {}, got {other:?}",
            second.display()
        ),
    }
    assert_eq!(fs.seen().manifest_reads, 5);
}
