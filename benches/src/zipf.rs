//! A Zipfian rank generator (Gray et al., "Quickly generating billion-record
//! synthetic databases", SIGMOD 1994 — the generator YCSB uses).

use crate::rng::Xorshift;

/// Draws ranks in `0..n`, rank `r` with probability proportional to
/// `1 / (r + 1)^theta`: rank 0 is the hottest.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipf {
    /// A generator over `n ≥ 1` items with skew `theta` (0 < theta < 1;
    /// YCSB uses 0.99). Setup is O(n).
    pub fn new(n: u64, theta: f64) -> Self {
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2.min(n), theta);
        let n_f = n as f64;
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n_f).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipf {
            n: n_f,
            theta,
            alpha,
            zetan,
            eta,
        }
    }

    /// The next rank.
    pub fn sample(&self, rng: &mut Xorshift) -> u64 {
        let u = rng.unit();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n as u64 - 1);
        }
        let rank = (self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n as u64 - 1)
    }
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_ranks_dominate() {
        let zipf = Zipf::new(10_000, 0.99);
        let mut rng = Xorshift::new(7);
        let draws = 100_000;
        let mut hot = 0;
        for _ in 0..draws {
            let r = zipf.sample(&mut rng);
            assert!(r < 10_000);
            if r < 100 {
                hot += 1;
            }
        }
        // With theta 0.99 the top 1% of 10K items draws about half the accesses.
        assert!(hot > draws * 4 / 10 && hot < draws * 7 / 10, "hot = {hot}");
    }
}
