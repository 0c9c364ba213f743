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
