//! `disable_file_deletions`: compaction still runs, but the segment files
//! it replaces stay on disk until deletions are enabled again.

use alexdb as rocksdb;

use rocksdb::DB;

fn segment_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".seg"))
        .collect();
    names.sort();
    names
}

#[test]
fn replaced_segments_stay_until_deletions_are_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path()).unwrap();
    for i in 0..2000u32 {
        db.put(i.to_be_bytes(), [0u8; 100]).unwrap();
    }
    for i in 0..2000u32 {
        db.delete(i.to_be_bytes()).unwrap();
    }
    let before = segment_files(dir.path());
    db.disable_file_deletions().unwrap();
    db.disable_file_deletions().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let held = segment_files(dir.path());
    for name in &before {
        assert!(
            held.contains(name),
            "{name} was removed while deletions were disabled"
        );
    }
    db.enable_file_deletions().unwrap();
    for name in &before {
        assert!(
            segment_files(dir.path()).contains(name),
            "calls nest: one disable is left"
        );
    }
    db.enable_file_deletions().unwrap();
    let after = segment_files(dir.path());
    assert!(
        before.iter().any(|name| !after.contains(name)),
        "compaction replaced a segment: {before:?} -> {after:?}"
    );
}
