//! Interval binning: time series of a long run in memory proportional to its length in intervals.
//!
//! [`IntervalBinner`] sums bytes into fixed intervals [k·w, (k+1)·w) from t = 0 and turns them into
//! throughput (bits ÷ w): seed 000's Figure 2 traces, iperf's per-interval lines (seed 004), and the
//! 1-s series whose CoV is the stability metric.
//!
//! Samples with a negative or non-finite time, or beyond `max_bins` intervals (a guard against a
//! corrupt clock allocating gigabytes), are not binned and are counted in `ignored()`.

use crate::error::MetricsError;

/// The default cap on intervals: ten million (115 days at 1 s, 2.8 h at 1 ms).
pub const DEFAULT_MAX_BINS: usize = 10_000_000;

fn bin_index(t: f64, width: f64, max_bins: usize) -> Option<usize> {
    if !(t >= 0.0 && t.is_finite()) {
        return None;
    }
    // t ≥ 0 here, so truncation is floor (and avoids a libm call on baseline x86-64).
    let k = t / width;
    (k < max_bins as f64).then_some(k as usize)
}

fn check_width(width_s: f64) -> Result<(), MetricsError> {
    if width_s > 0.0 && width_s.is_finite() {
        Ok(())
    } else {
        Err(MetricsError::IntervalWidth(width_s))
    }
}

/// Bytes per fixed interval, for throughput time series.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalBinner {
    width: f64,
    max_bins: usize,
    bytes: Vec<u64>,
    ignored: u64,
}

impl IntervalBinner {
    /// Intervals of `width_s` seconds starting at t = 0.
    pub fn new(width_s: f64) -> Result<Self, MetricsError> {
        check_width(width_s)?;
        Ok(Self {
            width: width_s,
            max_bins: DEFAULT_MAX_BINS,
            bytes: Vec::new(),
            ignored: 0,
        })
    }

    /// Change the cap on the number of intervals.
    pub fn with_max_bins(mut self, max_bins: usize) -> Self {
        self.max_bins = max_bins;
        self
    }

    /// The interval width, in seconds.
    pub fn width_s(&self) -> f64 {
        self.width
    }

    /// Count `bytes` delivered at time `t_s`.
    pub fn add(&mut self, t_s: f64, bytes: u64) {
        match bin_index(t_s, self.width, self.max_bins) {
            Some(k) => {
                if k >= self.bytes.len() {
                    self.bytes.resize(k + 1, 0);
                }
                self.bytes[k] += bytes;
            }
            None => self.ignored += 1,
        }
    }

    /// Samples that could not be binned.
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Bytes of every interval touched so far, including empty ones in between.
    pub fn bytes(&self) -> &[u64] {
        &self.bytes
    }

    /// Throughput (b/s) of each **complete** interval of a run lasting `duration_s`:
    /// intervals ending after `duration_s` are left out, so a partial last interval does not read
    /// low. Each point is (interval start, b/s); intervals with no data read 0.
    pub fn throughput_series(&self, duration_s: f64) -> Vec<(f64, f64)> {
        let complete = if duration_s.is_finite() && duration_s > 0.0 {
            // Tolerate float error: 3 × 0.1 s intervals in a 0.3 s run are 3 complete intervals.
            ((duration_s / self.width) + 1e-9).floor() as usize
        } else {
            0
        };
        (0..complete.min(self.max_bins))
            .map(|k| {
                let b = self.bytes.get(k).copied().unwrap_or(0);
                (k as f64 * self.width, b as f64 * 8.0 / self.width)
            })
            .collect()
    }

    /// Add another binner's bytes (same width), e.g. flows into an aggregate.
    pub fn merge(&mut self, other: &IntervalBinner) -> Result<(), MetricsError> {
        if other.width != self.width {
            return Err(MetricsError::IntervalWidth(other.width));
        }
        if other.bytes.len() > self.bytes.len() {
            self.bytes.resize(other.bytes.len(), 0);
        }
        for (a, b) in self.bytes.iter_mut().zip(&other.bytes) {
            *a += b;
        }
        self.ignored += other.ignored;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_per_interval() {
        let mut b = IntervalBinner::new(1.0).unwrap();
        // 125 MB in second 0 (1 Gb/s), nothing in second 1, 62.5 MB in second 2, and a partial
        // third second that must not appear in a 3-s run.
        b.add(0.2, 100_000_000);
        b.add(0.999, 25_000_000);
        b.add(2.0, 62_500_000);
        b.add(3.5, 1_000);
        let s = b.throughput_series(3.0);
        assert_eq!(s, vec![(0.0, 1e9), (1.0, 0.0), (2.0, 5e8)]);
        assert_eq!(b.bytes().len(), 4);
    }

    #[test]
    fn sub_second_intervals_survive_float_error() {
        let mut b = IntervalBinner::new(0.1).unwrap();
        for i in 0..3 {
            b.add(f64::from(i) * 0.1 + 0.05, 1250);
        }
        let s = b.throughput_series(0.3);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|&(_, bps)| (bps - 100_000.0).abs() < 1e-6));
    }

    #[test]
    fn bad_times_are_counted_not_binned() {
        let mut b = IntervalBinner::new(1.0).unwrap().with_max_bins(10);
        b.add(-1.0, 5);
        b.add(f64::NAN, 5);
        b.add(1e18, 5);
        b.add(9.5, 5);
        assert_eq!(b.ignored(), 3);
        assert_eq!(b.bytes().len(), 10);
        assert!(IntervalBinner::new(0.0).is_err());
        assert!(IntervalBinner::new(f64::NAN).is_err());
    }

    #[test]
    fn merge_sums_flows_into_an_aggregate() {
        let mut a = IntervalBinner::new(1.0).unwrap();
        let mut b = IntervalBinner::new(1.0).unwrap();
        a.add(0.5, 100);
        b.add(0.5, 50);
        b.add(1.5, 25);
        a.merge(&b).unwrap();
        assert_eq!(a.bytes(), &[150, 25]);
        assert!(a.merge(&IntervalBinner::new(2.0).unwrap()).is_err());
    }
}
