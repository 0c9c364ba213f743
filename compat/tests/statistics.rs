//! Statistics: the tickers and histograms AlexDB fills, shared through the
//! options, and RocksDB's text report; perf counters and memory usage.

use alexdb as rocksdb;

use rocksdb::perf::{PerfStatsLevel, get_memory_usage_stats, set_perf_stats};
use rocksdb::statistics::{Histogram, Ticker};
use rocksdb::{DB, Options, PerfContext, PerfMetric, WriteBatch};

#[test]
fn writes_and_reads_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    let db = DB::open(&opts, dir.path()).unwrap();
    db.put(b"k", b"value").unwrap();
    let mut batch = WriteBatch::default();
    batch.put(b"a", b"1");
    batch.delete(b"b");
    db.write(batch).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"value".to_vec()));
    assert_eq!(db.get(b"missing").unwrap(), None);

    assert_eq!(opts.get_ticker_count(Ticker::NumberKeysWritten), 3);
    assert!(opts.get_ticker_count(Ticker::BytesWritten) > 0);
    assert_eq!(opts.get_ticker_count(Ticker::NumberKeysRead), 2);
    assert_eq!(opts.get_ticker_count(Ticker::BytesRead), 5);
    let writes = opts.get_histogram_data(Histogram::DbWrite);
    assert_eq!(writes.count(), 2);
    assert!(writes.max() >= 1.0);
    let mut iter = db.raw_iterator();
    iter.seek_to_first();
    iter.next();
    iter.next();
    assert_eq!(opts.get_ticker_count(Ticker::NumberDbSeek), 1);
    assert_eq!(opts.get_ticker_count(Ticker::NumberDbSeekFound), 1);
    assert_eq!(opts.get_ticker_count(Ticker::NumberDbNext), 2);
    assert_eq!(opts.get_ticker_count(Ticker::NumberDbNextFound), 1);
    assert_eq!(opts.get_ticker_count(Ticker::IterBytesRead), 2 + 6);
    let report = opts.get_statistics().unwrap();
    assert!(report.contains("rocksdb.number.keys.written COUNT : 3\n"));
    assert!(report.contains("rocksdb.db.get.micros P50 : "));
}

/// A multi-get counts RocksDB's `MultiGet` tickers and histograms, not
/// those of `Get`, for every variant.
#[test]
fn multi_gets_are_counted_as_multi_gets() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    #[cfg_attr(
        feature = "multi-threaded-cf",
        expect(unused_mut, reason = "`create_cf` takes `&self` there")
    )]
    let mut db = DB::open(&opts, dir.path()).unwrap();
    db.create_cf("x", &Options::default()).unwrap();
    db.put(b"a", b"123").unwrap();
    let cf = db.cf_handle("x").unwrap();
    db.put_cf(&cf, b"a", b"123").unwrap();
    db.put_cf(&cf, b"b", b"45").unwrap();
    let found = db.multi_get([&b"a"[..], b"missing", b"b"]);
    assert_eq!(found.len(), 3);
    assert_eq!(found[0].as_ref().unwrap().as_deref(), Some(&b"123"[..]));
    db.multi_get_cf([(&cf, b"a")]);
    db.batched_multi_get_cf(&cf, [b"b", b"c"], false);

    assert_eq!(opts.get_ticker_count(Ticker::NumberMultigetCalls), 3);
    assert_eq!(opts.get_ticker_count(Ticker::NumberMultigetKeysRead), 6);
    assert_eq!(opts.get_ticker_count(Ticker::NumberMultigetKeysFound), 3);
    assert_eq!(
        opts.get_ticker_count(Ticker::NumberMultigetBytesRead),
        3 + 3 + 2
    );
    assert_eq!(opts.get_histogram_data(Histogram::DbMultiget).count(), 3);
    assert_eq!(
        opts.get_histogram_data(Histogram::BytesPerMultiget).count(),
        3
    );
    assert_eq!(opts.get_ticker_count(Ticker::NumberKeysRead), 0);
    assert_eq!(opts.get_histogram_data(Histogram::DbGet).count(), 0);
}

#[test]
fn without_statistics_everything_is_zero() {
    let opts = Options::default();
    assert_eq!(opts.get_statistics(), None);
    assert_eq!(opts.get_ticker_count(Ticker::BytesWritten), 0);
    assert_eq!(opts.get_histogram_data(Histogram::DbGet).count(), 0);
}

#[test]
fn perf_counts_read_bytes_on_this_thread() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path()).unwrap();
    db.put(b"k", b"12345").unwrap();
    let mut ctx = PerfContext::default();
    set_perf_stats(PerfStatsLevel::EnableCount);
    ctx.reset();
    db.get(b"k").unwrap();
    assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 5);
    assert!(ctx.report(true).contains("get_read_bytes = 5"));
    set_perf_stats(PerfStatsLevel::Disable);
}

/// Regression (zksync_storage's `profiling_basics`): a get that finds its
/// key counts the comparison with the stored key, on the reading thread.
#[test]
fn perf_counts_a_found_keys_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    let ctx = PerfContext::default();
    set_perf_stats(PerfStatsLevel::EnableCount);
    let before = ctx.metric(PerfMetric::UserKeyComparisonCount);
    db.get(b"k").unwrap();
    db.get_pinned(b"k").unwrap();
    assert_eq!(ctx.metric(PerfMetric::UserKeyComparisonCount), before + 2);
    db.get(b"absent").unwrap();
    assert_eq!(ctx.metric(PerfMetric::UserKeyComparisonCount), before + 2);
    set_perf_stats(PerfStatsLevel::Disable);
}

#[test]
fn memory_usage_reports_index_bytes_and_filters_as_table_readers() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path()).unwrap();
    let before = get_memory_usage_stats(Some(&[&db]), None).unwrap();
    for i in 0..10_000u32 {
        db.put(i.to_be_bytes(), b"v").unwrap();
    }
    let after = get_memory_usage_stats(Some(&[&db]), None).unwrap();
    assert!(before.mem_table_total > 0);
    assert!(after.mem_table_total > before.mem_table_total);
    // Segments are mapped files, not heap-held table readers: only their
    // key filters are held.
    assert_eq!(
        after.mem_table_readers_total,
        db.property_int_value("rocksdb.estimate-table-readers-mem")
            .unwrap()
            .unwrap()
    );
}
