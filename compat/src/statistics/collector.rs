//! [`Statistics`]: the counters a database opened with statistics enabled
//! counts into, and RocksDB's text report of them.
//!
//! What AlexDB counts: `rocksdb.number.keys.written`, `rocksdb.bytes.written`
//! and `rocksdb.db.write.micros` for every write batch (a single put is a
//! batch of one), `rocksdb.wal.synced` for synced ones;
//! `rocksdb.number.keys.read`, `rocksdb.bytes.read` and
//! `rocksdb.db.get.micros` for point reads; `rocksdb.number.db.seek`,
//! `.next`, `.prev`, their `.found` forms and `rocksdb.db.iter.bytes.read`
//! for iterators.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::histogram_data::{Buckets, HistogramData};
use super::{Histogram, Ticker};

/// Every ticker and histogram of one statistics object.
#[derive(Debug)]
pub(crate) struct Statistics {
    tickers: Vec<AtomicU64>,
    histograms: Vec<Mutex<Buckets>>,
}

impl Default for Statistics {
    fn default() -> Self {
        Self {
            tickers: (0..Ticker::COUNT).map(|_| AtomicU64::new(0)).collect(),
            histograms: (0..Histogram::COUNT)
                .map(|_| Mutex::new(Buckets::default()))
                .collect(),
        }
    }
}

impl Statistics {
    /// Adds `n` to `ticker`.
    pub(crate) fn add(&self, ticker: Ticker, n: u64) {
        self.tickers[ticker as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The count of `ticker`.
    pub(crate) fn ticker(&self, ticker: Ticker) -> u64 {
        self.tickers[ticker as usize].load(Ordering::Relaxed)
    }

    /// Records `value` in `histogram`.
    pub(crate) fn record(&self, histogram: Histogram, value: u64) {
        self.histograms[histogram as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(value);
    }

    /// Records a duration in `histogram`, in microseconds rounded up (a
    /// nonzero duration never records as 0).
    pub(crate) fn record_micros(&self, histogram: Histogram, elapsed: Duration) {
        let micros = elapsed.as_nanos().div_ceil(1000);
        self.record(histogram, u64::try_from(micros).unwrap_or(u64::MAX));
    }

    /// The summary of `histogram`.
    pub(crate) fn histogram(&self, histogram: Histogram) -> HistogramData {
        self.histograms[histogram as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .data()
    }

    /// RocksDB's `Statistics::ToString()` text: one line per ticker, then
    /// one per histogram.
    pub(crate) fn report(&self) -> String {
        let mut text = String::new();
        for ticker in Ticker::iter() {
            let _ = writeln!(text, "{} COUNT : {}", ticker.name(), self.ticker(*ticker));
        }
        for histogram in Histogram::iter() {
            let d = self.histogram(*histogram);
            let _ = writeln!(
                text,
                "{} P50 : {:.6} P95 : {:.6} P99 : {:.6} P100 : {:.6} COUNT : {} SUM : {}",
                histogram.name(),
                d.median(),
                d.p95(),
                d.p99(),
                d.max(),
                d.count(),
                d.sum()
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::Statistics;
    use crate::statistics::{Histogram, Ticker};

    #[test]
    fn report_has_rocksdbs_lines() {
        let stats = Statistics::default();
        stats.add(Ticker::BytesWritten, 42);
        stats.record(Histogram::DbWrite, 7);
        let text = stats.report();
        assert!(text.starts_with("rocksdb.block.cache.miss COUNT : 0\n"));
        assert!(text.contains("\nrocksdb.bytes.written COUNT : 42\n"));
        assert!(text.contains(
            "\nrocksdb.db.write.micros P50 : 7.000000 P95 : 7.000000 P99 : 7.000000 \
             P100 : 7.000000 COUNT : 1 SUM : 7\n"
        ));
        assert_eq!(text.lines().count(), 263 + 62);
    }
}
