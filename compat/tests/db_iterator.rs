//! `DB::iterator` and friends: every `IteratorMode`, fused ends, `set_mode`,
//! read-option bounds, prefix iteration and the implicit snapshot.

use alexdb as rocksdb;

use rocksdb::{DB, Direction, IteratorMode, Options, PrefixRange, ReadOptions, SliceTransform};

type Pairs = Vec<(Box<[u8]>, Box<[u8]>)>;

fn open_with(keys: &[&str]) -> (tempfile::TempDir, DB) {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path().join("db")).unwrap();
    for key in keys {
        db.put(key, format!("v-{key}")).unwrap();
    }
    (dir, db)
}

fn keys<I: Iterator<Item = Result<(Box<[u8]>, Box<[u8]>), rocksdb::Error>>>(
    iter: I,
) -> Vec<String> {
    iter.map(|item| String::from_utf8(item.unwrap().0.into_vec()).unwrap())
        .collect()
}

#[test]
fn start_and_end_walk_every_key_in_opposite_orders() {
    let (_dir, db) = open_with(&["b", "a", "c"]);
    assert_eq!(keys(db.iterator(IteratorMode::Start)), ["a", "b", "c"]);
    assert_eq!(keys(db.iterator(IteratorMode::End)), ["c", "b", "a"]);
    let first: Pairs = db
        .iterator(IteratorMode::Start)
        .take(1)
        .map(Result::unwrap)
        .collect();
    assert_eq!(&*first[0].1, b"v-a");
}

#[test]
fn from_forward_starts_at_the_first_key_at_or_after() {
    let (_dir, db) = open_with(&["k1", "k2", "k3"]);
    let from =
        |k: &'static str| keys(db.iterator(IteratorMode::From(k.as_bytes(), Direction::Forward)));
    assert_eq!(from("k2"), ["k2", "k3"]);
    assert_eq!(from("k11"), ["k2", "k3"]);
    assert_eq!(from("k0"), ["k1", "k2", "k3"]);
    assert!(from("k4").is_empty());
}

#[test]
fn from_reverse_starts_at_the_last_key_at_or_before() {
    let (_dir, db) = open_with(&["k1", "k2", "k3"]);
    let from =
        |k: &'static str| keys(db.iterator(IteratorMode::From(k.as_bytes(), Direction::Reverse)));
    assert_eq!(from("k2"), ["k2", "k1"]);
    assert_eq!(from("k21"), ["k2", "k1"]);
    assert_eq!(from("zz"), ["k3", "k2", "k1"]);
    assert!(from("k0").is_empty());
}

#[test]
fn valid_reports_whether_the_start_key_exists() {
    let (_dir, db) = open_with(&["k1", "k2"]);
    assert!(
        db.iterator(IteratorMode::From(b"k0", Direction::Forward))
            .valid()
    );
    assert!(
        !db.iterator(IteratorMode::From(b"k3", Direction::Forward))
            .valid()
    );
    assert!(
        !db.iterator(IteratorMode::From(b"k0", Direction::Reverse))
            .valid()
    );
    assert!(
        db.iterator(IteratorMode::From(b"k3", Direction::Reverse))
            .valid()
    );
}

#[test]
fn a_finished_iterator_keeps_returning_none() {
    let (_dir, db) = open_with(&["a"]);
    let mut iter = db.iterator(IteratorMode::Start);
    assert!(iter.next().is_some());
    assert!(iter.next().is_none());
    db.put(b"b", b"later").unwrap();
    assert!(iter.next().is_none());
    assert!(iter.next().is_none());
}

#[test]
fn set_mode_repositions_a_used_iterator() {
    let (_dir, db) = open_with(&["a", "b", "c"]);
    let mut iter = db.iterator(IteratorMode::Start);
    assert_eq!(iter.by_ref().count(), 3);
    iter.set_mode(IteratorMode::From(b"b", Direction::Reverse));
    assert_eq!(keys(iter.by_ref()), ["b", "a"]);
    iter.set_mode(IteratorMode::End);
    assert_eq!(keys(iter), ["c", "b", "a"]);
}

#[test]
fn an_iterator_never_sees_writes_made_after_it_was_created() {
    let (_dir, db) = open_with(&["a", "b"]);
    let iter = db.iterator(IteratorMode::Start);
    db.put(b"c", b"new").unwrap();
    db.delete(b"a").unwrap();
    db.put(b"b", b"changed").unwrap();
    let items: Pairs = iter.map(Result::unwrap).collect();
    assert_eq!(items.len(), 2);
    assert_eq!((&*items[0].0, &*items[0].1), (&b"a"[..], &b"v-a"[..]));
    assert_eq!(&*items[1].1, b"v-b");
    assert_eq!(keys(db.iterator(IteratorMode::Start)), ["b", "c"]);
}

#[test]
fn deleted_keys_are_skipped_in_both_directions() {
    let (_dir, db) = open_with(&["a", "b", "c", "d"]);
    db.delete(b"b").unwrap();
    db.delete(b"d").unwrap();
    assert_eq!(keys(db.iterator(IteratorMode::Start)), ["a", "c"]);
    assert_eq!(keys(db.iterator(IteratorMode::End)), ["c", "a"]);
}

#[test]
fn lower_bound_is_inclusive_and_upper_bound_exclusive() {
    let (_dir, db) = open_with(&["a", "b", "c", "d", "e"]);
    let bounded = |mode: IteratorMode| {
        let mut opts = ReadOptions::default();
        opts.set_iterate_lower_bound(b"b".to_vec());
        opts.set_iterate_upper_bound(b"d".to_vec());
        keys(db.iterator_opt(mode, opts))
    };
    assert_eq!(bounded(IteratorMode::Start), ["b", "c"]);
    assert_eq!(bounded(IteratorMode::End), ["c", "b"]);
    assert_eq!(
        bounded(IteratorMode::From(b"a", Direction::Forward)),
        ["b", "c"]
    );
    assert_eq!(
        bounded(IteratorMode::From(b"z", Direction::Reverse)),
        ["c", "b"]
    );
    assert!(bounded(IteratorMode::From(b"d", Direction::Forward)).is_empty());
    assert!(bounded(IteratorMode::From(b"a", Direction::Reverse)).is_empty());
}

#[test]
fn set_iterate_range_accepts_every_range_shape() {
    let (_dir, db) = open_with(&["a", "ab", "b", "c"]);
    let ranged = |f: &dyn Fn(&mut ReadOptions)| {
        let mut opts = ReadOptions::default();
        f(&mut opts);
        keys(db.iterator_opt(IteratorMode::Start, opts))
    };
    assert_eq!(ranged(&|o| o.set_iterate_range(..)), ["a", "ab", "b", "c"]);
    assert_eq!(
        ranged(&|o| o.set_iterate_range(b"ab".to_vec()..b"c".to_vec())),
        ["ab", "b"]
    );
    assert_eq!(
        ranged(&|o| o.set_iterate_range(b"b".to_vec()..)),
        ["b", "c"]
    );
    assert_eq!(
        ranged(&|o| o.set_iterate_range(..b"b".to_vec())),
        ["a", "ab"]
    );
    assert_eq!(
        ranged(&|o| o.set_iterate_range(PrefixRange(b"a".to_vec()))),
        ["a", "ab"]
    );
}

#[test]
fn prefix_iterator_stops_at_the_end_of_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    let db = DB::open(&opts, dir.path().join("db")).unwrap();
    for key in ["aaa1", "aaa2", "bbb1", "bbb2"] {
        db.put(key, key).unwrap();
    }
    assert_eq!(keys(db.prefix_iterator(b"aaa")), ["aaa1", "aaa2"]);
    assert_eq!(keys(db.prefix_iterator(b"bbb")), ["bbb1", "bbb2"]);
    assert!(keys(db.prefix_iterator(b"ccc")).is_empty());
}

#[test]
fn prefix_iterator_compares_the_extracted_prefix_of_the_seek_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    let db = DB::open(&opts, dir.path().join("db")).unwrap();
    let data: [([u8; 4], &str); 6] = [
        ([0, 0, 0, 0], "111"),
        ([0, 1, 0, 1], "333"),
        ([0, 1, 1, 1], "444"),
        ([0, 1, 2, 1], "555"),
        ([0, 2, 0, 0], "666"),
        ([2, 0, 0, 0], "777"),
    ];
    for (key, value) in data {
        db.put(key, value).unwrap();
    }
    let values: Vec<String> = db
        .prefix_iterator([0, 1, 1])
        .map(|item| String::from_utf8(item.unwrap().1.into_vec()).unwrap())
        .collect();
    assert_eq!(values, ["444", "555", "666"]);
}

#[test]
fn prefix_iterator_without_an_extractor_scans_to_the_end() {
    let (_dir, db) = open_with(&["aaa1", "bbb1", "ccc1"]);
    assert_eq!(keys(db.prefix_iterator(b"bbb")), ["bbb1", "ccc1"]);
}

#[test]
fn full_iterator_ignores_the_prefix_extractor() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    let db = DB::open(&opts, dir.path().join("db")).unwrap();
    for key in ["aaa1", "bbb1"] {
        db.put(key, key).unwrap();
    }
    assert_eq!(
        keys(db.full_iterator(IteratorMode::Start)),
        ["aaa1", "bbb1"]
    );
}

#[test]
fn an_iterator_can_be_returned_from_a_function() {
    fn value_lengths(db: &DB) -> impl Iterator<Item = usize> + '_ {
        db.iterator(IteratorMode::Start)
            .map(|item| item.unwrap().1.len())
    }
    let (_dir, db) = open_with(&["a", "bb"]);
    assert_eq!(value_lengths(&db).collect::<Vec<_>>(), [3, 4]);
}

#[test]
fn an_iterator_over_many_keys_crosses_chunk_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path().join("db")).unwrap();
    for i in 0..1000u32 {
        db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
    }
    let forward: Vec<u32> = db
        .iterator(IteratorMode::Start)
        .map(|item| u32::from_be_bytes(item.unwrap().0[..].try_into().unwrap()))
        .collect();
    assert_eq!(forward, (0..1000).collect::<Vec<_>>());
    let backward = db.iterator(IteratorMode::From(
        &500u32.to_be_bytes(),
        Direction::Reverse,
    ));
    assert_eq!(backward.count(), 501);
}
