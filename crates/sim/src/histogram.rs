//! A fixed-size log-linear histogram of non-negative integers (nanoseconds), for percentiles of
//! queueing delay over hundreds of millions of samples without storing them.
//!
//! Values are bucketed by their power of two and, within it, by the next `SUB_BITS` bits
//! (the HdrHistogram layout, Gil Tene): relative error below 2^-SUB_BITS = 1/32 ≈ 3 %,
//! values below 32 ns are exact. Recording is a few integer operations and no allocation.

use longhaul_metrics::delay::DelayStats;

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64]>,
    n: u64,
    sum: f64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            n: 0,
            sum: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }
}

fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let top = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = top - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) + sub
}

/// The midpoint of a bucket's value range.
fn value_of(i: usize) -> f64 {
    if i < SUB {
        return i as f64;
    }
    let shift = (i >> SUB_BITS) as u32 - 1;
    let sub = (i & (SUB - 1)) as u64;
    let lo = (SUB as u64 + sub) << shift;
    lo as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.n += 1;
        self.sum += v as f64;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The largest value recorded (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    /// The value at quantile `q` in [0, 1] (bucket midpoint, clamped to the observed range).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(i).clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// The summary's statistics of the recorded nanoseconds less `base_ns`, in milliseconds
    /// (a value below the base counts as 0; an empty histogram reads 0 throughout).
    pub fn stats_ms_above(&self, base_ns: f64) -> DelayStats {
        let ms = |v: f64| (v - base_ns).max(0.0) / 1e6;
        DelayStats {
            count: self.n,
            mean: ms(self.mean()),
            p50: ms(self.quantile(0.5)),
            p95: ms(self.quantile(0.95)),
            p99: ms(self.quantile(0.99)),
            max: ms(self.max as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_below_32_and_within_3_percent_above() {
        let mut h = Histogram::default();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 100);
        assert!((h.mean() - 50_500.0).abs() < 1e-9);
        let p95 = h.quantile(0.95);
        assert!((p95 / 95_000.0 - 1.0).abs() < 0.035, "{p95}");
        let p50 = h.quantile(0.5);
        assert!((p50 / 50_000.0 - 1.0).abs() < 0.035, "{p50}");
        let mut e = Histogram::default();
        e.record(7);
        assert_eq!(e.quantile(0.99), 7.0);
        for v in [0u64, 1, 31, 32, 33, 1 << 40, u64::MAX] {
            assert!(index(v) < BUCKETS);
        }
    }

    #[test]
    fn statistics_above_a_base_in_milliseconds() {
        let mut h = Histogram::default();
        assert_eq!(h.stats_ms_above(0.0).max, 0.0);
        for v in [2_000_000u64, 3_000_000, 10_000_000] {
            h.record(v);
        }
        // Less the 2-ms minimum: 0, 1 and 8 ms (the histogram's 3 % buckets, clamped to max).
        let s = h.stats_ms_above(2e6);
        assert_eq!(s.count, 3);
        assert!((s.mean - 3.0).abs() < 1e-9);
        assert_eq!((s.p99, s.max), (8.0, 8.0));
        assert!((s.p50 - 1.0).abs() < 0.035 * 3.0, "{}", s.p50);
        assert_eq!(h.stats_ms_above(20e6).max, 0.0);
    }
}
