//! [`PerfMetric`]: the counters of RocksDB's `PerfContext`, with the names
//! its report prints.

/// One counter of a [`super::PerfContext`].
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum PerfMetric {
    /// `user_key_comparison_count`
    UserKeyComparisonCount = 0,
    /// `block_cache_hit_count`
    BlockCacheHitCount = 1,
    /// `block_read_count`
    BlockReadCount = 2,
    /// `block_read_byte`
    BlockReadByte = 3,
    /// `block_read_time`
    BlockReadTime = 4,
    /// `block_checksum_time`
    BlockChecksumTime = 5,
    /// `block_decompress_time`
    BlockDecompressTime = 6,
    /// `get_read_bytes`
    GetReadBytes = 7,
    /// `multiget_read_bytes`
    MultigetReadBytes = 8,
    /// `iter_read_bytes`
    IterReadBytes = 9,
    /// `internal_key_skipped_count`
    InternalKeySkippedCount = 10,
    /// `internal_delete_skipped_count`
    InternalDeleteSkippedCount = 11,
    /// `internal_recent_skipped_count`
    InternalRecentSkippedCount = 12,
    /// `internal_merge_count`
    InternalMergeCount = 13,
    /// `get_snapshot_time`
    GetSnapshotTime = 14,
    /// `get_from_memtable_time`
    GetFromMemtableTime = 15,
    /// `get_from_memtable_count`
    GetFromMemtableCount = 16,
    /// `get_post_process_time`
    GetPostProcessTime = 17,
    /// `get_from_output_files_time`
    GetFromOutputFilesTime = 18,
    /// `seek_on_memtable_time`
    SeekOnMemtableTime = 19,
    /// `seek_on_memtable_count`
    SeekOnMemtableCount = 20,
    /// `next_on_memtable_count`
    NextOnMemtableCount = 21,
    /// `prev_on_memtable_count`
    PrevOnMemtableCount = 22,
    /// `seek_child_seek_time`
    SeekChildSeekTime = 23,
    /// `seek_child_seek_count`
    SeekChildSeekCount = 24,
    /// `seek_min_heap_time`
    SeekMinHeapTime = 25,
    /// `seek_max_heap_time`
    SeekMaxHeapTime = 26,
    /// `seek_internal_seek_time`
    SeekInternalSeekTime = 27,
    /// `find_next_user_entry_time`
    FindNextUserEntryTime = 28,
    /// `write_wal_time`
    WriteWalTime = 29,
    /// `write_memtable_time`
    WriteMemtableTime = 30,
    /// `write_delay_time`
    WriteDelayTime = 31,
    /// `write_pre_and_post_process_time`
    WritePreAndPostProcessTime = 32,
    /// `db_mutex_lock_nanos`
    DbMutexLockNanos = 33,
    /// `db_condition_wait_nanos`
    DbConditionWaitNanos = 34,
    /// `merge_operator_time_nanos`
    MergeOperatorTimeNanos = 35,
    /// `read_index_block_nanos`
    ReadIndexBlockNanos = 36,
    /// `read_filter_block_nanos`
    ReadFilterBlockNanos = 37,
    /// `new_table_block_iter_nanos`
    NewTableBlockIterNanos = 38,
    /// `new_table_iterator_nanos`
    NewTableIteratorNanos = 39,
    /// `block_seek_nanos`
    BlockSeekNanos = 40,
    /// `find_table_nanos`
    FindTableNanos = 41,
    /// `bloom_memtable_hit_count`
    BloomMemtableHitCount = 42,
    /// `bloom_memtable_miss_count`
    BloomMemtableMissCount = 43,
    /// `bloom_sst_hit_count`
    BloomSstHitCount = 44,
    /// `bloom_sst_miss_count`
    BloomSstMissCount = 45,
    /// `key_lock_wait_time`
    KeyLockWaitTime = 46,
    /// `key_lock_wait_count`
    KeyLockWaitCount = 47,
    /// `env_new_sequential_file_nanos`
    EnvNewSequentialFileNanos = 48,
    /// `env_new_random_access_file_nanos`
    EnvNewRandomAccessFileNanos = 49,
    /// `env_new_writable_file_nanos`
    EnvNewWritableFileNanos = 50,
    /// `env_reuse_writable_file_nanos`
    EnvReuseWritableFileNanos = 51,
    /// `env_new_random_rw_file_nanos`
    EnvNewRandomRwFileNanos = 52,
    /// `env_new_directory_nanos`
    EnvNewDirectoryNanos = 53,
    /// `env_file_exists_nanos`
    EnvFileExistsNanos = 54,
    /// `env_get_children_nanos`
    EnvGetChildrenNanos = 55,
    /// `env_get_children_file_attributes_nanos`
    EnvGetChildrenFileAttributesNanos = 56,
    /// `env_delete_file_nanos`
    EnvDeleteFileNanos = 57,
    /// `env_create_dir_nanos`
    EnvCreateDirNanos = 58,
    /// `env_create_dir_if_missing_nanos`
    EnvCreateDirIfMissingNanos = 59,
    /// `env_delete_dir_nanos`
    EnvDeleteDirNanos = 60,
    /// `env_get_file_size_nanos`
    EnvGetFileSizeNanos = 61,
    /// `env_get_file_modification_time_nanos`
    EnvGetFileModificationTimeNanos = 62,
    /// `env_rename_file_nanos`
    EnvRenameFileNanos = 63,
    /// `env_link_file_nanos`
    EnvLinkFileNanos = 64,
    /// `env_lock_file_nanos`
    EnvLockFileNanos = 65,
    /// `env_unlock_file_nanos`
    EnvUnlockFileNanos = 66,
    /// `env_new_logger_nanos`
    EnvNewLoggerNanos = 67,
    /// `total_metric_count`
    TotalMetricCount = 68,
}

/// The report names of the metrics, indexed by `PerfMetric as usize`.
pub(crate) const METRIC_NAMES: [&str; PerfMetric::TotalMetricCount as usize] = [
    "user_key_comparison_count",
    "block_cache_hit_count",
    "block_read_count",
    "block_read_byte",
    "block_read_time",
    "block_checksum_time",
    "block_decompress_time",
    "get_read_bytes",
    "multiget_read_bytes",
    "iter_read_bytes",
    "internal_key_skipped_count",
    "internal_delete_skipped_count",
    "internal_recent_skipped_count",
    "internal_merge_count",
    "get_snapshot_time",
    "get_from_memtable_time",
    "get_from_memtable_count",
    "get_post_process_time",
    "get_from_output_files_time",
    "seek_on_memtable_time",
    "seek_on_memtable_count",
    "next_on_memtable_count",
    "prev_on_memtable_count",
    "seek_child_seek_time",
    "seek_child_seek_count",
    "seek_min_heap_time",
    "seek_max_heap_time",
    "seek_internal_seek_time",
    "find_next_user_entry_time",
    "write_wal_time",
    "write_memtable_time",
    "write_delay_time",
    "write_pre_and_post_process_time",
    "db_mutex_lock_nanos",
    "db_condition_wait_nanos",
    "merge_operator_time_nanos",
    "read_index_block_nanos",
    "read_filter_block_nanos",
    "new_table_block_iter_nanos",
    "new_table_iterator_nanos",
    "block_seek_nanos",
    "find_table_nanos",
    "bloom_memtable_hit_count",
    "bloom_memtable_miss_count",
    "bloom_sst_hit_count",
    "bloom_sst_miss_count",
    "key_lock_wait_time",
    "key_lock_wait_count",
    "env_new_sequential_file_nanos",
    "env_new_random_access_file_nanos",
    "env_new_writable_file_nanos",
    "env_reuse_writable_file_nanos",
    "env_new_random_rw_file_nanos",
    "env_new_directory_nanos",
    "env_file_exists_nanos",
    "env_get_children_nanos",
    "env_get_children_file_attributes_nanos",
    "env_delete_file_nanos",
    "env_create_dir_nanos",
    "env_create_dir_if_missing_nanos",
    "env_delete_dir_nanos",
    "env_get_file_size_nanos",
    "env_get_file_modification_time_nanos",
    "env_rename_file_nanos",
    "env_link_file_nanos",
    "env_lock_file_nanos",
    "env_unlock_file_nanos",
    "env_new_logger_nanos",
];
