//! Running mean and variance by Welford's method.
//!
//! B. P. Welford, "Note on a method for calculating corrected sums of squares and products",
//! Technometrics 4(3), 1962: on each new value x, with n values seen so far,
//!
//! ```text
//! n += 1;  d = x − mean;  mean += d / n;  m2 += d · (x − mean)
//! ```
//!
//! so that m2 = Σ(xi − mean)² without ever summing squares of large numbers (which loses all
//! precision for, say, RTTs in nanoseconds around 10^8). Two accumulators merge by Chan, Golub and
//! LeVeque's parallel formula ("Updating formulae and a pairwise algorithm for computing sample
//! variances", 1979): with δ = mean_b − mean_a, m2 = m2_a + m2_b + δ²·n_a·n_b/n.

/// Count, mean, variance, minimum and maximum of a stream of values, in O(1) memory.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunningStats {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl RunningStats {
    /// An accumulator that has seen no value.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one value; NaN and infinities are ignored (they carry no measurement).
    pub fn push(&mut self, x: f64) {
        if !x.is_finite() {
            return;
        }
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Combine with another accumulator, as if all its values had been pushed here.
    pub fn merge(&mut self, other: &RunningStats) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *other;
            return;
        }
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        let (na, nb) = (self.n as f64, other.n as f64);
        self.mean += delta * nb / n as f64;
        self.m2 += other.m2 + delta * delta * na * nb / n as f64;
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Values seen.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Mean, `None` before the first value.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Population variance Σ(x − μ)²/n.
    pub fn variance_population(&self) -> Option<f64> {
        (self.n > 0).then(|| self.m2 / self.n as f64)
    }

    /// Sample variance Σ(x − μ)²/(n − 1), `None` with fewer than two values.
    pub fn variance_sample(&self) -> Option<f64> {
        (self.n > 1).then(|| self.m2 / (self.n - 1) as f64)
    }

    /// Population coefficient of variation σ/μ (the definition of [`crate::stability::cov`]).
    pub fn cov(&self) -> Option<f64> {
        let mean = self.mean()?;
        if mean == 0.0 {
            return None;
        }
        Some(self.variance_population()?.sqrt() / mean)
    }

    /// The smallest value seen (`None` before the first).
    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }

    /// The largest value seen (`None` before the first).
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hand_computed_moments() {
        let mut s = RunningStats::new();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            s.push(x);
        }
        // The classic example: mean 5, population σ = 2, sample variance 32/7.
        assert_eq!(s.count(), 8);
        assert_eq!(s.mean(), Some(5.0));
        assert_eq!(s.variance_population(), Some(4.0));
        assert!((s.variance_sample().unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(s.cov(), Some(0.4));
        assert_eq!((s.min(), s.max()), (Some(2.0), Some(9.0)));
    }

    #[test]
    fn stays_accurate_for_large_offsets() {
        // RTTs in ns around 1.8e8 differing by a few µs: naive Σx² would lose the variance.
        let mut s = RunningStats::new();
        for i in 0..1000 {
            s.push(180_000_000.0 + f64::from(i % 10) * 1000.0);
        }
        // Values 0..9 µs repeated: population variance of 0..9 = 8.25 (µs²) = 8.25e6 ns².
        assert!((s.variance_population().unwrap() - 8.25e6).abs() < 1e-3);
        assert!((s.mean().unwrap() - 180_004_500.0).abs() < 1e-6);
    }

    #[test]
    fn merge_equals_pushing_everything() {
        let xs: Vec<f64> = (0..100).map(|i| f64::from(i * i % 37)).collect();
        let mut all = RunningStats::new();
        xs.iter().for_each(|&x| all.push(x));
        let (mut a, mut b) = (RunningStats::new(), RunningStats::new());
        xs[..30].iter().for_each(|&x| a.push(x));
        xs[30..].iter().for_each(|&x| b.push(x));
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert!((a.mean().unwrap() - all.mean().unwrap()).abs() < 1e-12);
        assert!((a.variance_sample().unwrap() - all.variance_sample().unwrap()).abs() < 1e-9);
        assert_eq!(a.min(), all.min());
        assert_eq!(a.max(), all.max());
        let mut empty = RunningStats::new();
        empty.merge(&all);
        assert_eq!(empty, all);
    }

    #[test]
    fn empty_and_non_finite() {
        let mut s = RunningStats::new();
        assert_eq!(s.mean(), None);
        s.push(f64::NAN);
        s.push(f64::INFINITY);
        assert_eq!(s.count(), 0);
        s.push(3.0);
        assert_eq!(s.variance_sample(), None);
        assert_eq!(s.variance_population(), Some(0.0));
    }
}
