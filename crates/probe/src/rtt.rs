//! The base round-trip time and its jitter, from echoed pings timed on the sender's clock.
//!
//! A ping that meets no queue takes the path's propagation and serialization time; any queue on
//! the way adds to that, never subtracts. The smallest of many samples is therefore the base
//! RTT, and the interval given with it runs from that minimum to the 10th percentile: how far
//! the floor is from the typical quiet sample. The jitter is the mean absolute difference of
//! consecutive samples (RFC 3550, §6.4.1, without the 1/16 smoothing), with the interquartile
//! range of those differences.

use crate::estimate::{quantile, sorted, Estimate};

/// The base RTT and the jitter of `samples` (seconds, in the order measured); `None` for fewer
/// than two samples.
pub fn rtt(samples: &[f64]) -> Option<(Estimate, Estimate)> {
    if samples.len() < 2 {
        return None;
    }
    let s = sorted(samples.iter().copied());
    let base = Estimate {
        value: s[0],
        low: s[0],
        high: quantile(&s, 0.1)?,
        unit: "s",
        interval: format!("minimum to 10th percentile of {} pings", s.len()),
        method: "minimum of echoed pings",
        samples: s.len(),
    };
    let diffs = sorted(samples.windows(2).map(|w| (w[1] - w[0]).abs()));
    let jitter = Estimate {
        value: diffs.iter().sum::<f64>() / diffs.len() as f64,
        low: quantile(&diffs, 0.25)?,
        high: quantile(&diffs, 0.75)?,
        unit: "s",
        interval: format!("interquartile range of {} differences", diffs.len()),
        method: "mean absolute difference of consecutive RTTs (RFC 3550)",
        samples: diffs.len(),
    };
    Some((base, jitter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_minimum_and_jitter_the_mean_step() {
        // A 40 ms path whose pings meet 0-3 ms of queue.
        let samples = [0.041, 0.040, 0.043, 0.040, 0.042, 0.0405];
        let (base, jitter) = rtt(&samples).unwrap();
        assert_eq!(base.value, 0.040);
        assert!(base.high >= base.value && base.high < 0.041);
        // |Δ| = 1, 3, 3, 2, 1.5 ms: mean 2.1 ms.
        assert!((jitter.value - 0.0021).abs() < 1e-9, "{jitter:?}");
        assert_eq!(jitter.samples, 5);
        assert!(rtt(&[0.04]).is_none());
    }
}
