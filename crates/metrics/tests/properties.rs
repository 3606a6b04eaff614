//! Properties of the definitions that must hold for any input.

use longhaul_metrics::fairness::jain_index;
use longhaul_metrics::online::RunningStats;
use longhaul_metrics::percentile::percentile;
use longhaul_metrics::stability::{cov, cov_sample};
use longhaul_metrics::throughput::utilization;
use proptest::prelude::*;

proptest! {
    /// 1/n ≤ J ≤ 1 for non-negative throughputs with at least one positive.
    #[test]
    fn jain_is_between_one_over_n_and_one(xs in prop::collection::vec(0.0f64..1e10, 1..50)) {
        prop_assume!(xs.iter().any(|&x| x > 0.0));
        let j = jain_index(&xs).unwrap();
        let n = xs.len() as f64;
        prop_assert!(j >= 1.0 / n - 1e-12 && j <= 1.0 + 1e-12, "{j}");
    }

    /// Percentiles are monotone in p and lie between the minimum and maximum.
    #[test]
    fn percentiles_are_monotone(xs in prop::collection::vec(-1e6f64..1e6, 1..200),
                                p in 0.0f64..100.0, q in 0.0f64..100.0) {
        let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
        let a = percentile(&xs, lo).unwrap();
        let b = percentile(&xs, hi).unwrap();
        prop_assert!(a <= b);
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(a >= min && b <= max);
        prop_assert!(xs.contains(&a), "nearest rank returns a measured value");
    }

    /// Welford's streaming CoV equals the two-pass definition, and the sample form exceeds the
    /// population form by exactly √(n/(n−1)).
    #[test]
    fn streaming_cov_matches_two_pass(xs in prop::collection::vec(1.0f64..1e10, 2..100)) {
        let mut s = RunningStats::new();
        xs.iter().for_each(|&x| s.push(x));
        let two_pass = cov(&xs).unwrap();
        prop_assert!((s.cov().unwrap() - two_pass).abs() <= 1e-9 * two_pass.max(1.0));
        let n = xs.len() as f64;
        let ratio = (n / (n - 1.0)).sqrt();
        prop_assert!((cov_sample(&xs).unwrap() - two_pass * ratio).abs() <= 1e-9 * two_pass.max(1e-3));
    }

    /// Utilization scales linearly with throughput and never exceeds line-rate/payload ratio.
    #[test]
    fn utilization_is_linear(t in 0.0f64..1e11, c in 1e6f64..1e12, mtu in 41u32..9001) {
        let u = utilization(t, c, mtu);
        let u2 = utilization(2.0 * t, c, mtu);
        prop_assert!((u2 - 2.0 * u).abs() <= 1e-9 * u.max(1.0));
        // Throughput equal to the line rate reads mtu/(mtu − 40) of the payload capacity.
        let full = utilization(c, c, mtu);
        prop_assert!((full - f64::from(mtu) / f64::from(mtu - 40)).abs() < 1e-9);
    }
}
