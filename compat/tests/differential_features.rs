//! Differential test of the features beyond plain reads and writes, against
//! the real `rocksdb` crate (0.25): checkpoints, `get_updates_since`,
//! compaction filters (with snapshots), merge stacks, TTL expiry, custom
//! comparators, SST writing and ingestion, `set_options` validation, and a
//! secondary's catch-up.
//!
//! Each scenario (`differential_features/scenarios.rs`) is written once
//! against the rocksdb API, compiled against both crates, and records what
//! it observes as text; the two transcripts must be equal. Writes come from
//! a seeded generator, so every run compares the same histories
//! (`ALEXDB_DIFF_SEED=<n>` picks another).

// Compares with, or converts from, the real RocksDB: a dev-dependency
// everywhere but Windows and musl (see compat/Cargo.toml).
#![cfg(not(any(windows, target_env = "musl")))]

/// The scenarios against `rocksdb`.
mod real {
    use rocksdb as api;
    include!("differential_features/scenarios.rs");
}

/// The scenarios against `alexdb`.
mod ours {
    use alexdb as api;
    include!("differential_features/scenarios.rs");
}

fn seed() -> u64 {
    std::env::var("ALEXDB_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

macro_rules! compare {
    ($name:ident) => {
        #[test]
        fn $name() {
            let seed = seed();
            let real = real::$name(seed);
            let ours = ours::$name(seed);
            assert_eq!(
                ours, real,
                "alexdb (left) diverges from rocksdb (right), seed {seed}"
            );
        }
    };
}

compare!(checkpoint_copies_exactly_the_writes_before_it);
compare!(updates_since_returns_the_logged_batches);
compare!(secondary_catches_up_with_the_primary);
compare!(compaction_filter_decisions_apply_at_compact_range);
compare!(compaction_filter_with_snapshots);
compare!(compaction_filter_factory_makes_a_filter_per_run);
compare!(merge_stacks_fold_alike);
compare!(ttl_entries_expire_at_compaction);
compare!(comparator_orders_every_iteration);
compare!(case_insensitive_keys_are_one_key);
compare!(ingested_files_override_the_database);
compare!(set_options_accepts_and_refuses_the_same_input);
compare!(properties_answer_where_rocksdb_does);
