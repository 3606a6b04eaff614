//! One sender's runs over several seeds of a random process (the cross traffic's arrivals), and
//! the test that says whether one sender loses more than another beyond the spread between
//! seeds.
//!
//! Each simulator run is deterministic, but its seed is one sample of the cross traffic: where
//! bursts overflow a buffer now and then, a sender's drop count over one run varies between
//! seeds by as much as its mean. A comparison of two senders on one seed is then a coin flip,
//! so the experiments that compare losses run each sender on the same seeds and compare means.
//! "A loses more than B" means A's mean loss exceeds B's by more than [`Z_ONE_SIDED`] standard
//! errors of the difference (each mean's standard error is its seeds' sample standard deviation
//! over √n): a one-sided test at the 5 % level under the normal approximation. With one seed,
//! or with seeds that all agree (no loss at all), the error is zero and the test is the plain
//! inequality. Means and variances are the metrics crate's running statistics.

use longhaul_metrics::online::RunningStats;

/// A loss exceeds another when the difference of means is above this many standard errors of
/// the difference: the one-sided 5 % point of the normal distribution.
pub const Z_ONE_SIDED: f64 = 1.645;

/// One sender's (throughput b/s, loss fraction) on each seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Repeats {
    /// (throughput b/s, loss fraction) of each seed's run.
    pub runs: Vec<(f64, f64)>,
}

impl Repeats {
    /// Mean throughput over the seeds, b/s (NaN without runs).
    pub fn throughput(&self) -> f64 {
        stats(self.runs.iter().map(|r| r.0))
            .mean()
            .unwrap_or(f64::NAN)
    }

    /// Mean loss fraction over the seeds (NaN without runs).
    pub fn loss(&self) -> f64 {
        stats(self.runs.iter().map(|r| r.1))
            .mean()
            .unwrap_or(f64::NAN)
    }

    /// Standard error of [`Repeats::loss`]: the sample standard deviation over the seeds over
    /// √n (0 with fewer than two).
    pub fn loss_error(&self) -> f64 {
        let s = stats(self.runs.iter().map(|r| r.1));
        s.variance_sample()
            .map_or(0.0, |var| (var / s.count() as f64).sqrt())
    }

    /// How far above `other`'s mean loss this one may lie and still not be more: [`Z_ONE_SIDED`]
    /// standard errors of the difference.
    pub fn loss_margin(&self, other: &Repeats) -> f64 {
        Z_ONE_SIDED * self.loss_error().hypot(other.loss_error())
    }

    /// True if this sender loses more than `other` beyond the error of the difference.
    pub fn loses_more_than(&self, other: &Repeats) -> bool {
        self.loss() - other.loss() > self.loss_margin(other)
    }
}

fn stats(values: impl Iterator<Item = f64>) -> RunningStats {
    let mut s = RunningStats::new();
    values.for_each(|v| s.push(v));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(losses: &[f64]) -> Repeats {
        Repeats {
            runs: losses.iter().map(|&l| (70e6, l)).collect(),
        }
    }

    #[test]
    fn more_loss_within_the_spread_between_seeds_is_not_more() {
        // A shallow buffer's spread: means 1.2e-3 and 1.0e-3, standard errors 0.39e-3 and
        // 0.28e-3; the difference is far inside 1.645 errors.
        let a = runs(&[0.3e-3, 0.2e-3, 1.7e-3, 2.1e-3, 1.7e-3]);
        let b = runs(&[0.5e-3, 1.4e-3, 0.4e-3, 0.8e-3, 1.9e-3]);
        assert!((a.loss() - 1.2e-3).abs() < 1e-12);
        assert!(
            (a.loss_error() - 0.39497e-3).abs() < 1e-8,
            "{}",
            a.loss_error()
        );
        assert!(!a.loses_more_than(&b));
        // Tight spreads: the same difference of means is a difference.
        let tight_a = runs(&[1.19e-3, 1.2e-3, 1.21e-3, 1.2e-3, 1.2e-3]);
        let tight_b = runs(&[0.99e-3, 1.0e-3, 1.01e-3, 1.0e-3, 1.0e-3]);
        assert!(tight_a.loses_more_than(&tight_b));
        assert!(!tight_b.loses_more_than(&tight_a));
        // One seed, or seeds that agree: the plain inequality.
        assert!(runs(&[1.01e-4]).loses_more_than(&runs(&[1e-4])));
        assert!(!runs(&[0.0, 0.0]).loses_more_than(&runs(&[0.0, 0.0])));
        assert!(runs(&[1e-6, 1e-6]).loses_more_than(&runs(&[0.0, 0.0])));
    }

    #[test]
    fn means_of_nothing_are_not_numbers() {
        let none = Repeats::default();
        assert!(none.throughput().is_nan() && none.loss().is_nan());
        assert_eq!(none.loss_error(), 0.0);
    }
}
