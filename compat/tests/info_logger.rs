//! `Options::set_info_logger`: a callback logger receives the database's
//! messages at or above its level.

use std::sync::{Arc, Mutex};

use alexdb as rocksdb;

use rocksdb::{DB, InfoLogger, LogLevel, Options};

#[test]
fn a_callback_logger_hears_open_compaction_and_close() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_info_logger(InfoLogger::new_callback_logger(
        LogLevel::Info,
        move |_, msg| {
            sink.lock().unwrap().push(msg.to_string());
        },
    ));
    let db = DB::open(&opts, dir.path()).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    drop(db);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[0].contains("opened database"));
    assert!(seen[1].contains("manual compaction"));
    assert!(seen[2].contains("closing database"));
}

#[test]
fn a_logger_above_info_stays_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_info_logger(InfoLogger::new_callback_logger(
        LogLevel::Error,
        move |_, _| {
            *sink.lock().unwrap() += 1;
        },
    ));
    drop(DB::open(&opts, dir.path()).unwrap());
    assert_eq!(*seen.lock().unwrap(), 0);
}

/// A background compaction pass that fails (here on damaged data) is
/// logged at error level and counted in `rocksdb.background-errors`, as
/// RocksDB logs its background errors; writes are then refused.
#[test]
fn a_background_error_is_logged_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let value = vec![7u8; 64 << 10];
    {
        // About 78 MB, nothing overwritten: no compaction has reason to
        // run, and the oldest log segment (32 MiB) holds keys 0 to ~510.
        let db = DB::open_default(&path).unwrap();
        for i in 0..1_200u32 {
            db.put(i.to_be_bytes(), &value).unwrap();
        }
    }
    let oldest = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .min()
        .unwrap();
    // Damage the value of a live key near the middle of that segment
    // (key ~256; keys 240-271 are left alone below).
    let mut bytes = std::fs::read(&oldest).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&oldest, &bytes).unwrap();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let mut opts = Options::default();
    opts.set_info_logger(InfoLogger::new_callback_logger(
        LogLevel::Error,
        move |_, msg| sink.lock().unwrap().push(msg.to_string()),
    ));
    let db = DB::open(&opts, &path).unwrap();
    // Overwriting most of the damaged segment's keys makes it worth
    // compacting; the compaction copies the damaged live record (and
    // once it fails, writes are refused).
    for i in (0..512u32).filter(|i| !(240..272).contains(i)) {
        if db.put(i.to_be_bytes(), &value).is_err() {
            break;
        }
    }
    let logged = || {
        seen.lock()
            .unwrap()
            .iter()
            .any(|m| m.contains("Background error") && m.contains("corruption"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !logged() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(logged(), "{:?}", seen.lock().unwrap());
    let errors = db.property_int_value("rocksdb.background-errors").unwrap();
    assert!(errors.unwrap_or(0) >= 1, "{errors:?}");
    assert!(db.put(b"after", b"1").is_err());
}
