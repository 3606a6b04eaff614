//! Delay: the minimum RTT, and queueing delay = RTT − minimum RTT.
//!
//! Seed 000's Table 1 reports "delay" as the minimum round-trip time: the propagation delay of the
//! path, the baseRTT FAST itself estimates. Whatever a packet's RTT has on top of that minimum was
//! spent in queues, so the queueing delay of an RTT sample is RTT − min RTT, where min RTT is the
//! smallest sample of the same flow over the whole run (docs/measurements.md). We summarise it by the mean and
//! by nearest-rank percentiles ([`crate::percentile`]): p50, p95, p99.
//!
//! This module keeps every sample and is exact; long runs use [`crate::online::DelayAccumulator`],
//! which keeps a running minimum and a log histogram instead.

use crate::percentile::percentile_sorted;
use serde::{Deserialize, Serialize};

/// Summary statistics of a set of delays, in the unit they were given in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DelayStats {
    /// Number of finite values summarised.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 95th percentile (nearest rank).
    pub p95: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl DelayStats {
    /// Mean and nearest-rank percentiles of `values` (NaN ignored). `None` without a finite value.
    pub fn of(values: &[f64]) -> Option<DelayStats> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        Some(DelayStats {
            count: sorted.len() as u64,
            mean,
            p50: percentile_sorted(&sorted, 50.0)?,
            p95: percentile_sorted(&sorted, 95.0)?,
            p99: percentile_sorted(&sorted, 99.0)?,
            max: *sorted.last()?,
        })
    }
}

/// The minimum of the finite RTT samples: seed 000's "delay" column. `None` if there is none.
pub fn min_rtt(rtts: &[f64]) -> Option<f64> {
    rtts.iter()
        .copied()
        .filter(|v| v.is_finite())
        .reduce(f64::min)
}

/// Queueing delay of each RTT sample: RTT − min RTT of the same samples.
pub fn queueing_delays(rtts: &[f64]) -> Vec<f64> {
    match min_rtt(rtts) {
        Some(base) => rtts
            .iter()
            .filter(|v| v.is_finite())
            .map(|r| r - base)
            .collect(),
        None => Vec::new(),
    }
}

/// Queueing-delay statistics of a flow's RTT samples (RTT − min RTT; mean, p50, p95, p99).
pub fn queueing_delay_stats(rtts: &[f64]) -> Option<DelayStats> {
    DelayStats::of(&queueing_delays(rtts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queueing_delay_subtracts_the_minimum_rtt() {
        // An 85 ms path (seed 000's 7–10 flow rows) with samples up to 95 ms, in ms.
        let rtts = [90.0, 85.0, 87.0, 95.0, 86.0];
        assert_eq!(min_rtt(&rtts), Some(85.0));
        assert_eq!(queueing_delays(&rtts), vec![5.0, 0.0, 2.0, 10.0, 1.0]);
        let s = queueing_delay_stats(&rtts).unwrap();
        assert_eq!(s.count, 5);
        assert!((s.mean - 3.6).abs() < 1e-12); // (5+0+2+10+1)/5
        assert_eq!(s.p50, 2.0); // rank 3 of 0,1,2,5,10
        assert_eq!(s.p95, 10.0); // rank ⌈4.75⌉ = 5
        assert_eq!(s.p99, 10.0);
        assert_eq!(s.max, 10.0);
    }

    #[test]
    fn hundred_samples_percentiles() {
        // RTTs 100.0..=199.0 ms: queueing delays 0..=99 ms.
        let rtts: Vec<f64> = (0..100).map(|i| 100.0 + f64::from(i)).collect();
        let s = queueing_delay_stats(&rtts).unwrap();
        assert!((s.mean - 49.5).abs() < 1e-12);
        assert_eq!(s.p50, 49.0); // rank 50
        assert_eq!(s.p95, 94.0); // rank 95
        assert_eq!(s.p99, 98.0); // rank 99
    }

    #[test]
    fn no_samples_no_statistics() {
        assert_eq!(queueing_delay_stats(&[]), None);
        assert_eq!(min_rtt(&[f64::NAN]), None);
        assert!(queueing_delays(&[f64::NAN]).is_empty());
    }
}
