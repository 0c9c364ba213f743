//! Opening, closing, locking and destroying a database, and the error
//! messages RocksDB gives for each failure.

use alexdb as rocksdb;

use rocksdb::{DB, ErrorKind, Options};

fn fresh() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    (dir, path)
}

#[test]
fn open_default_creates_the_directory_and_reopens_with_the_data() {
    let (_dir, path) = fresh();
    {
        let db = DB::open_default(&path).unwrap();
        assert_eq!(db.path(), path.as_path());
        db.put(b"k", b"v").unwrap();
    }
    assert!(path.is_dir());
    let db = DB::open_default(&path).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn options_default_does_not_create_a_missing_database() {
    let (_dir, path) = fresh();
    let err = DB::open(&Options::default(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        format!(
            "Invalid argument: {}/CURRENT: does not exist (create_if_missing is false)",
            path.display()
        )
    );
    // As in rocksdb, the directory itself is created before the open fails.
    assert!(path.is_dir());
}

#[test]
fn error_if_exists_refuses_an_existing_database() {
    let (_dir, path) = fresh();
    drop(DB::open_default(&path).unwrap());
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_error_if_exists(true);
    let err = DB::open(&opts, &path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Invalid argument: {}: exists (error_if_exists is true)",
            path.display()
        )
    );
}

/// In the same process RocksDB names the holder: "lock hold by current
/// process, acquire time <secs> acquiring thread <id>".
#[test]
fn a_second_open_fails_on_the_lock_and_succeeds_after_close() {
    let (_dir, path) = fresh();
    let db = DB::open_default(&path).unwrap();
    for second in [
        DB::open_default(&path).unwrap_err(),
        DB::open_default(path.join(".")).unwrap_err(),
        DB::destroy(&Options::default(), &path).unwrap_err(),
    ] {
        assert_eq!(second.kind(), ErrorKind::IOError);
        let text = second.to_string();
        assert!(
            text.starts_with("IO error: lock hold by current process, acquire time "),
            "{text}"
        );
        assert!(text.contains(" acquiring thread "), "{text}");
        assert!(text.ends_with("/LOCK: No locks available"), "{text}");
    }
    drop(db);
    DB::open_default(&path).unwrap();
}

const LOCK_HOLDER_ENV: &str = "ALEXDB_TEST_LOCK_HOLDER";
const LOCK_HELD: &str = "lock-held-by-child";

/// Another process holding the database gets RocksDB's `flock` message.
/// The child is this test binary, rerun for this test with the database's
/// path in `LOCK_HOLDER_ENV`: it opens the database and holds it until its
/// standard input closes.
#[test]
fn an_open_in_another_process_fails_on_the_lock() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    if let Ok(held) = std::env::var(LOCK_HOLDER_ENV) {
        let _db = DB::open_default(&held).unwrap();
        println!("{LOCK_HELD}");
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        return;
    }
    let (_dir, path) = fresh();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_open_in_another_process_fails_on_the_lock",
            "--nocapture",
        ])
        .env(LOCK_HOLDER_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains(LOCK_HELD) {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child ended");
    }
    let err = DB::open_default(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError);
    assert_eq!(
        err.to_string(),
        format!(
            "IO error: While lock file: {}/LOCK: Resource temporarily unavailable",
            path.display()
        )
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    DB::open_default(&path).unwrap();
}

/// RocksDB allows a second open, in the same process, of a database whose
/// directory was renamed while open (its in-process table is keyed by
/// path): `cita-database`'s `test_restore` renames an open database into
/// place and opens it. The two handles share the lock until both close.
#[test]
fn a_database_renamed_while_open_opens_at_its_new_path() {
    let (dir, old) = fresh();
    let first = DB::open_default(&old).unwrap();
    first.put(b"k", b"v").unwrap();
    let new = dir.path().join("renamed");
    std::fs::rename(&old, &new).unwrap();
    let second = DB::open_default(&new).unwrap();
    assert_eq!(second.get(b"k").unwrap(), Some(b"v".to_vec()));
    let again = DB::open_default(&new).unwrap_err();
    assert!(again.to_string().contains("lock hold by current process"));
    drop(first);
    assert!(
        DB::open_default(&new).is_err(),
        "the second handle holds it"
    );
    drop(second);
    let db = DB::open_default(&new).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn destroy_is_ok_on_a_missing_path() {
    let (_dir, path) = fresh();
    DB::destroy(&Options::default(), &path).unwrap();
    assert!(!path.exists());
}

#[test]
fn destroy_refuses_a_live_database_then_removes_it() {
    let (_dir, path) = fresh();
    let db = DB::open_default(&path).unwrap();
    db.put(b"k", b"v").unwrap();
    let err = DB::destroy(&Options::default(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError);
    assert!(err.to_string().contains("/LOCK:"), "{err}");
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    drop(db);

    DB::destroy(&Options::default(), &path).unwrap();
    assert!(!path.exists());
    let db = DB::open_default(&path).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
}

#[test]
fn destroy_keeps_files_that_are_not_the_databases() {
    let (_dir, path) = fresh();
    drop(DB::open_default(&path).unwrap());
    std::fs::write(path.join("notes.txt"), b"mine").unwrap();
    DB::destroy(&Options::default(), &path).unwrap();
    assert_eq!(std::fs::read(path.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read_dir(&path).unwrap().count(), 1);
}

#[test]
fn the_database_is_send_and_sync_and_shared_through_arc() {
    let (_dir, path) = fresh();
    let db = std::sync::Arc::new(DB::open_default(&path).unwrap());
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..100u8 {
                    db.put([t, i], [i]).unwrap();
                    assert_eq!(db.get([t, i]).unwrap(), Some(vec![i]));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(db.iterator(rocksdb::IteratorMode::Start).count(), 400);
}

#[test]
fn errors_work_with_question_mark_and_into_string() {
    fn open_missing(path: &std::path::Path) -> Result<DB, Box<dyn std::error::Error>> {
        Ok(DB::open(&Options::default(), path)?)
    }
    let (_dir, path) = fresh();
    let err = open_missing(&path).unwrap_err();
    assert!(err.to_string().starts_with("Invalid argument: "));
    let err = DB::open(&Options::default(), &path).unwrap_err();
    assert!(err.into_string().ends_with("(create_if_missing is false)"));
}

#[test]
fn read_only_handles_read_and_refuse_writes() {
    let (_dir, path) = fresh();
    {
        let db = DB::open_default(&path).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    let db = DB::open_for_read_only(&Options::default(), &path, false).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    let err = db.put(b"k", b"w").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert_eq!(
        err.to_string(),
        "Not implemented: Not supported operation in read only mode."
    );
}

#[test]
fn open_with_ttl_keeps_every_entry() {
    let (_dir, path) = fresh();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open_with_ttl(&opts, &path, std::time::Duration::from_secs(1)).unwrap();
    db.put(b"k", b"v").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

/// Regression from a real project's suite (ethrex-storage keeps a
/// `metadata.json` in its database directory): RocksDB creates a database
/// beside a program's own files and leaves them alone; without
/// `create_if_missing` it reports the missing `CURRENT`.
#[test]
fn a_database_is_created_beside_a_programs_own_files() {
    let (_dir, path) = fresh();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("metadata.json"), b"{}").unwrap();
    let err = DB::open(&Options::default(), &path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Invalid argument: {}/CURRENT: does not exist (create_if_missing is false)",
            path.display()
        )
    );
    {
        let db = DB::open_default(&path).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    // A numbered `.log` of the program's own, written after creation, does
    // not make the database look like RocksDB's.
    std::fs::write(path.join("000001.log"), b"the program's log").unwrap();
    let db = DB::open_default(&path).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(std::fs::read(path.join("metadata.json")).unwrap(), b"{}");
}
