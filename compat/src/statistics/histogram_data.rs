//! [`HistogramData`]: a summary of one histogram, and the buckets it is
//! computed from.

/// Upper bounds of the buckets: 1, 2, then ×1.5 each, up to `u64::MAX`.
fn bucket_bounds() -> &'static [u64] {
    static BOUNDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    BOUNDS.get_or_init(|| {
        let mut bounds = vec![1u64, 2];
        let mut next = 3.0f64;
        while next < 1e19 {
            bounds.push(next as u64);
            next *= 1.5;
        }
        bounds.push(u64::MAX);
        bounds
    })
}

/// The raw contents of one histogram.
#[derive(Clone, Debug, Default)]
pub(crate) struct Buckets {
    counts: Vec<u64>,
    count: u64,
    sum: u64,
    sum_squares: f64,
    min: u64,
    max: u64,
}

impl Buckets {
    /// Adds one measurement.
    pub(crate) fn record(&mut self, value: u64) {
        let bounds = bucket_bounds();
        if self.counts.is_empty() {
            self.counts = vec![0; bounds.len()];
            self.min = value;
        }
        let index = bounds.partition_point(|&bound| bound < value);
        self.counts[index.min(bounds.len() - 1)] += 1;
        self.count += 1;
        self.sum = self.sum.saturating_add(value);
        self.sum_squares += (value as f64) * (value as f64);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// The value below which `p` percent of the measurements fall,
    /// interpolated within its bucket and kept within `[min, max]`.
    fn percentile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let bounds = bucket_bounds();
        let threshold = self.count as f64 * p / 100.0;
        let mut below = 0u64;
        for (index, &n) in self.counts.iter().enumerate() {
            if n > 0 && (below + n) as f64 >= threshold {
                let left = if index == 0 { 0 } else { bounds[index - 1] } as f64;
                let right = bounds[index] as f64;
                let into = (threshold - below as f64) / n as f64;
                let value = left + (right - left) * into;
                return value.clamp(self.min as f64, self.max as f64);
            }
            below += n;
        }
        self.max as f64
    }

    /// The summary rocksdb returns.
    pub(crate) fn data(&self) -> HistogramData {
        let count = self.count as f64;
        let average = if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / count
        };
        let variance = if self.count == 0 {
            0.0
        } else {
            (self.sum_squares / count - average * average).max(0.0)
        };
        HistogramData {
            median: self.percentile(50.0),
            p95: self.percentile(95.0),
            p99: self.percentile(99.0),
            average,
            std_dev: variance.sqrt(),
            max: self.max as f64,
            min: self.min as f64,
            sum: self.sum,
            count: self.count,
        }
    }
}

/// A summary of one histogram: percentiles, mean, extremes, count and sum.
/// Time histograms are in microseconds, as in RocksDB.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistogramData {
    median: f64,
    p95: f64,
    p99: f64,
    average: f64,
    std_dev: f64,
    max: f64,
    min: f64,
    sum: u64,
    count: u64,
}

impl HistogramData {
    /// An empty summary.
    pub fn new() -> HistogramData {
        HistogramData::default()
    }

    /// The 50th percentile.
    pub fn median(&self) -> f64 {
        self.median
    }

    /// The mean.
    pub fn average(&self) -> f64 {
        self.average
    }

    /// The 95th percentile.
    pub fn p95(&self) -> f64 {
        self.p95
    }

    /// The 99th percentile.
    pub fn p99(&self) -> f64 {
        self.p99
    }

    /// The largest measurement.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The smallest measurement.
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The sum of all measurements.
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// How many measurements there were.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The standard deviation.
    pub fn std_dev(&self) -> f64 {
        self.std_dev
    }
}

#[cfg(test)]
mod tests {
    use super::Buckets;

    #[test]
    fn summarizes_measurements() {
        let mut buckets = Buckets::default();
        for value in 1..=100 {
            buckets.record(value);
        }
        let data = buckets.data();
        assert_eq!(data.count(), 100);
        assert_eq!(data.sum(), 5050);
        assert_eq!(data.max(), 100.0);
        assert_eq!(data.min(), 1.0);
        assert!((data.average() - 50.5).abs() < 1e-9);
        assert!((40.0..=60.0).contains(&data.median()), "{}", data.median());
        assert!((90.0..=100.0).contains(&data.p95()), "{}", data.p95());
    }

    #[test]
    fn empty_is_all_zero() {
        let data = Buckets::default().data();
        assert_eq!((data.count(), data.max(), data.median()), (0, 0.0, 0.0));
    }
}
