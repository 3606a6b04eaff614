//! Percentiles by the nearest-rank method.
//!
//! The p-th percentile (0 < p ≤ 100) of N values is the value of rank ⌈p/100 · N⌉ (1-based) in
//! ascending order; p = 0 gives the smallest value. Nearest-rank always returns one of the measured
//! values (never an interpolation between two), so "p99 queueing delay = 12.4 ms" means some packet
//! really waited 12.4 ms, and the streaming histogram ([`crate::online::LogHistogram`]) can apply the
//! same rank rule to its bucket counts. Pantheon reports its 95th-percentile delay the same way
//! (`np.percentile(..., interpolation='nearest')`), though numpy ranks by round((N−1)·q) and so can
//! differ by one rank on small samples.
//!
//! NaN values are ignored; an empty input (or one with only NaN) has no percentile.

/// The 1-based nearest rank of percentile `p` among `n` values, `1..=n`; `n` must be positive.
pub fn nearest_rank(p: f64, n: u64) -> u64 {
    debug_assert!(n > 0);
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    // Multiply before dividing so exact ranks stay exact (95 × 20 / 100 = 19, not 19.000000000000004).
    let rank = (p * n as f64 / 100.0).ceil() as u64;
    rank.clamp(1, n)
}

/// Nearest-rank percentile `p` (0–100) of `values` (any order). `None` if there is no finite value.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

/// Nearest-rank percentile of values already sorted ascending (no NaN).
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = nearest_rank(p, sorted.len() as u64);
    Some(sorted[(rank - 1) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_nearest_rank_example() {
        // The classic example: 15, 20, 35, 40, 50.
        let v = [40.0, 15.0, 50.0, 35.0, 20.0];
        assert_eq!(percentile(&v, 5.0), Some(15.0)); // rank ⌈0.25⌉ = 1
        assert_eq!(percentile(&v, 30.0), Some(20.0)); // rank ⌈1.5⌉ = 2
        assert_eq!(percentile(&v, 40.0), Some(20.0)); // rank 2 exactly
        assert_eq!(percentile(&v, 50.0), Some(35.0)); // rank ⌈2.5⌉ = 3
        assert_eq!(percentile(&v, 100.0), Some(50.0));
        assert_eq!(percentile(&v, 0.0), Some(15.0));
    }

    #[test]
    fn p95_and_p99_of_one_to_hundred() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 95.0), Some(95.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 99.5), Some(100.0));
        // 20 values: p95 is rank 19 exactly, not 20.
        assert_eq!(nearest_rank(95.0, 20), 19);
        assert_eq!(nearest_rank(95.0, 21), 20); // 19.95 → 20
    }

    #[test]
    fn empty_nan_and_out_of_range() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[f64::NAN], 50.0), None);
        assert_eq!(percentile(&[f64::NAN, 3.0, 1.0], 100.0), Some(3.0));
        assert_eq!(percentile(&[1.0, 2.0], 250.0), Some(2.0));
        assert_eq!(percentile(&[1.0, 2.0], -3.0), Some(1.0));
    }
}
