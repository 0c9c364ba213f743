//! Statistics, as rocksdb's `statistics` module: the collection level, the
//! [`Ticker`] and [`Histogram`] names of RocksDB, and [`HistogramData`].
//!
//! [`crate::Options::enable_statistics`] gives the options a collector that
//! every database opened with them (or a clone of them) counts into, as
//! RocksDB's shared `Statistics` object does. AlexDB fills the tickers and
//! histograms it has a real counter for (see `collector.rs`); every other
//! one stays 0.

#[macro_use]
mod named_enum;
mod collector;
mod histogram;
mod histogram_data;
mod ticker;

pub(crate) use self::collector::Statistics;
pub use self::histogram::Histogram;
pub use self::histogram_data::HistogramData;
pub use self::named_enum::NameParseError;
pub use self::ticker::Ticker;

/// How much statistics collection costs, from nothing to everything.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(u8)]
pub enum StatsLevel {
    /// Collect nothing.
    DisableAll = 0,
    /// Skip histograms and timers.
    ExceptHistogramOrTimers = 2,
    /// Skip timers.
    ExceptTimers,
    /// Skip timers of mutex waits and compression.
    ExceptDetailedTimers,
    /// Skip the timers that read the clock under a mutex.
    ExceptTimeForMutex,
    /// Collect everything.
    All,
}

#[cfg(test)]
mod tests {
    use super::{Histogram, Ticker};

    #[test]
    fn names_are_rocksdbs() {
        assert_eq!(Histogram::AsyncReadBytes.name(), "rocksdb.async.read.bytes");
        assert_eq!(
            Ticker::BlockCacheIndexMiss.to_string(),
            "rocksdb.block.cache.index.miss"
        );
        assert_eq!(Ticker::iter().count(), 263);
        assert_eq!(Histogram::iter().count(), 62);
        assert_eq!(
            "rocksdb.bytes.written".parse::<Ticker>().ok(),
            Some(Ticker::BytesWritten)
        );
        assert!("rocksdb.no.such.thing".parse::<Ticker>().is_err());
    }
}
