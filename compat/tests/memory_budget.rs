//! A write buffer manager's size is the memory budget of the databases
//! opened with it: over it, AlexDB packs its index and says in
//! `rocksdb.stats` that it stays over; the manager's size can be changed
//! while they are open, and reads stay right throughout.

use std::time::{Duration, Instant};

use alexdb::{DB, Options, WriteBatch, WriteBufferManager, properties};

fn stats_line(db: &DB, label: &str) -> String {
    let stats = db.property_value(properties::STATS).unwrap().unwrap();
    stats
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} in {stats}"))
        .trim()
        .to_string()
}

fn wait_for_line(db: &DB, label: &str, want: &str) {
    let start = Instant::now();
    while stats_line(db, label) != want {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{label} still {}",
            stats_line(db, label)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_write_buffer_managers_size_bounds_what_the_database_holds() {
    let dir = tempfile::tempdir().unwrap();
    let manager = WriteBufferManager::new_write_buffer_manager(0, true);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_manager(&manager);
    let db = DB::open(&opts, dir.path()).unwrap();
    for chunk in 0..50u32 {
        let mut batch = WriteBatch::default();
        for i in chunk * 1000..(chunk + 1) * 1000 {
            batch.put(
                u64::from(i)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .to_be_bytes(),
                b"v",
            );
        }
        db.write(batch).unwrap();
    }
    assert_eq!(stats_line(&db, "Memory over budget:"), "no");
    let held: u64 = stats_line(&db, "Memory held:").parse().unwrap();
    assert!(held > 0);
    manager.set_buffer_size(1);
    wait_for_line(&db, "Memory over budget:", "yes");
    let packed: u64 = stats_line(&db, "Memory held:").parse().unwrap();
    assert!(packed < held, "{packed} after, {held} before");
    for i in (0..50_000u64).step_by(11) {
        let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        assert_eq!(db.get(key).unwrap().as_deref(), Some(&b"v"[..]));
    }
    manager.set_buffer_size(0);
    wait_for_line(&db, "Memory over budget:", "no");
    assert_eq!(manager.get_usage(), 0, "AlexDB has no write buffers");
}
