//! An estimate with its uncertainty and method, and the order statistics the estimators share.

use serde::Serialize;

/// One measured quantity: its value, an interval around it, what the interval is, how it was
/// measured and from how many samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate, in `unit`.
    pub value: f64,
    /// The interval's lower end, in `unit`.
    pub low: f64,
    /// The interval's upper end, in `unit`.
    pub high: f64,
    /// The unit of `value`, `low` and `high` (`"s"`, `"bit/s"`, `"bytes"`, `"packets"`, `"1"`).
    pub unit: &'static str,
    /// What `[low, high]` is (an interquartile range, a confidence interval, a bracket).
    pub interval: String,
    /// How the value was measured.
    pub method: &'static str,
    /// How many samples (packets, trains, streams, bursts) it rests on.
    pub samples: usize,
}

/// An estimate of exactly `value` (a one-point interval), for tests that build a report.
#[cfg(test)]
pub(crate) fn given(value: f64, unit: &'static str) -> Option<Estimate> {
    Some(Estimate {
        value,
        low: value,
        high: value,
        unit,
        interval: String::new(),
        method: "given",
        samples: 1,
    })
}

/// The `q`-quantile (0 ≤ q ≤ 1) of `sorted` (ascending), interpolated linearly between order
/// statistics; `None` for no samples.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let j = (i + 1).min(sorted.len() - 1);
    let f = pos - i as f64;
    Some(sorted[i] * (1.0 - f) + sorted[j] * f)
}

/// `samples` sorted ascending, with NaNs left out.
pub fn sorted(samples: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = samples.into_iter().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The median of `samples` and their interquartile range, as an [`Estimate`].
pub fn median_iqr(
    samples: impl IntoIterator<Item = f64>,
    unit: &'static str,
    what: &str,
    method: &'static str,
) -> Option<Estimate> {
    let s = sorted(samples);
    Some(Estimate {
        value: quantile(&s, 0.5)?,
        low: quantile(&s, 0.25)?,
        high: quantile(&s, 0.75)?,
        unit,
        interval: format!("interquartile range of {} {what}", s.len()),
        method,
        samples: s.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let s = sorted([4.0, 1.0, 3.0, 2.0, f64::NAN]);
        assert_eq!(s, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(quantile(&s, 0.5), Some(2.5));
        assert_eq!(quantile(&s, 0.25), Some(1.75));
        assert_eq!(quantile(&s, 0.0), Some(1.0));
        assert_eq!(quantile(&s, 1.0), Some(4.0));
        assert_eq!(quantile(&[], 0.5), None);
        let e = median_iqr([1.0, 2.0, 3.0, 4.0, 5.0], "s", "samples", "m").unwrap();
        assert_eq!((e.low, e.value, e.high, e.samples), (2.0, 3.0, 4.0, 5));
    }
}
