//! Streaming queueing-delay statistics of one flow (or one queue).
//!
//! Queueing delay is RTT − min RTT with the minimum over the whole run (crate::delay), which is not
//! known until the run ends. Subtracting a constant keeps ranks, so the accumulator stores RTTs
//! themselves — in a [`LogHistogram`] in nanoseconds, with their exact minimum and a Welford mean —
//! and subtracts the final minimum when asked:
//!
//! * mean queueing delay = mean RTT − min RTT: exact;
//! * p-th percentile = RTT_p − min RTT: the histogram's relative error applies to RTT_p, so the
//!   absolute error is at most RTT_p / 2^(precision+1) — 88 µs on a 180 ms path at the default
//!   precision of 10 bits, 5 µs below 10 ms of RTT.
//!
//! The same accumulator serves a link's queue delay (sojourn time), whose minimum is zero.

use super::histogram::LogHistogram;
use super::welford::RunningStats;
use crate::delay::DelayStats;

/// Default histogram precision: a relative error of 1/2048 ≈ 0.049 %.
pub const DEFAULT_PRECISION_BITS: u32 = 10;

/// RTT samples of a flow reduced to min, mean and a log histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayAccumulator {
    hist: LogHistogram,
    stats: RunningStats,
    /// Every sample, when asked for ([`DelayAccumulator::keep_samples`]): what a reference
    /// computation checks the histogram against.
    samples: Option<Vec<u64>>,
}

impl Default for DelayAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl DelayAccumulator {
    /// An empty accumulator at the default precision of 10 bits.
    pub fn new() -> Self {
        Self {
            hist: LogHistogram::new(DEFAULT_PRECISION_BITS).expect("default precision is valid"),
            stats: RunningStats::new(),
            samples: None,
        }
    }

    /// An accumulator with another histogram precision: fewer bits for runs with thousands of
    /// flows (7 bits: 0.39 % of the RTT, about 19 KiB per flow at 180 ms), more for short RTTs.
    pub fn with_precision(bits: u32) -> Result<Self, crate::error::MetricsError> {
        Ok(Self {
            hist: LogHistogram::new(bits)?,
            stats: RunningStats::new(),
            samples: None,
        })
    }

    /// Bytes of histogram counters held.
    pub fn memory_bytes(&self) -> usize {
        self.hist.memory_bytes()
    }

    /// Also keep every sample from now on (memory grows with the samples: for checking the
    /// statistics against an exact computation, not for long runs).
    pub fn keep_samples(&mut self) {
        self.samples.get_or_insert_with(Vec::new);
    }

    /// Every sample recorded since [`DelayAccumulator::keep_samples`], in order.
    pub fn samples(&self) -> Option<&[u64]> {
        self.samples.as_deref()
    }

    /// Record one RTT (or sojourn time) in nanoseconds.
    pub fn record_ns(&mut self, rtt_ns: u64) {
        self.hist.record(rtt_ns);
        self.stats.push(rtt_ns as f64);
        if let Some(s) = &mut self.samples {
            s.push(rtt_ns);
        }
    }

    /// Record one RTT in seconds (negative or non-finite samples are ignored).
    pub fn record_s(&mut self, rtt_s: f64) {
        if rtt_s >= 0.0 && rtt_s.is_finite() {
            self.record_ns((rtt_s * 1e9).round() as u64);
        }
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.hist.count()
    }

    /// Minimum RTT in nanoseconds (exact).
    pub fn min_ns(&self) -> Option<u64> {
        self.hist.min()
    }

    /// Statistics of the raw samples (RTT), in milliseconds.
    pub fn rtt_stats_ms(&self) -> Option<DelayStats> {
        self.stats_ms(0)
    }

    /// Queueing delay (RTT − min RTT) statistics in milliseconds.
    pub fn queueing_stats_ms(&self) -> Option<DelayStats> {
        self.stats_ms(self.hist.min()?)
    }

    /// Add another accumulator's samples (e.g. per-thread partial results); both must have the
    /// same precision.
    pub fn merge(&mut self, other: &DelayAccumulator) -> Result<(), crate::error::MetricsError> {
        self.hist.merge(&other.hist)?;
        self.stats.merge(&other.stats);
        Ok(())
    }

    fn stats_ms(&self, base_ns: u64) -> Option<DelayStats> {
        let to_ms = |ns: u64| ns.saturating_sub(base_ns) as f64 / 1e6;
        Some(DelayStats {
            count: self.hist.count(),
            mean: (self.stats.mean()? - base_ns as f64).max(0.0) / 1e6,
            p50: to_ms(self.hist.percentile(50.0)?),
            p95: to_ms(self.hist.percentile(95.0)?),
            p99: to_ms(self.hist.percentile(99.0)?),
            max: to_ms(self.hist.max()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delay::queueing_delay_stats;

    #[test]
    fn matches_the_exact_computation_within_the_stated_bound() {
        // 180 ms path; queueing 0..=99 ms in 1 ms steps, each 10 times; RTT in ms for the exact one.
        let mut acc = DelayAccumulator::new();
        let mut rtts_ms = Vec::new();
        for rep in 0..10 {
            for q in 0..100u64 {
                let ns = 180_000_000 + q * 1_000_000 + rep;
                acc.record_ns(ns);
                rtts_ms.push(ns as f64 / 1e6);
            }
        }
        let exact = queueing_delay_stats(&rtts_ms).unwrap();
        let approx = acc.queueing_stats_ms().unwrap();
        assert_eq!(approx.count, 1000);
        assert!((approx.mean - exact.mean).abs() < 1e-9);
        assert!((exact.p95 - 94.0).abs() < 1e-5); // rank 950 → q = 94 ms
                                                  // Bound: RTT_p / 2^11 ≈ 274 ms / 2048 = 0.134 ms.
        for (a, e) in [
            (approx.p50, exact.p50),
            (approx.p95, exact.p95),
            (approx.p99, exact.p99),
        ] {
            let bound = (e + 180.0) / 2048.0;
            assert!((a - e).abs() <= bound, "{a} vs {e} (bound {bound})");
        }
        assert!((approx.max - exact.max).abs() < 1e-9); // max is exact
        assert_eq!(acc.min_ns(), Some(180_000_000));
    }

    #[test]
    fn seconds_input_and_merge() {
        let mut a = DelayAccumulator::new();
        let mut b = DelayAccumulator::new();
        a.record_s(0.085);
        a.record_s(-1.0);
        a.record_s(f64::NAN);
        b.record_s(0.095);
        a.merge(&b).unwrap();
        assert!(a
            .merge(&DelayAccumulator::with_precision(7).unwrap())
            .is_err());
        let q = a.queueing_stats_ms().unwrap();
        assert_eq!(q.count, 2);
        assert!((q.mean - 5.0).abs() < 1e-9);
        assert!((q.max - 10.0).abs() < 1e-9);
        let r = a.rtt_stats_ms().unwrap();
        assert!((r.mean - 90.0).abs() < 1e-9);
        assert_eq!(DelayAccumulator::new().queueing_stats_ms(), None);
    }

    #[test]
    fn lower_precision_uses_less_memory_within_its_bound() {
        let mut d = DelayAccumulator::with_precision(7).unwrap();
        for q in 0..1000u64 {
            d.record_ns(180_000_000 + q * 40_000); // 180–220 ms
        }
        // (27 − 7 + 2) · 128 counters of 8 bytes = 22 KiB at most.
        assert!(d.memory_bytes() <= 22 * 128 * 8, "{}", d.memory_bytes());
        let p95 = d.queueing_stats_ms().unwrap().p95;
        // Exact: rank 950 → q = 949 × 0.04 = 37.96 ms; bound 218 ms / 256 = 0.85 ms.
        assert!((p95 - 37.96).abs() <= 218.0 / 256.0, "{p95}");
    }
}
